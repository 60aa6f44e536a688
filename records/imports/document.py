"""The import document's format: how each section maps onto a model, the parsed entries, the
errors and the report (docs/reference/import-format.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db import models

from common.errors import DomainError
from records.models import (
    Area,
    BaselineRole,
    Configuration,
    Context,
    Dataset,
    Decision,
    Evaluation,
    EvidenceRow,
    GenomicModel,
    ModelAlias,
    Protocol,
    Result,
    Source,
    TaskEquivalence,
    Work,
)

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
    Section("areas", Area, ("label",), required=("label",)),
    Section("contexts", Context, ("label",), required=("label",)),
    Section("works", Work, ("title", "authors_short", "description"), required=("title",)),
    Section(
        "sources",
        Source,
        (
            "title",
            "venue",
            "kind",
            "authors_short",
            "citation",
            "published_date",
            "doi",
            "pmcid",
            "arxiv_id",
            "arxiv_version",
            "url",
            "commit",
            "copy_consulted",
        ),
        references={"work": ("work", "works")},
        required=("title",),
    ),
    Section(
        "models",
        GenomicModel,
        ("name", "family", "parameter_count", "public_id", "revision", "description"),
        references={"introduced_in": ("introduced_in", "works")},
        required=("name",),
    ),
    Section(
        "model_aliases",
        ModelAlias,
        ("alias", "locator", "basis", "quote", "reason"),
        references={"model": ("model", "models"), "source": ("source", "sources")},
        required=("alias", "model"),
    ),
    Section(
        "datasets",
        Dataset,
        (
            "name",
            "description",
            "task_key",
            "position",
            "train_size",
            "test_size",
            "num_classes",
            "sequence_length_bp",
            "metric",
            "source_locator",
        ),
        references={"suite": ("suite", "datasets"), "source": ("source", "sources")},
        required=("name",),
    ),
    Section(
        "task_equivalences",
        TaskEquivalence,
        ("locator", "quote", "basis", "reason"),
        references={"task": ("task", "datasets"), "same_as": ("same_as", "datasets"), "source": ("source", "sources")},
        required=("task", "same_as"),
    ),
    Section(
        "configurations",
        Configuration,
        ("name", "short_name", "family", "parameter_count", "method", "description"),
        references={"source": ("source", "sources"), "model": ("model", "models")},
        required=("name",),
    ),
    Section(
        "protocols",
        Protocol,
        (
            "title",
            "summary",
            "procedure",
            "version_label",
            "metric_name",
            "metric_short_name",
            "metric_description",
            "metric_unit",
            "metric_scale",
            "metric_direction",
            "best_marking",
            "source_locator",
            "explanatory_profile",
            "explanatory_profile_reviewed",
        ),
        references={"source": ("source", "sources")},
        many={"datasets": ("datasets", "datasets"), "areas": ("areas", "areas"), "contexts": ("contexts", "contexts")},
        required=("title", "summary", "metric_name", "metric_short_name", "metric_unit", "metric_direction", "source"),
    ),
    Section(
        "baseline_roles",
        BaselineRole,
        ("kind", "status", "selection_rule", "requirements"),
        references={"protocol": ("protocol", "protocols"), "configuration": ("configuration", "configurations")},
        required=("kind", "selection_rule", "protocol"),
    ),
    Section(
        "evaluations",
        Evaluation,
        (
            "title",
            "measured_by",
            "measured_by_name",
            "reading_method",
            "setup",
            "aggregation",
            "uncertainty",
            "coverage_scored",
            "coverage_eligible",
            "source_locator",
            "quote",
            "original_citation",
            "original_locator",
            "original_basis",
            "original_reason",
            "concern_locator",
        ),
        references={
            "protocol": ("protocol", "protocols"),
            "configuration": ("configuration", "configurations"),
            "dataset": ("dataset", "datasets"),
            "source": ("source", "sources"),
            "repeats": ("repeats", "evaluations"),
            "original_source": ("original_source", "sources"),
            "concern_source": ("concern_source", "sources"),
        },
        required=("title", "measured_by", "reading_method", "protocol", "configuration", "dataset"),
    ),
    Section(
        "results",
        Result,
        Result.MEASUREMENT_FIELDS,
        references={
            "evaluation": ("evaluation", "evaluations"),
            "reference_configuration": ("reference_configuration", "configurations"),
        },
        required=("value", "unit", "printed_value", "evaluation"),
    ),
    Section(
        "evidence_rows",
        EvidenceRow,
        ("property_name", "statement", "locator", "quote", "support"),
        references={
            "protocol": ("protocol", "protocols"),
            "evaluation": ("evaluation", "evaluations"),
            "source": ("source", "sources"),
        },
        required=("property_name", "statement", "locator", "protocol", "source"),
    ),
    Section(
        "decisions",
        Decision,
        ("title", "description"),
        many={"protocols": ("protocols", "protocols")},
        required=("title",),
    ),
)
SECTION_BY_KEY = {section.key: section for section in SECTIONS}
# Nested lists in the document, flattened into their own sections with a reference to the parent.
NESTED = {
    ("datasets", "tasks"): ("datasets", "suite"),
    ("models", "aliases"): ("model_aliases", "model"),
    ("protocols", "baseline_roles"): ("baseline_roles", "protocol"),
    ("evaluations", "results"): ("results", "evaluation"),
}
METRIC_KEYS = {"name", "short_name", "description", "unit", "scale", "direction"}


class ImportInvalid(DomainError):
    """The document cannot be imported; `errors` name each problem by its path in the document.

    `written` says what earlier batches of a large import committed before it stopped ("" when
    nothing was written); it is then the first error too, so every caller's message carries it."""

    default_field = "document"

    def __init__(self, errors: list[dict[str, str]], *, written: str = ""):
        if written:
            errors = [{"path": "document", "message": written}, *errors]
        super().__init__(f"{len(errors)} problem(s): " + "; ".join(f"{e['path']}: {e['message']}" for e in errors[:5]))
        self.errors = errors
        self.written = written

    @property
    def outcome(self) -> str:
        """What the refused import left in the database, for a message: "nothing was written" or what was."""
        return self.written or "nothing was written"


class ImportConflict(ImportInvalid):
    """Fields the document changed that a curator or a correction changed too since its last import."""

    status = 409
    code = "conflict"

    def __init__(self, errors: list[dict[str, str]], conflicts: dict[str, dict[str, list[dict]]], *, written: str = ""):
        super().__init__(errors, written=written)
        self.conflicts = conflicts


class ImportStale(ImportConflict):
    """Records the import touches changed between planning it and writing it, each time it was tried."""

    def __init__(self, attempts: int, *, written: str = "", changed: list[str] | None = None):
        changed = changed or []
        named = f" (last: {'; '.join(changed)})" if changed else ""
        super().__init__(
            [
                {
                    "path": "document",
                    "message": f"records this import touches were changed by others while it was being checked "
                    f"({attempts} times){named}; " + (written if written else "nothing was written: send it again"),
                }
            ],
            {},
        )
        self.written = written
        self.changed = changed


@dataclass
class Entry:
    section: Section
    path: str
    stable_id: str
    values: dict[str, Any]  # model field name -> cleaned value
    references: dict[str, str]  # model field -> target stable id ("" = none)
    many: dict[str, list[str]]
    limitations: list[str] | None = None
    cleaned: set[str] = field(default_factory=set)  # the scalar fields the document gave, each valid


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
    # Configurations the document gave no model, matched to one by a printed alias:
    # stable id -> {model, alias} (records.imports.aliases).
    matched: dict[str, dict[str, str]] = field(default_factory=dict)
    # How each protocol's values will be compared across papers (records.imports.comparisons):
    # protocol stable id -> {metric, unit, scale, divided_by, compared_as, compared_with, values}.
    comparisons: dict[str, dict[str, Any]] = field(default_factory=dict)
    # What does not stop the import but may not be what the curator meant: [{path, message}].
    warnings: list[dict[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "created": self.created,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "kept": self.kept,
            "conflicts": self.conflicts,
            "overwritten": self.overwritten,
            "matched": self.matched,
            "comparisons": self.comparisons,
            "warnings": self.warnings,
        }

    @property
    def changed_anything(self) -> bool:
        return bool(self.created or self.updated)


def entry_targets(entry: Entry) -> list[tuple[str, str]]:
    """(model field, target section) of every reference and many-to-many set the entry's section has."""
    return list(entry.section.references.values()) + list(entry.section.many.values())


def referenced_ids(entry: Entry, model_field: str) -> list[str]:
    """The stable ids the entry's `model_field` names ("" for an empty reference)."""
    return entry.many[model_field] if model_field in entry.many else [entry.references.get(model_field, "")]
