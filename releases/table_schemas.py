"""The tables of a release: their Table Schemas (fields, keys, descriptions) as `releases.bundle.TableSpec`s
(those of works, models, aliases, task equivalences and agreements in `releases.identity_tables`).

What each column means lives here; `releases.catalogue_rows` reads the catalogue's rows for them and
`releases.bundle` writes them. A change here changes every release's datapackage.json.
"""

from __future__ import annotations

from records.models import (
    BaselineKind,
    BaselineStatus,
    Direction,
    EvidenceSupport,
    ReadingMethod,
    Relation,
    SourceKind,
    UncertaintyKind,
)
from releases.bundle import Field, ForeignKey, TableSpec
from releases.bundle.package import EXACT_VALUE_NOTE
from releases.identity_tables import (
    AGREEMENT_MEASUREMENTS,
    AGREEMENTS,
    MEASURED_BY,
    MODEL_ALIAS_TABLE,
    MODEL_TABLE,
    REVIEW_STATES,
    TASK_EQUIVALENCE_TABLE,
    WORK_TABLE,
)

BASELINE_KINDS = tuple(BaselineKind.values)


# ------------------------------------------------------------------ schemas


def _coverage_fields() -> tuple[Field, ...]:
    fields = [
        Field("protocol_id", "string", title="Protocol", description="Stable id of the protocol."),
        Field("title", "string", required=True),
        Field("metric_name", "string"),
        Field("metric_unit", "string", required=True, description="Every result of the protocol is in this unit."),
        Field("metric_direction", "string", required=True, enum=tuple(Direction.values)),
        Field(
            "review_state",
            "string",
            required=True,
            enum=REVIEW_STATES,
            description="Review state of the protocol record.",
        ),
        Field(
            "comparable",
            "boolean",
            required=True,
            description="True when the protocol's source was checked and it is not excluded.",
        ),
        Field("concern", "string", description="Why the protocol is excluded from comparison, when it is."),
        Field("source_id", "string", required=True, description="Stable id of the protocol's source (source_table)."),
        Field("source_locator", "string"),
        Field("evaluations", "integer", required=True, description="Evaluations of the protocol, in any review state."),
    ]
    fields += [
        Field(
            f"evaluations_{state}", "integer", required=True, description=f"Evaluations whose review state is {state}."
        )
        for state in REVIEW_STATES
    ]
    fields += [
        Field(
            f"evaluations_measured_by_{party}",
            "integer",
            required=True,
            description=f"Evaluations measured by {party.replace('_', ' ')}.",
        )
        for party in MEASURED_BY
    ]
    fields.append(Field("results", "integer", required=True, description="Result rows of the protocol's evaluations."))
    for kind in BASELINE_KINDS:
        fields += [
            Field(
                f"{kind}_role_id", "string", description=f"Stable id of the protocol's {kind} baseline role, if any."
            ),
            Field(f"{kind}_status", "string", enum=tuple(BaselineStatus.values)),
            Field(
                f"{kind}_configuration_id",
                "string",
                description="The configuration that fills the role, once selected.",
            ),
            Field(
                f"{kind}_measured",
                "boolean",
                description="True when the role is not retired and a source-checked evaluation of the protocol measures its configuration.",
            ),
        ]
    fields.append(
        Field(
            "has_reviewed_recipe", "boolean", required=True, description="Whether a reviewed benchmark recipe exists."
        )
    )
    return tuple(fields)


PROTOCOL_COVERAGE = TableSpec(
    name="protocol_coverage",
    title="Protocol coverage",
    description="One row per protocol: its evaluations counted by review state and by who measured them, its baseline roles, its recipe.",
    fields=_coverage_fields(),
    primary_key=("protocol_id",),
    foreign_keys=(ForeignKey(("source_id",), "source_table", ("source_id",)),),
)

MODEL_EVALUATION_MATRIX = TableSpec(
    name="model_evaluation_matrix",
    title="Model evaluation matrix",
    description=(
        "One row per result: a configuration evaluated under a protocol on a dataset or task. Compare only rows "
        "of the same protocol, dataset and relation (and reference) whose comparable column is true; excluded rows "
        "carry their concern, and a repeat (the same measurement reported again) is not comparable while its "
        "original is."
    ),
    fields=(
        Field("result_id", "string", description="Stable id of the result."),
        Field("evaluation_id", "string", required=True),
        Field("protocol_id", "string", required=True),
        Field("configuration_id", "string", required=True),
        Field("configuration_name", "string", required=True),
        Field(
            "model_id",
            "string",
            description="The model the configuration tests (model_table); empty when the configuration names none.",
        ),
        Field("model_name", "string", description="The model's name."),
        Field(
            "dataset_id",
            "string",
            required=True,
            description="The task (or dataset) measured: its stable id (dataset_table).",
        ),
        Field("dataset_name", "string", required=True, description="The task's (or dataset's) name."),
        Field("suite_id", "string", description="The suite the task belongs to, when it is a task."),
        Field("task_key", "string", description="The task's name inside its suite."),
        Field("metric_name", "string"),
        Field(
            "metric_direction",
            "string",
            required=True,
            enum=tuple(Direction.values),
            description="none: descriptive, never ranked.",
        ),
        Field(
            "value",
            "number",
            required=True,
            description=EXACT_VALUE_NOTE,
        ),
        Field("unit", "string", required=True),
        Field("printed_value", "string", required=True, description="The value as the source prints it."),
        Field(
            "relation",
            "string",
            required=True,
            enum=tuple(Relation.values),
            description="absolute, or a ratio or difference to the reference configuration.",
        ),
        Field(
            "reference_configuration_id",
            "string",
            description="For a relative result: the configuration it is relative to.",
        ),
        Field(
            "uncertainty_kind",
            "string",
            enum=tuple(UncertaintyKind.values),
            description="sd, se, ci or range; empty when none is reported.",
        ),
        Field("uncertainty_value", "number", description="The printed ± figure."),
        Field("lower_bound", "number"),
        Field("upper_bound", "number"),
        Field("uncertainty_level", "number", description="A confidence interval's level in percent."),
        Field("num_runs", "integer", description="n: runs, seeds or folds behind the value."),
        Field("uncertainty_note", "string", description="The source's words on uncertainty."),
        Field("aggregation", "string"),
        Field("setup", "string", description="The evaluation set-up."),
        Field("measured_by", "string", required=True, enum=MEASURED_BY, description="Who ran the measurement."),
        Field("measured_by_name", "string", description="The third party that ran it."),
        Field(
            "repeats_evaluation_id", "string", description="The evaluation whose measurement this one reports again."
        ),
        Field(
            "reading_method",
            "string",
            required=True,
            enum=tuple(ReadingMethod.values),
            description="How the value was read off its source.",
        ),
        Field(
            "review_state", "string", required=True, enum=REVIEW_STATES, description="Review state of the evaluation."
        ),
        Field(
            "comparable",
            "boolean",
            required=True,
            description="True when the evaluation's source was checked, it is not excluded, and it does not repeat a compared evaluation.",
        ),
        Field("concern", "string", description="Why the evaluation is excluded from comparison, when it is."),
        Field(
            "source_id",
            "string",
            description="Stable id of the source reporting the value (empty when measured by this portal).",
        ),
        Field("source_locator", "string"),
        Field("quote", "string", description="The source's words, verbatim."),
        Field(
            "original_source_id",
            "string",
            description="A copy: the catalogued source that first published the number (source_table).",
        ),
        Field(
            "original_citation",
            "string",
            description="A copy of a number first published in a source that is not catalogued: that source, cited.",
        ),
        Field("original_locator", "string", description="Where in the original the number is printed."),
        Field(
            "original_basis",
            "string",
            description="A copy: stated (its source says whose number it reports) or inferred (a curator concludes it).",
        ),
        Field("original_reason", "string", description="For an inferred copy: why a curator concludes it."),
    ),
    primary_key=("result_id",),
    foreign_keys=(
        ForeignKey(("protocol_id",), "protocol_table", ("protocol_id",)),
        ForeignKey(("configuration_id",), "configuration_table", ("configuration_id",)),
        ForeignKey(("model_id",), "model_table", ("model_id",)),
        ForeignKey(("reference_configuration_id",), "configuration_table", ("configuration_id",)),
        ForeignKey(("dataset_id",), "dataset_table", ("dataset_id",)),
        ForeignKey(("source_id",), "source_table", ("source_id",)),
        ForeignKey(("original_source_id",), "source_table", ("source_id",)),
    ),
)

PROTOCOL_TABLE = TableSpec(
    name="protocol_table",
    title="Protocols",
    description="One row per protocol: what it measures (metric, unit, direction), on which datasets, its procedure and limitations.",
    fields=(
        Field("protocol_id", "string", description="Stable id of the protocol."),
        Field("title", "string", required=True),
        Field("summary", "string", required=True),
        Field("procedure", "string"),
        Field("version_label", "string"),
        Field("metric_name", "string", required=True),
        Field("metric_short_name", "string", required=True),
        Field("metric_description", "string"),
        Field("metric_unit", "string", required=True, description="Every result of the protocol is in this unit."),
        Field(
            "metric_direction",
            "string",
            required=True,
            enum=tuple(Direction.values),
            description="lower or higher is better; none: descriptive, never ranked.",
        ),
        Field("dataset_ids", "string", description="The datasets it uses (dataset_table), space-separated."),
        Field("limitations", "string", description="Its limitations in order, as a JSON array of texts."),
        Field("source_id", "string", required=True),
        Field("source_locator", "string"),
        Field("review_state", "string", required=True, enum=REVIEW_STATES),
        Field("comparable", "boolean", required=True),
        Field("concern", "string"),
    ),
    primary_key=("protocol_id",),
    foreign_keys=(ForeignKey(("source_id",), "source_table", ("source_id",)),),
)

DATASET_TABLE = TableSpec(
    name="dataset_table",
    title="Datasets and tasks",
    description="One row per dataset; a suite's tasks name their suite, with their sizes, classes, sequence length and metric.",
    fields=(
        Field("dataset_id", "string", description="Stable id of the dataset or task."),
        Field("name", "string", required=True),
        Field("description", "string"),
        Field("suite_id", "string", description="For a task: its suite (a row of this table)."),
        Field("task_key", "string"),
        Field("position", "integer", required=True, description="Order of the task inside its suite."),
        Field("train_size", "integer"),
        Field("test_size", "integer"),
        Field("num_classes", "integer"),
        Field("sequence_length_bp", "integer"),
        Field("metric", "string"),
        Field("source_id", "string"),
        Field("source_locator", "string"),
    ),
    primary_key=("dataset_id",),
    foreign_keys=(
        ForeignKey(("suite_id",), "dataset_table", ("dataset_id",)),
        ForeignKey(("source_id",), "source_table", ("source_id",)),
    ),
)

CONFIGURATION_TABLE = TableSpec(
    name="configuration_table",
    title="Configurations",
    description="One row per tested configuration: a model (model_table) plus how it was tested.",
    fields=(
        Field("configuration_id", "string", description="Stable id of the configuration."),
        Field("name", "string", required=True),
        Field("short_name", "string"),
        Field("family", "string"),
        Field("parameter_count", "integer"),
        Field("method", "string"),
        Field("description", "string"),
        Field("source_id", "string"),
        Field("model_id", "string", description="The model tested (model_table), when it is known."),
    ),
    primary_key=("configuration_id",),
    foreign_keys=(
        ForeignKey(("source_id",), "source_table", ("source_id",)),
        ForeignKey(("model_id",), "model_table", ("model_id",)),
    ),
)

SOURCE_TABLE = TableSpec(
    name="source_table",
    title="Sources",
    description="One row per source: papers, preprints, dataset and model cards, leaderboards, repositories and web pages.",
    fields=(
        Field("source_id", "string", description="Stable id of the source."),
        Field("title", "string", required=True),
        Field("venue", "string"),
        Field("kind", "string", required=True, enum=tuple(SourceKind.values)),
        Field("authors_short", "string"),
        Field("citation", "string"),
        Field(
            "published_date",
            "string",
            description="As precise as known: YYYY, YYYY-MM or YYYY-MM-DD.",
            pattern=r"^\d{4}(-\d{2}(-\d{2})?)?$",
        ),
        Field("doi", "string"),
        Field("pmcid", "string"),
        Field("arxiv_id", "string"),
        Field("arxiv_version", "string", description="The arXiv version read."),
        Field("url", "string"),
        Field("commit", "string", description="For a repository: the commit read."),
        Field("copy_consulted", "string"),
        Field(
            "work_id",
            "string",
            description="The work (work_table) this source is a version of: a preprint version, the published paper, a repository at a commit.",
        ),
    ),
    primary_key=("source_id",),
    foreign_keys=(ForeignKey(("work_id",), "work_table", ("work_id",)),),
)

EVIDENCE = TableSpec(
    name="evidence",
    title="Evidence",
    description="One row per evidence statement about a protocol or evaluation, with its source, locator and quote.",
    fields=(
        Field("evidence_id", "string", description="Stable id of the evidence row."),
        Field("protocol_id", "string", required=True),
        Field("evaluation_id", "string"),
        Field("property_name", "string"),
        Field("statement", "string", required=True),
        Field("source_id", "string", required=True),
        Field("locator", "string"),
        Field("quote", "string"),
        Field("support", "string", required=True, enum=tuple(EvidenceSupport.values)),
        Field("review_state", "string", required=True, enum=REVIEW_STATES),
        Field("comparable", "boolean", required=True),
        Field("concern", "string"),
    ),
    primary_key=("evidence_id",),
    foreign_keys=(
        ForeignKey(("protocol_id",), "protocol_table", ("protocol_id",)),
        ForeignKey(("source_id",), "source_table", ("source_id",)),
    ),
)

TABLES = (
    PROTOCOL_COVERAGE,
    MODEL_EVALUATION_MATRIX,
    PROTOCOL_TABLE,
    DATASET_TABLE,
    CONFIGURATION_TABLE,
    SOURCE_TABLE,
    EVIDENCE,
    WORK_TABLE,
    MODEL_TABLE,
    MODEL_ALIAS_TABLE,
    TASK_EQUIVALENCE_TABLE,
    AGREEMENTS,
    AGREEMENT_MEASUREMENTS,
)
