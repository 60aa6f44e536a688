"""The tables of a release: their Table Schemas (fields, keys, descriptions) as `releases.bundle.TableSpec`s.

What each column means lives here; `releases.exporter` reads the catalogue's rows for them and
`releases.bundle` writes them. A change here changes every release's datapackage.json.
"""

from __future__ import annotations

from records import models as m
from records.agreement import AGREEMENT_RULE, Verdict
from releases.bundle import Field, ForeignKey, TableSpec
from reviews.models import ReviewState

REVIEW_STATES = tuple(ReviewState.values)
MEASURED_BY = tuple(m.MeasuredBy.values)
BASELINE_KINDS = tuple(m.BaselineKind.values)
SUBJECT_KINDS = ("model", "configuration")
VERDICTS = tuple(Verdict.LABELS)
COUNTED_AS = ("compared", "copy")


# ------------------------------------------------------------------ schemas


def _coverage_fields() -> tuple[Field, ...]:
    fields = [
        Field("protocol_id", "string", title="Protocol", description="Stable id of the protocol."),
        Field("title", "string", required=True),
        Field("metric_name", "string"),
        Field("metric_unit", "string", required=True, description="Every result of the protocol is in this unit."),
        Field("metric_direction", "string", required=True, enum=tuple(m.Direction.values)),
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
            Field(f"{kind}_status", "string", enum=tuple(m.BaselineStatus.values)),
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
            enum=tuple(m.Direction.values),
            description="none: descriptive, never ranked.",
        ),
        Field(
            "value",
            "number",
            required=True,
            description="The exact value with the precision it was printed with (0.410 is not 0.41).",
        ),
        Field("unit", "string", required=True),
        Field("printed_value", "string", required=True, description="The value as the source prints it."),
        Field(
            "relation",
            "string",
            required=True,
            enum=tuple(m.Relation.values),
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
            enum=tuple(m.UncertaintyKind.values),
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
            enum=tuple(m.ReadingMethod.values),
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
            enum=tuple(m.Direction.values),
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
        Field("kind", "string", required=True, enum=tuple(m.SourceKind.values)),
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
        Field("support", "string", required=True, enum=tuple(m.EvidenceSupport.values)),
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

WORK_TABLE = TableSpec(
    name="work_table",
    title="Works",
    description="One row per work: a paper, preprint, dataset or repository as one work, whatever versions of it (source_table) were read.",
    fields=(
        Field("work_id", "string", description="Stable id of the work."),
        Field("title", "string", required=True),
        Field("authors_short", "string"),
    ),
    primary_key=("work_id",),
)

MODEL_TABLE = TableSpec(
    name="model_table",
    title="Models",
    description="One row per model: a released checkpoint, or an architecture where the paper gives no checkpoint.",
    fields=(
        Field("model_id", "string", description="Stable id of the model."),
        Field("name", "string", required=True),
        Field("family", "string"),
        Field("parameter_count", "integer", description="Nominal number of parameters."),
        Field("public_id", "string", description="Where the checkpoint is published."),
        Field("revision", "string", description="The checkpoint's revision, when one is named."),
        Field("introduced_in_work_id", "string", description="The work that introduced the model (work_table)."),
        Field(
            "merged_into_model_id",
            "string",
            description="Set by a merge: this model is the same as that one (a row of this table).",
        ),
    ),
    primary_key=("model_id",),
    foreign_keys=(
        ForeignKey(("introduced_in_work_id",), "work_table", ("work_id",)),
        ForeignKey(("merged_into_model_id",), "model_table", ("model_id",)),
    ),
)

MODEL_ALIAS_TABLE = TableSpec(
    name="model_alias_table",
    title="Model aliases",
    description="One row per name a source prints for a model; one alias names one model.",
    fields=(
        Field("alias_id", "string", description="Stable id of the alias."),
        Field("model_id", "string", required=True, description="The model it names (model_table)."),
        Field("alias", "string", required=True, description="The name as printed."),
        Field(
            "alias_key",
            "string",
            required=True,
            description="The alias in one spelling, as names are matched: case, accents, spaces and punctuation other than . and + do not count.",
        ),
        Field("source_id", "string", description="The source that prints it."),
        Field("locator", "string", description="Where the source prints it."),
    ),
    primary_key=("alias_id",),
    foreign_keys=(
        ForeignKey(("model_id",), "model_table", ("model_id",)),
        ForeignKey(("source_id",), "source_table", ("source_id",)),
    ),
)

TASK_EQUIVALENCE_TABLE = TableSpec(
    name="task_equivalence_table",
    title="Task equivalences",
    description="One row per pair of tasks of different suites that a source says are the same data (followed transitively, they make a task family).",
    fields=(
        Field("task_equivalence_id", "string", description="Stable id of the equivalence."),
        Field("task_id", "string", required=True, description="A task (dataset_table)."),
        Field("same_as_id", "string", required=True, description="The task it is the same data as (dataset_table)."),
        Field("source_id", "string", required=True, description="The source that says so."),
        Field("locator", "string", required=True),
        Field("quote", "string", required=True, description="The source's words, verbatim."),
    ),
    primary_key=("task_equivalence_id",),
    foreign_keys=(
        ForeignKey(("task_id",), "dataset_table", ("dataset_id",)),
        ForeignKey(("same_as_id",), "dataset_table", ("dataset_id",)),
        ForeignKey(("source_id",), "source_table", ("source_id",)),
    ),
)

AGREEMENTS = TableSpec(
    name="agreements",
    title="Agreements",
    description=(
        "One row per subject (a model, or a configuration that names none) x task family x metric: whether its "
        f"independent measurements agree. The rule: {AGREEMENT_RULE} Each measurement and every printing of it "
        "are rows of agreement_measurements."
    ),
    fields=(
        Field(
            "agreement_id",
            "string",
            description="<subject kind>:<subject stable id>|<task stable id>|<metric>.",
        ),
        Field("subject_kind", "string", required=True, enum=SUBJECT_KINDS),
        Field("model_id", "string", description="The model (model_table), when the subject is a model."),
        Field(
            "configuration_id",
            "string",
            description="The configuration (configuration_table), when the subject is a configuration naming no model.",
        ),
        Field("subject_name", "string", required=True),
        Field(
            "task_id",
            "string",
            required=True,
            description="The task family's task with the first stable id (dataset_table).",
        ),
        Field("task_name", "string", required=True),
        Field(
            "family_task_ids",
            "string",
            required=True,
            description="Every task of the family (the task and those a source says are the same data), space-separated.",
        ),
        Field("metric", "string", required=True, description="The protocols' metric short name."),
        Field(
            "verdict",
            "string",
            required=True,
            enum=VERDICTS,
            description="; ".join(f"{value}: {label}" for value, label in Verdict.LABELS.items()) + ".",
        ),
        Field("measurements", "integer", required=True, description="Measurements compared, each counted once."),
        Field("printings", "integer", required=True, description="Rows that print them (copies included)."),
    ),
    primary_key=("agreement_id",),
    foreign_keys=(
        ForeignKey(("model_id",), "model_table", ("model_id",)),
        ForeignKey(("configuration_id",), "configuration_table", ("configuration_id",)),
        ForeignKey(("task_id",), "dataset_table", ("dataset_id",)),
    ),
)

AGREEMENT_MEASUREMENTS = TableSpec(
    name="agreement_measurements",
    title="Agreement measurements",
    description=(
        "One row per result an agreement counts: the printing compared for each measurement (counted_as "
        "compared) and every other printing of the same measurement (counted_as copy: a repeat, a copy of a "
        "number first published elsewhere, another version of the same work)."
    ),
    fields=(
        Field("agreement_id", "string", description="The agreement (agreements)."),
        Field("result_id", "string", description="The result (model_evaluation_matrix)."),
        Field("evaluation_id", "string", required=True, description="The result's evaluation."),
        Field(
            "value",
            "number",
            required=True,
            description="The value exactly as recorded, every printed digit kept (0.410 is not 0.41), in its unit.",
        ),
        Field("unit", "string", required=True),
        Field("measured_by", "string", required=True, enum=MEASURED_BY),
        Field(
            "review_state", "string", required=True, enum=REVIEW_STATES, description="Review state of the evaluation."
        ),
        Field("counted_as", "string", required=True, enum=COUNTED_AS),
        Field(
            "counted_with_result_id",
            "string",
            required=True,
            description="The result compared for this measurement (this row's own, when it is compared).",
        ),
    ),
    primary_key=("agreement_id", "result_id"),
    foreign_keys=(
        ForeignKey(("agreement_id",), "agreements", ("agreement_id",)),
        ForeignKey(("result_id", "evaluation_id"), "model_evaluation_matrix", ("result_id", "evaluation_id")),
        ForeignKey(("counted_with_result_id",), "model_evaluation_matrix", ("result_id",)),
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
