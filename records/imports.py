"""Bulk import of one paper's records from one JSON document (`records_import`).

The document format is documented in the README ("Import format") and the seed record is its
example (`records/seed.py` builds it); `data/examples/` holds real papers' tables. The import
validates the whole document first, then writes it in one transaction (or nothing at all),
idempotently by stable id: a record whose fields already hold the document's values is left
untouched, so importing twice changes nothing. New records start as proposed; an edit of a
sourced field of a reviewed record reopens it, and never makes an excluded record comparable
(records.services, reviews.transitions).

Re-imports merge three ways, field by field, against what the document (known by its title) held
at its last import (`ImportSnapshot`): a field the document changed and nobody else did is updated; a field a
curator or an accepted correction changed while the document did not is kept (and reported); a
field both changed is a conflict, which the dry run lists and the real import refuses, unless the
caller names the record in `overwrite` to take the document's values.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, models, transaction
from django.utils import timezone

from common.errors import DomainError
from records import models as m
from records.fields import ExactDecimalField
from records.services import errors_by_field, protocol_limitations_set, record_upsert
from records.values import exact_text

FORMAT_NAME = "benchmark-evidence-import"
FORMAT_VERSION = 2
# Keys of the document beside its sections: `notes` (texts: what was read where, what was left out)
# and `reviews` (the exclusions a curator recommends, applied only by the demo loader: an import
# leaves every new record proposed).
DOCUMENT_KEYS = {"format", "version", "title", "notes", "reviews"}


@dataclass(frozen=True)
class Section:
    """How one kind of entry maps onto a model.

    `references` map a document key to (model field, target section); `many` map a document key
    to (model many-to-many field, target section). Every other key must be a model field name.
    """

    key: str
    model: type[models.Model]
    scalars: tuple[str, ...]
    references: dict[str, tuple[str, str]] = field(default_factory=dict)
    many: dict[str, tuple[str, str]] = field(default_factory=dict)
    required: tuple[str, ...] = ()


SECTIONS: tuple[Section, ...] = (
    Section("areas", m.Area, ("label",), required=("label",)),
    Section("contexts", m.Context, ("label",), required=("label",)),
    Section(
        "sources",
        m.Source,
        (
            "title", "venue", "kind", "authors_short", "citation", "published_date", "doi", "pmcid", "arxiv_id", "arxiv_version",
            "url", "commit", "copy_consulted",
        ),
        required=("title",),
    ),
    Section(
        "datasets",
        m.Dataset,
        ("name", "description", "task_key", "position", "train_size", "test_size", "num_classes", "sequence_length_bp", "metric", "source_locator"),
        references={"suite": ("suite", "datasets"), "source": ("source", "sources")},
        required=("name",),
    ),
    Section(
        "configurations",
        m.Configuration,
        ("name", "short_name", "family", "parameter_count", "method", "description"),
        references={"source": ("source", "sources")},
        required=("name",),
    ),
    Section(
        "protocols",
        m.Protocol,
        (
            "title", "summary", "procedure", "version_label", "metric_name", "metric_short_name", "metric_description",
            "metric_unit", "metric_direction", "source_locator", "explanatory_profile", "explanatory_profile_reviewed",
        ),
        references={"source": ("source", "sources")},
        many={"datasets": ("datasets", "datasets"), "areas": ("areas", "areas"), "contexts": ("contexts", "contexts")},
        required=("title", "summary", "metric_name", "metric_short_name", "metric_unit", "metric_direction", "source"),
    ),
    Section(
        "baseline_roles",
        m.BaselineRole,
        ("kind", "status", "selection_rule", "requirements"),
        references={"protocol": ("protocol", "protocols"), "configuration": ("configuration", "configurations")},
        required=("kind", "selection_rule", "protocol"),
    ),
    Section(
        "evaluations",
        m.Evaluation,
        (
            "title", "measured_by", "measured_by_name", "reading_method", "setup", "aggregation", "uncertainty",
            "coverage_scored", "coverage_eligible", "source_locator", "quote", "concern_locator",
        ),
        references={
            "protocol": ("protocol", "protocols"),
            "configuration": ("configuration", "configurations"),
            "dataset": ("dataset", "datasets"),
            "source": ("source", "sources"),
            "repeats": ("repeats", "evaluations"),
            "concern_source": ("concern_source", "sources"),
        },
        required=("title", "measured_by", "reading_method", "protocol", "configuration", "dataset"),
    ),
    Section(
        "results",
        m.Result,
        (
            "value", "unit", "printed_value", "uncertainty_kind", "uncertainty_value", "lower_bound", "upper_bound",
            "uncertainty_level", "num_runs", "relation",
        ),
        references={"evaluation": ("evaluation", "evaluations"), "reference_configuration": ("reference_configuration", "configurations")},
        required=("value", "unit", "printed_value", "evaluation"),
    ),
    Section(
        "evidence_rows",
        m.EvidenceRow,
        ("property_name", "statement", "locator", "quote", "support"),
        references={"protocol": ("protocol", "protocols"), "evaluation": ("evaluation", "evaluations"), "source": ("source", "sources")},
        required=("property_name", "statement", "locator", "protocol", "source"),
    ),
    Section(
        "decisions",
        m.Decision,
        ("title", "description"),
        many={"protocols": ("protocols", "protocols")},
        required=("title",),
    ),
)
SECTION_BY_KEY = {section.key: section for section in SECTIONS}
# Nested lists in the document, flattened into their own sections with a reference to the parent.
NESTED = {
    ("datasets", "tasks"): ("datasets", "suite"),
    ("protocols", "baseline_roles"): ("baseline_roles", "protocol"),
    ("evaluations", "results"): ("results", "evaluation"),
}
METRIC_KEYS = {"name", "short_name", "description", "unit", "direction"}


class ImportInvalid(DomainError):
    """The document cannot be imported; `errors` name each problem by its path in the document."""

    default_field = "document"

    def __init__(self, errors: list[dict[str, str]]):
        super().__init__(f"{len(errors)} problem(s): " + "; ".join(f"{e['path']}: {e['message']}" for e in errors[:5]))
        self.errors = errors


class ImportConflict(ImportInvalid):
    """Fields the document changed that a curator or a correction changed too since its last import."""

    status = 409
    code = "conflict"

    def __init__(self, errors: list[dict[str, str]], conflicts: dict[str, dict[str, list[dict]]]):
        super().__init__(errors)
        self.conflicts = conflicts


@dataclass
class Entry:
    section: Section
    path: str
    stable_id: str
    values: dict[str, Any]  # model field name -> cleaned value
    references: dict[str, str]  # model field -> target stable id ("" = none)
    many: dict[str, list[str]]
    limitations: list[str] | None = None


@dataclass
class ImportReport:
    dry_run: bool
    created: dict[str, list[str]] = field(default_factory=dict)
    updated: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    unchanged: dict[str, int] = field(default_factory=dict)
    # Fields a curator or correction changed since the last import while the document did not: kept.
    kept: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    # Fields both changed: section -> stable id -> [{field, current, document, last_imported, changed_by}].
    conflicts: dict[str, dict[str, list[dict]]] = field(default_factory=dict)
    # Records named in `overwrite` whose conflicting fields took the document's values.
    overwritten: dict[str, dict[str, list[str]]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run, "created": self.created, "updated": self.updated, "unchanged": self.unchanged,
            "kept": self.kept, "conflicts": self.conflicts, "overwritten": self.overwritten,
        }

    @property
    def changed_anything(self) -> bool:
        return bool(self.created or self.updated)


def records_import(*, document: Any, actor, dry_run: bool = False, overwrite: Iterable[str] = ()) -> ImportReport:
    """Validate the whole document, then write it in one transaction (rolled back for a dry run).

    `overwrite` names records ("evaluations/<stable id>") whose fields changed since their last
    import on both sides and should take the document's values; any other such conflict refuses
    the whole import (ImportConflict) and lists every one. A dry run reports conflicts instead.
    """
    entries = _parse(document)
    overwrite = set(overwrite)
    known = {f"{entry.section.key}/{entry.stable_id}" for entry in entries}
    unknown = sorted(overwrite - known)
    if unknown:
        raise ImportInvalid([{"path": "overwrite", "message": f"{name!r} is not a record of this document (write section/stable id)"} for name in unknown])
    report = ImportReport(dry_run=dry_run)
    title = str(document.get("title") or "")[:500]
    try:
        with transaction.atomic():
            errors = _write(entries=entries, actor=actor, report=report, overwrite=overwrite, title=title)
            if errors:
                raise ImportInvalid(errors)
            if report.conflicts and not dry_run:
                raise ImportConflict(_conflict_errors(report.conflicts, entries), report.conflicts)
            if dry_run:
                transaction.set_rollback(True)
    except IntegrityError as exc:  # a database rule the validation did not foresee: nothing is kept
        raise ImportInvalid([{"path": "document", "message": f"refused by the database: {exc}"}]) from None
    return report


def _conflict_errors(conflicts: dict[str, dict[str, list[dict]]], entries: list[Entry]) -> list[dict[str, str]]:
    path_of = {(entry.section.key, entry.stable_id): entry.path for entry in entries}
    return [
        {
            "path": f"{path_of[(section, stable_id)]}.{item['field']}",
            "message": (
                f"changed since this document's last import{' by ' + item['changed_by'] if item['changed_by'] else ''} "
                f"(now {item['current']!r}, last imported {item['last_imported']!r}) and changed by the document too "
                f"({item['document']!r}): keep the current value by editing the document, or pass overwrite={section}/{stable_id}"
            ),
        }
        for section, records in conflicts.items()
        for stable_id, items in records.items()
        for item in items
    ]


# -- parsing and validation ------------------------------------------------------------------


def _parse(document: Any) -> list[Entry]:
    errors: list[dict[str, str]] = []
    if not isinstance(document, dict):
        raise ImportInvalid([{"path": "document", "message": "must be a JSON object"}])
    if document.get("format") != FORMAT_NAME or document.get("version") != FORMAT_VERSION:
        errors.append({"path": "format", "message": f"must be format {FORMAT_NAME!r} version {FORMAT_VERSION}"})
    known = DOCUMENT_KEYS | set(SECTION_BY_KEY) - {"baseline_roles", "results"}
    for key in sorted(set(document) - known):
        errors.append({"path": key, "message": "unknown section"})
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
    if errors:
        raise ImportInvalid(errors)
    return entries


# What a document may recommend: an exclusion with its reason. Bringing a record back (reinstate)
# is a curator's decision on the portal, never a document's.
RECOMMENDED_REVIEWS = ("exclude",)


@dataclass(frozen=True)
class PlannedReview:
    section: str
    stable_id: str
    transition: str
    reason: str


def review_plan(document: dict, *, entries: list[Entry] | None = None, errors: list | None = None) -> list[PlannedReview]:
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
            errors.append({"path": f"{path}.record", "message": "must name a reviewable record as section/stable id, e.g. evaluations/<id>"})
        elif entries is not None and (section, stable_id) not in in_document:
            errors.append({"path": f"{path}.record", "message": f"{section}/{stable_id} is not a record of this document"})
        elif spec is None:
            errors.append({"path": f"{path}.action", "message": f"must be one of: {', '.join(RECOMMENDED_REVIEWS)}"})
        elif not isinstance(reason, str) or (spec.needs_reason and not reason.strip()):
            errors.append({"path": f"{path}.reason", "message": f"'{spec.label}' needs a reason (a text)"})
        else:
            plan.append(PlannedReview(section=section, stable_id=stable_id, transition=spec.name, reason=reason.strip()))
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
            entry.limitations = [t.strip() for t in limitations]
    item.update({key: value for key, value in parent.items()})
    for key in section.required:
        if item.get(key) in (None, "", []):
            errors.append({"path": f"{path}.{key}", "message": "is required"})
    for key, value in item.items():
        key_path = f"{path}.{key}"
        if key in section.scalars:
            model_field = section.model._meta.get_field(key)
            try:
                entry.values[key] = model_field.clean(_blank_to_default(model_field, value), None)
            except ValidationError as exc:
                if exc.error_list and exc.error_list[0].code == "invalid_choice":
                    choices = ", ".join(repr(choice) for choice, _label in model_field.flatchoices)
                    errors.append({"path": key_path, "message": f"{value!r} is not a valid choice: use one of {choices}"})
                else:
                    errors.append({"path": key_path, "message": " ".join(exc.messages)})
            except (TypeError, ValueError):  # a JSON type the field's parser does not take (a number for a date)
                errors.append({"path": key_path, "message": f"must be {_expected(model_field)}, not {type(value).__name__}"})
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
    for key, (model_field, _target) in section.references.items():
        entry.references.setdefault(model_field, "")
    for key, (model_field, _target) in section.many.items():
        entry.many.setdefault(model_field, [])
    return entry


def _expected(model_field: models.Field) -> str:
    if isinstance(model_field, ExactDecimalField):
        return "a number written as a string with its printed digits, e.g. \"0.410\""
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
        errors.append({"path": f"{path}.metric", "message": "is required: an object with name, short_name, description, unit, direction"})
        return
    for key in sorted(set(metric) - METRIC_KEYS):
        errors.append({"path": f"{path}.metric.{key}", "message": "unknown field"})
    for key in METRIC_KEYS & set(metric):
        item[f"metric_{key}"] = metric[key]


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
        for model_field, target in _targets(entry):
            wanted.setdefault(target, set()).update(v for v in _values(entry, model_field) if v)
    existing = {
        key: set(SECTION_BY_KEY[key].model.objects.filter(stable_id__in=ids - in_document.get(key, set())).values_list("stable_id", flat=True))
        for key, ids in wanted.items()
    }
    for entry in entries:
        for model_field, target in _targets(entry):
            for value in _values(entry, model_field):
                if value and value not in in_document.get(target, set()) and value not in existing[target]:
                    errors.append({"path": f"{entry.path}.{model_field}", "message": f"no {target[:-1].replace('_', ' ')} with stable id {value!r}"})


def _targets(entry: Entry) -> list[tuple[str, str]]:
    return list(entry.section.references.values()) + list(entry.section.many.values())


def _values(entry: Entry, model_field: str) -> list[str]:
    return entry.many[model_field] if model_field in entry.many else [entry.references.get(model_field, "")]


def _check_units(entries: list[Entry], errors: list) -> None:
    """A result's unit must be its protocol's metric unit (the database enforces it too)."""
    protocol_of = {e.stable_id: e.references.get("protocol") for e in entries if e.section.key == "evaluations"}
    unit_of = {e.stable_id: e.values.get("metric_unit") for e in entries if e.section.key == "protocols"}
    missing = {p for p in protocol_of.values() if p and p not in unit_of}
    unit_of.update(dict(m.Protocol.objects.filter(stable_id__in=missing).values_list("stable_id", "metric_unit")))
    for entry in entries:
        if entry.section.key != "results":
            continue
        evaluation = entry.references.get("evaluation", "")
        if evaluation not in protocol_of:
            protocol_of[evaluation] = m.Evaluation.objects.filter(stable_id=evaluation).values_list("protocol__stable_id", flat=True).first()
            unit_of.setdefault(protocol_of[evaluation], m.Protocol.objects.filter(stable_id=protocol_of[evaluation]).values_list("metric_unit", flat=True).first())
        expected = unit_of.get(protocol_of.get(evaluation))
        if expected and entry.values.get("unit") != expected:
            errors.append({"path": f"{entry.path}.unit", "message": f"must be {expected!r}, the metric unit of protocol {protocol_of[evaluation]!r}"})


# -- writing ---------------------------------------------------------------------------------


_MISSING = object()


def _plain(value: Any) -> Any:
    """A field's value as the snapshot keeps it: JSON-able, exact decimals as their text."""
    if isinstance(value, Decimal):
        return exact_text(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, models.Model):
        return value.stable_id
    return value


def _document_state(entry: Entry) -> dict[str, Any]:
    """Everything the document says about the record, field by field (references as stable ids)."""
    state = {name: _plain(value) for name, value in entry.values.items()}
    state.update({name: (stable_id or None) for name, stable_id in entry.references.items()})
    state.update({name: sorted(stable_ids) for name, stable_ids in entry.many.items()})
    if entry.limitations is not None:
        state["limitations"] = list(entry.limitations)
    return state


def _record_state(record: models.Model, names: Iterable[str], stable_id_of) -> dict[str, Any]:
    """The record's current values of `names`, in the form of `_document_state`."""
    state: dict[str, Any] = {}
    for name in names:
        if name == "limitations":
            state[name] = [limitation.text for limitation in record.limitations.order_by("position")]
            continue
        model_field = record._meta.get_field(name)
        if model_field.many_to_many:
            state[name] = sorted(getattr(record, name).values_list("stable_id", flat=True))
        elif model_field.is_relation:
            state[name] = stable_id_of(model_field.related_model, getattr(record, model_field.attname))
        else:
            state[name] = _plain(getattr(record, name))
    return state


def _changed_by(record: models.Model) -> str:
    """Who made the record's last change, and why, from its history (for a conflict's message)."""
    latest = record.history.select_related("history_user").first() if hasattr(record, "history") else None
    if latest is None:
        return ""
    who = latest.history_user.get_username() if latest.history_user else "the portal"
    return f"{who} ({latest.history_change_reason or latest.get_history_type_display().lower()})"


def _write(*, entries: list[Entry], actor, report: ImportReport, overwrite: set[str], title: str) -> list[dict[str, str]]:
    errors: list[dict[str, str]] = []
    saved: dict[tuple[str, str], models.Model] = {}
    stable_ids: dict[tuple[type, int], str] = {}

    def resolve(target: str, stable_id: str) -> models.Model | None:
        if not stable_id:
            return None
        if (target, stable_id) not in saved:
            saved[(target, stable_id)] = SECTION_BY_KEY[target].model.objects.filter(stable_id=stable_id).first()
        return saved[(target, stable_id)]

    def stable_id_of(model: type, pk: int | None) -> str | None:
        if pk is None:
            return None
        if (model, pk) not in stable_ids:
            stable_ids[(model, pk)] = model._default_manager.filter(pk=pk).values_list("stable_id", flat=True).first()
        return stable_ids[(model, pk)]

    snapshots = {
        (snapshot.section, snapshot.stable_id): snapshot
        for snapshot in m.ImportSnapshot.objects.filter(document=title, stable_id__in={entry.stable_id for entry in entries})
    }
    failed: set[tuple[str, str]] = set()
    for entry in entries:
        model = entry.section.model
        depends_on = {(target, sid) for model_field, target in _targets(entry) for sid in _values(entry, model_field) if sid}
        if depends_on & failed:
            failed.add((entry.section.key, entry.stable_id))  # its error is reported where it starts
            continue
        values = dict(entry.values)
        for key, (model_field, target) in entry.section.references.items():
            values[model_field] = resolve(target, entry.references.get(model_field, ""))
        unresolved = [
            key for key, (model_field, _target) in entry.section.references.items()
            if entry.references.get(model_field) and values[model_field] is None
        ]
        if unresolved:  # only a cycle (a suite inside its own task) gets here: the rest was checked first
            errors.extend({"path": f"{entry.path}.{key}", "message": "refers to a record that depends on this one"} for key in unresolved)
            failed.add((entry.section.key, entry.stable_id))
            continue
        record = model.objects.filter(stable_id=entry.stable_id).first()
        created = record is None
        if created:
            record = model(stable_id=entry.stable_id)
        many = {name: [resolve(target, sid) for sid in entry.many.get(name, [])] for _key, (name, target) in entry.section.many.items()}
        wanted = _document_state(entry)
        limitations = entry.limitations
        if not created:
            take = _merge(
                entry=entry, record=record, wanted=wanted, snapshot=snapshots.get((entry.section.key, entry.stable_id)),
                overwrite=f"{entry.section.key}/{entry.stable_id}" in overwrite, report=report, stable_id_of=stable_id_of,
            )
            values = {name: value for name, value in values.items() if name in take}
            many = {name: value for name, value in many.items() if name in take}
            limitations = limitations if "limitations" in take else None
        try:
            changed = record_upsert(record=record, values=values, many=many, actor=actor, reason="import")
        except ValidationError as exc:
            errors.extend(
                {"path": f"{entry.path}.{name if name != '__all__' else 'record'}", "message": " ".join(msgs)}
                for name, msgs in errors_by_field(exc, model).items()
            )
            failed.add((entry.section.key, entry.stable_id))
            continue
        saved[(entry.section.key, entry.stable_id)] = record
        stable_ids[(model, record.pk)] = record.stable_id
        if limitations is not None and protocol_limitations_set(protocol=record, texts=limitations, actor=actor, reason="import"):
            changed.append("limitations")
        snapshot = snapshots.get((entry.section.key, entry.stable_id))
        if snapshot is None or snapshot.values != wanted:
            m.ImportSnapshot.objects.update_or_create(
                document=title, section=entry.section.key, stable_id=entry.stable_id,
                defaults={"values": wanted, "imported_at": timezone.now(), "imported_by": actor if getattr(actor, "pk", None) else None},
            )
        if created:
            report.created.setdefault(entry.section.key, []).append(entry.stable_id)
        elif changed:
            report.updated.setdefault(entry.section.key, {})[entry.stable_id] = sorted(set(changed))
        else:
            report.unchanged[entry.section.key] = report.unchanged.get(entry.section.key, 0) + 1
    return errors


def _merge(*, entry: Entry, record: models.Model, wanted: dict[str, Any], snapshot, overwrite: bool, report: ImportReport, stable_id_of) -> set[str]:
    """The fields of an existing record the import may write: a three-way merge of the document
    (`wanted`), the record now, and what the document held at its last import (`snapshot`).

    A field that differs is taken when only the document changed it (the record still holds the
    last imported value), kept when only the record changed (the document still holds its last
    imported value), and otherwise, when both changed or the record was never imported, is a
    conflict, unless `overwrite` takes the document's value. Kept, conflicting and overwritten
    fields are added to the report.
    """
    current = _record_state(record, wanted, stable_id_of)
    base = snapshot.values if snapshot is not None else {}
    take: set[str] = set()
    kept: list[str] = []
    conflicts: list[dict[str, Any]] = []
    for name, value in wanted.items():
        now = current[name]
        if value == now:
            continue
        last = base.get(name, _MISSING)
        if last is not _MISSING and last == now:
            take.add(name)  # only the document changed it
        elif last is not _MISSING and last == value:
            kept.append(name)  # only the portal changed it: a curator's edit or an accepted correction stays
        elif overwrite:
            take.add(name)
            report.overwritten.setdefault(entry.section.key, {}).setdefault(entry.stable_id, []).append(name)
        else:
            conflicts.append({"field": name, "current": now, "document": value, "last_imported": None if last is _MISSING else last})
    if entry.stable_id in report.overwritten.get(entry.section.key, {}):
        report.overwritten[entry.section.key][entry.stable_id].sort()
    if kept:
        report.kept.setdefault(entry.section.key, {})[entry.stable_id] = sorted(kept)
    if conflicts:
        changed_by = _changed_by(record)
        report.conflicts.setdefault(entry.section.key, {})[entry.stable_id] = [{**item, "changed_by": changed_by} for item in conflicts]
    return take
