"""Bulk import of one paper's records from one JSON document (`records_import`).

The document format is documented in the README ("Import format") and the seed record is its
example (`records/seed.py` builds it). The import validates the whole document first, then writes
it in one transaction (or nothing at all), idempotently by stable id: a record whose fields already
hold the document's values is left untouched, so importing twice changes nothing. New records start
as proposed; an edit of a sourced field of a reviewed record reopens it (records.services).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, models, transaction

from records import models as m
from records.services import errors_by_field, protocol_limitations_set, record_upsert

FORMAT_NAME = "benchmark-evidence-import"
FORMAT_VERSION = 1


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
        ("title", "venue", "kind", "authors_short", "citation", "published_date", "doi", "pmcid", "url", "copy_consulted"),
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
            "title", "origin", "setup", "aggregation", "uncertainty", "coverage_scored", "coverage_eligible",
            "source_locator", "quote", "concern_locator",
        ),
        references={
            "protocol": ("protocol", "protocols"),
            "configuration": ("configuration", "configurations"),
            "dataset": ("dataset", "datasets"),
            "source": ("source", "sources"),
            "concern_source": ("concern_source", "sources"),
        },
        required=("title", "origin", "protocol", "configuration", "dataset"),
    ),
    Section(
        "results",
        m.Result,
        ("value", "unit", "printed_value", "lower_bound", "upper_bound", "num_runs"),
        references={"evaluation": ("evaluation", "evaluations")},
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


class ImportInvalid(Exception):
    """The document cannot be imported; `errors` name each problem by its path in the document."""

    def __init__(self, errors: list[dict[str, str]]):
        super().__init__(f"{len(errors)} problem(s): " + "; ".join(f"{e['path']}: {e['message']}" for e in errors[:5]))
        self.errors = errors


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

    def as_dict(self) -> dict[str, Any]:
        return {"dry_run": self.dry_run, "created": self.created, "updated": self.updated, "unchanged": self.unchanged}

    @property
    def changed_anything(self) -> bool:
        return bool(self.created or self.updated)


def records_import(*, document: Any, actor, dry_run: bool = False) -> ImportReport:
    """Validate the whole document, then write it in one transaction (rolled back for a dry run)."""
    entries = _parse(document)
    report = ImportReport(dry_run=dry_run)
    try:
        with transaction.atomic():
            errors = _write(entries=entries, actor=actor, report=report)
            if errors:
                raise ImportInvalid(errors)
            if dry_run:
                transaction.set_rollback(True)
    except IntegrityError as exc:  # a database rule the validation did not foresee: nothing is kept
        raise ImportInvalid([{"path": "document", "message": f"refused by the database: {exc}"}]) from None
    return report


# -- parsing and validation ------------------------------------------------------------------


def _parse(document: Any) -> list[Entry]:
    errors: list[dict[str, str]] = []
    if not isinstance(document, dict):
        raise ImportInvalid([{"path": "document", "message": "must be a JSON object"}])
    if document.get("format") != FORMAT_NAME or document.get("version") != FORMAT_VERSION:
        errors.append({"path": "format", "message": f"must be format {FORMAT_NAME!r} version {FORMAT_VERSION}"})
    known = {"format", "version", "title"} | set(SECTION_BY_KEY) - {"baseline_roles", "results"}
    for key in sorted(set(document) - known):
        errors.append({"path": key, "message": "unknown section"})
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
    if errors:
        raise ImportInvalid(errors)
    return entries


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
    """Entries in dependency order: the sections' order, and within datasets every suite before its
    tasks, whether a task is nested in its suite or names it with `suite` at the top level."""
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

    return sorted(raw, key=lambda r: (position[r[0].key], depth(str(r[2].get("stable_id", ""))) if r[0].key == "datasets" else 0))


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


def _write(*, entries: list[Entry], actor, report: ImportReport) -> list[dict[str, str]]:
    errors: list[dict[str, str]] = []
    saved: dict[tuple[str, str], models.Model] = {}

    def resolve(target: str, stable_id: str) -> models.Model | None:
        if not stable_id:
            return None
        if (target, stable_id) not in saved:
            saved[(target, stable_id)] = SECTION_BY_KEY[target].model.objects.filter(stable_id=stable_id).first()
        return saved[(target, stable_id)]

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
        if entry.limitations is not None and protocol_limitations_set(protocol=record, texts=entry.limitations, actor=actor, reason="import"):
            changed.append("limitations")
        if created:
            report.created.setdefault(entry.section.key, []).append(entry.stable_id)
        elif changed:
            report.updated.setdefault(entry.section.key, {})[entry.stable_id] = sorted(set(changed))
        else:
            report.unchanged[entry.section.key] = report.unchanged.get(entry.section.key, 0) + 1
    return errors
