"""Validation of a whole import document before anything is written: its shape, every field's
value, stable ids and references, the unit rule, and the reviews it recommends."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models

from common.numbers import is_number_field, refuse_other_digits
from common.text import name_canonical, name_lookalike_error, text_canonical, text_canonical_or_same
from records.fields import ExactDecimalField
from records.imports.document import (
    DOCUMENT_KEYS,
    FORMAT_NAME,
    FORMAT_VERSION,
    METRIC_KEYS,
    NESTED,
    SECTION_BY_KEY,
    SECTIONS,
    Entry,
    ImportInvalid,
    Section,
    entry_targets,
    referenced_ids,
)
from records.models import Evaluation, IdentityBasis, Protocol
from records.rules import unit_problem
from records.rules.units import scale_read


def parse_document(document: Any) -> list[Entry]:
    """The document's entries in dependency order, or ImportInvalid listing every problem found."""
    entries, errors = document_entries(document)
    if errors:
        raise ImportInvalid(errors)
    return entries


def envelope_errors(document: dict) -> list[dict[str, str]]:
    """What is wrong with the document's outside (its format and version, a section it does not
    know): checked before an import is queued as a job, and again with everything else."""
    errors = []
    if document.get("format") != FORMAT_NAME or document.get("version") != FORMAT_VERSION:
        errors.append({"path": "format", "message": f"must be format {FORMAT_NAME!r} version {FORMAT_VERSION}"})
    known = DOCUMENT_KEYS | set(SECTION_BY_KEY) - {"baseline_roles", "results"}
    for key in sorted(set(document) - known):
        errors.append({"path": key, "message": "unknown section"})
    return errors


def document_entries(document: Any) -> tuple[list[Entry], list[dict[str, str]]]:
    """The document's entries in dependency order and every problem its checks find, each named by
    its path (the entries are there, as far as they could be read, even when there are problems)."""
    if not isinstance(document, dict):
        raise ImportInvalid([{"path": "document", "message": "must be a JSON object"}])
    errors = envelope_errors(document)
    notes = document.get("notes", [])
    if not isinstance(notes, list) or not all(isinstance(note, str) for note in notes):
        errors.append({"path": "notes", "message": "must be a list of texts"})
    raw: list[tuple[Section, str, dict, dict[str, str]]] = []
    for section in SECTIONS:
        items = document.get(section.key, [])
        if section.key in {"baseline_roles", "results"}:
            continue
        if not isinstance(items, list):
            errors.append({"path": section.key, "message": "must be a list"})
            continue
        for index, item in enumerate(items):
            _collect(section=section, item=item, path=f"{section.key}[{index}]", parent={}, raw=raw, errors=errors)
    entries = [_clean(section, path, item, parent, errors) for section, path, item, parent in _ordered(raw)]
    _check_identity(entries, errors)
    _check_units(entries, errors)
    review_plan(document, entries=entries, errors=errors)
    return entries, errors


# What a document may recommend: an exclusion with its reason. Bringing a record back (reinstate)
# is a curator's decision on the portal, never a document's.
RECOMMENDED_REVIEWS = ("exclude",)


@dataclass(frozen=True)
class PlannedReview:
    section: str
    stable_id: str
    transition: str
    reason: str


def review_plan(
    document: dict, *, entries: list[Entry] | None = None, errors: list | None = None
) -> list[PlannedReview]:
    """The document's `reviews`: [{"record": "evaluations/<id>", "action": "exclude", "reason": "..."}].

    An import validates them (each names a reviewable record of the document, the action is an
    exclusion, with its reason) but never applies them: new records are proposed.
    """
    from reviews.models import Reviewable
    from reviews.transitions import TRANSITIONS

    errors = [] if errors is None else errors
    items = document.get("reviews", [])
    if not isinstance(items, list):
        errors.append({"path": "reviews", "message": "must be a list"})
        return []
    in_document = {(entry.section.key, entry.stable_id) for entry in entries or []}
    plan = []
    for index, item in enumerate(items):
        path = f"reviews[{index}]"
        if not isinstance(item, dict) or set(item) - {"record", "action", "reason"}:
            errors.append({"path": path, "message": "must be an object with record, action and reason"})
            continue
        section, _, stable_id = str(item.get("record", "")).partition("/")
        action = item.get("action")
        spec = TRANSITIONS.get(action) if action in RECOMMENDED_REVIEWS else None
        reason = item.get("reason", "")
        if section not in SECTION_BY_KEY or not issubclass(SECTION_BY_KEY[section].model, Reviewable):
            errors.append(
                {
                    "path": f"{path}.record",
                    "message": "must name a reviewable record as section/stable id, e.g. evaluations/<id>",
                }
            )
        elif entries is not None and (section, stable_id) not in in_document:
            errors.append(
                {"path": f"{path}.record", "message": f"{section}/{stable_id} is not a record of this document"}
            )
        elif spec is None:
            errors.append({"path": f"{path}.action", "message": f"must be one of: {', '.join(RECOMMENDED_REVIEWS)}"})
        elif not isinstance(reason, str) or (spec.needs_reason and not reason.strip()):
            errors.append({"path": f"{path}.reason", "message": f"'{spec.label}' needs a reason (a text)"})
        else:
            plan.append(
                PlannedReview(section=section, stable_id=stable_id, transition=spec.name, reason=reason.strip())
            )
    return plan


def _collect(*, section: Section, item: Any, path: str, parent: dict[str, str], raw: list, errors: list) -> None:
    if not isinstance(item, dict):
        errors.append({"path": path, "message": "must be an object"})
        return
    own = dict(item)
    for (parent_key, child_key), (child_section, parent_field) in NESTED.items():
        if parent_key != section.key or child_key not in own:
            continue
        children = own.pop(child_key)
        if not isinstance(children, list):
            errors.append({"path": f"{path}.{child_key}", "message": "must be a list"})
            continue
        for index, child in enumerate(children):
            _collect(
                section=SECTION_BY_KEY[child_section],
                item=child,
                path=f"{path}.{child_key}[{index}]",
                parent={parent_field: str(item.get("stable_id", ""))},
                raw=raw,
                errors=errors,
            )
    raw.append((section, path, own, parent))


def _ordered(raw: list) -> list:
    """Entries in dependency order: the sections' order, within datasets every suite before its
    tasks (whether a task is nested in its suite or names it with `suite` at the top level), and
    within evaluations every original before the evaluations that repeat it."""
    position = {section.key: index for index, section in enumerate(SECTIONS)}
    suite_of = {
        str(item.get("stable_id", "")): str(parent.get("suite") or item.get("suite") or "")
        for section, _path, item, parent in raw
        if section.key == "datasets"
    }

    def depth(stable_id: str) -> int:
        seen = {stable_id}
        while (stable_id := suite_of.get(stable_id, "")) and stable_id not in seen:  # a cycle stops the walk
            seen.add(stable_id)
        return len(seen) - 1

    def order(entry) -> int:
        section, _path, item, _parent = entry
        if section.key == "datasets":
            return depth(str(item.get("stable_id", "")))
        if section.key == "evaluations":
            return 1 if item.get("repeats") else 0  # the original measurement before its repeats
        return 0

    return sorted(raw, key=lambda r: (position[r[0].key], order(r)))


def _clean(section: Section, path: str, item: dict, parent: dict[str, str], errors: list) -> Entry:
    item = dict(item)
    stable_id = item.pop("stable_id", None)
    entry = Entry(section=section, path=path, stable_id=str(stable_id or ""), values={}, references={}, many={})
    slug_field = section.model._meta.get_field("stable_id")
    try:
        entry.stable_id = slug_field.clean(stable_id, None)
    except ValidationError as exc:
        errors.append({"path": f"{path}.stable_id", "message": " ".join(exc.messages)})
    if section.key == "protocols":
        _flatten_metric(item, path, errors)
        limitations = item.pop("limitations", [])
        if not isinstance(limitations, list) or not all(isinstance(t, str) and t.strip() for t in limitations):
            errors.append({"path": f"{path}.limitations", "message": "must be a list of non-empty texts"})
        else:
            entry.limitations = [text_canonical(t) for t in limitations]
    if section.key == "evaluations" and not item.get("original_basis"):
        copy = item.get("repeats") or item.get("original_source") or item.get("original_citation")
        item["original_basis"] = IdentityBasis.STATED if copy else ""  # as Evaluation.basis_fill stores it
    item.update({key: value for key, value in parent.items()})
    for key in section.required:
        if item.get(key) in (None, "", []):
            errors.append({"path": f"{path}.{key}", "message": "is required"})
    for key, value in item.items():
        key_path = f"{path}.{key}"
        if key in section.scalars:
            model_field = section.model._meta.get_field(key)
            try:
                if is_number_field(model_field):
                    refuse_other_digits(value)  # int('١٢٣') is 123: refused, not translated
                text = text_canonical_or_same(value)  # common.text: LF line endings, no surrounding whitespace
                if key in getattr(section.model, "name_fields", ()) and isinstance(
                    text, str
                ):  # NFKC, one script a word
                    text = name_canonical(text)
                    refused = name_lookalike_error(text)
                    if refused:
                        raise ValidationError(refused)
                entry.values[key] = model_field.clean(_blank_to_default(model_field, text), None)
                entry.cleaned.add(key)
            except ValidationError as exc:
                if exc.error_list and exc.error_list[0].code == "invalid_choice":
                    choices = ", ".join(repr(choice) for choice, _label in model_field.flatchoices)
                    errors.append(
                        {"path": key_path, "message": f"{value!r} is not a valid choice: use one of {choices}"}
                    )
                else:
                    errors.append({"path": key_path, "message": " ".join(exc.messages)})
            except (TypeError, ValueError):  # a JSON type the field's parser does not take (a number for a date)
                errors.append(
                    {"path": key_path, "message": f"must be {_expected(model_field)}, not {type(value).__name__}"}
                )
        elif key in section.references:
            if value not in (None, "") and not isinstance(value, str):
                errors.append({"path": key_path, "message": "must be a stable id (a string)"})
            else:
                entry.references[section.references[key][0]] = value or ""
        elif key in section.many:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                errors.append({"path": key_path, "message": "must be a list of stable ids"})
            else:
                entry.many[section.many[key][0]] = list(value)
        else:
            errors.append({"path": key_path, "message": "unknown field"})
    for key in section.scalars:
        if key not in item:
            entry.values[key] = section.model._meta.get_field(key).get_default()
    for model_field, _target in section.references.values():
        entry.references.setdefault(model_field, "")
    for model_field, _target in section.many.values():
        entry.many.setdefault(model_field, [])
    return entry


def _expected(model_field: models.Field) -> str:
    if isinstance(model_field, ExactDecimalField):
        return 'a number written as a string with its printed digits, e.g. "0.410"'
    if isinstance(model_field, models.DateField):
        return "a date written as YYYY-MM-DD"
    if isinstance(model_field, (models.DecimalField, models.IntegerField)):
        return "a number"
    return "a string"


def _blank_to_default(model_field: models.Field, value: Any) -> Any:
    if value is None and not model_field.null:
        return model_field.get_default()
    return value


def _flatten_metric(item: dict, path: str, errors: list) -> None:
    metric = item.pop("metric", None)
    if not isinstance(metric, dict):
        errors.append(
            {
                "path": f"{path}.metric",
                "message": "is required: an object with name, short_name, description, unit, direction",
            }
        )
        return
    for key in sorted(set(metric) - METRIC_KEYS):
        errors.append({"path": f"{path}.metric.{key}", "message": "unknown field"})
    for key in METRIC_KEYS & set(metric):
        item[f"metric_{key}"] = metric[key]
    unit, names = metric.get("unit"), (metric.get("name"), metric.get("short_name"))
    if not metric.get("scale") and isinstance(unit, str):  # left out: the scale the unit's words state
        item["metric_scale"] = scale_read(unit=unit, metric_names=tuple(n for n in names if isinstance(n, str))).scale


def _check_identity(entries: list[Entry], errors: list) -> None:
    """Stable ids unique per section; every reference names a record in the document or the database."""
    in_document: dict[str, set[str]] = {}
    for entry in entries:
        ids = in_document.setdefault(entry.section.key, set())
        if entry.stable_id in ids:
            errors.append({"path": f"{entry.path}.stable_id", "message": f"duplicate stable id {entry.stable_id!r}"})
        ids.add(entry.stable_id)
    wanted: dict[str, set[str]] = {}
    for entry in entries:
        for model_field, target in entry_targets(entry):
            wanted.setdefault(target, set()).update(v for v in referenced_ids(entry, model_field) if v)
    existing = {
        key: set(
            SECTION_BY_KEY[key]
            .model.objects.filter(stable_id__in=ids - in_document.get(key, set()))
            .values_list("stable_id", flat=True)
        )
        for key, ids in wanted.items()
    }
    for entry in entries:
        for model_field, target in entry_targets(entry):
            for value in referenced_ids(entry, model_field):
                if value and value not in in_document.get(target, set()) and value not in existing[target]:
                    errors.append(
                        {
                            "path": f"{entry.path}.{model_field}",
                            "message": f"no {target[:-1].replace('_', ' ')} with stable id {value!r}",
                        }
                    )


def _check_units(entries: list[Entry], errors: list) -> None:
    """The unit rule (records.rules) for every result of the document, against the unit of its
    evaluation's protocol, from the document or else the database (whose triggers enforce it too)."""
    protocol_of = {e.stable_id: e.references.get("protocol") for e in entries if e.section.key == "evaluations"}
    unit_of = {e.stable_id: e.values.get("metric_unit") for e in entries if e.section.key == "protocols"}
    missing = {p for p in protocol_of.values() if p and p not in unit_of}
    unit_of.update(dict(Protocol.objects.filter(stable_id__in=missing).values_list("stable_id", "metric_unit")))
    for entry in entries:
        if entry.section.key != "results":
            continue
        evaluation = entry.references.get("evaluation", "")
        if evaluation not in protocol_of:
            protocol_of[evaluation] = (
                Evaluation.objects.filter(stable_id=evaluation).values_list("protocol__stable_id", flat=True).first()
            )
            unit_of.setdefault(
                protocol_of[evaluation],
                Protocol.objects.filter(stable_id=protocol_of[evaluation])
                .values_list("metric_unit", flat=True)
                .first(),
            )
        expected = (
            unit_of.get(protocol_of.get(evaluation)) or None
        )  # not known (a missing reference is reported elsewhere)
        problem = unit_problem(
            unit=entry.values.get("unit"), metric_unit=expected, protocol=protocol_of.get(evaluation) or ""
        )
        if problem:
            errors.append({"path": f"{entry.path}.unit", "message": problem})
