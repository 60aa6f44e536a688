"""The catalogue of benchmark evidence (docs/architecture/design-map.md, "Catalogue").

Plain models: no business logic in save() or signals; writes go through records.services. Every
curated model has a stable id, timestamps and django-simple-history. What must always hold is a
database constraint (and, where one table cannot see another, a trigger: see migration 0002).

The models live in modules by what they hold (`base`: the choices and `CuratedModel`; `catalogue`:
sources, vocabularies, datasets, configurations, protocols; `evidence`: evaluations, results,
evidence rows; `assessment`: baseline roles, decisions; `identity`: works, models and their
aliases, task equivalences, model merges; `snapshots` and `import_jobs`: the import's bookkeeping;
`search`: the search index, records.search_index's; `summary`: the protocols' comparisons in
summary, records.protocol_summary's); every name is
exported here, so `records.models.X` (migrations, settings, `from records.models import Evaluation`)
keeps naming the same object.
"""

from records.models.assessment import BaselineRole, Decision
from records.models.base import (
    BaselineKind,
    BaselineStatus,
    CuratedModel,
    Direction,
    EvidenceSupport,
    MeasuredBy,
    ReadingMethod,
    Relation,
    SourceKind,
    UncertaintyKind,
    public_record_kinds,
)
from records.models.catalogue import (
    Area,
    ArxivIdField,
    BestMarking,
    Configuration,
    Context,
    Dataset,
    DOIField,
    Limitation,
    Protocol,
    Source,
    normalise_arxiv_id,
    normalise_doi,
    validate_arxiv_id,
    validate_doi,
    validate_partial_date,
)
from records.models.evidence import Evaluation
from records.models.evidence_rules import QUOTED_READINGS, comparable_q, evaluation_comparable, quote_problem_of
from records.models.identity import (
    GenomicModel,
    IdentityBasis,
    ModelAlias,
    ModelChange,
    ModelChangeKind,
    TaskEquivalence,
    Work,
    alias_key,
)
from records.models.import_jobs import (
    IMPORT_JOB_FINISHED,
    ImportJob,
    ImportJobEvent,
    ImportJobOutcome,
    ImportJobStatus,
)
from records.models.results import Result
from records.models.search import SearchEntry, SearchKind
from records.models.snapshots import ImportSnapshot
from records.models.statements import EvidenceRow
from records.models.summary import ProtocolChanges, ProtocolSummary
from records.rules.units import Scale

__all__ = [
    "public_record_kinds",
    "QUOTED_READINGS",
    "quote_problem_of",
    "IMPORT_JOB_FINISHED",
    "Area",
    "ArxivIdField",
    "BaselineKind",
    "BaselineRole",
    "BaselineStatus",
    "Configuration",
    "Context",
    "CuratedModel",
    "DOIField",
    "Dataset",
    "Decision",
    "Direction",
    "Scale",
    "BestMarking",
    "IdentityBasis",
    "Evaluation",
    "GenomicModel",
    "EvidenceRow",
    "EvidenceSupport",
    "ImportJob",
    "ImportJobEvent",
    "ImportJobOutcome",
    "ImportJobStatus",
    "ImportSnapshot",
    "Limitation",
    "MeasuredBy",
    "ModelAlias",
    "ModelChange",
    "ModelChangeKind",
    "Protocol",
    "ProtocolChanges",
    "ProtocolSummary",
    "ReadingMethod",
    "Relation",
    "Result",
    "SearchEntry",
    "SearchKind",
    "Source",
    "SourceKind",
    "TaskEquivalence",
    "UncertaintyKind",
    "Work",
    "alias_key",
    "comparable_q",
    "evaluation_comparable",
    "normalise_arxiv_id",
    "normalise_doi",
    "validate_arxiv_id",
    "validate_doi",
    "validate_partial_date",
]
