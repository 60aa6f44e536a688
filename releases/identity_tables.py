"""The identity tables of a release: works, models and their aliases, task equivalences, and the
agreements `records.agreement` computes with the measurements each counts, as Table Schemas
(`releases.bundle.TableSpec`s; `releases.table_schemas` names every table of a release, these among them).

Keys are the records' stable ids (an agreement's is built from its subject, task family and metric);
foreign keys point into these tables and into `releases.table_schemas`' own (by name: a spec names the
resource it references).
"""

from __future__ import annotations

from records.agreement import AGREEMENT_RULE, MEASUREMENT_RULE, Verdict
from records.models import IdentityBasis, MeasuredBy
from records.rules.evidence import Discrepancy
from releases.bundle import Field, ForeignKey, TableSpec
from releases.bundle.package import EXACT_VALUE_NOTE
from reviews.models import ReviewState

REVIEW_STATES = tuple(ReviewState.values)
MEASURED_BY = tuple(MeasuredBy.values)
SUBJECT_KINDS = ("model", "configuration")
VERDICTS = tuple(Verdict.LABELS)
COUNTED_AS = ("compared", "copy", *Discrepancy.LABELS)
BASIS_FIELD = Field(
    "basis",
    "string",
    required=True,
    enum=tuple(IdentityBasis.values),
    description="stated: the source says so (source, locator, quote); inferred: a curator concludes it (reason).",
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
    description=(
        "One row per name printed for a model, with who says it names the model: the source that prints it "
        "(basis stated) or a curator (basis inferred, with the reason). One model may hold several spellings of one "
        "name (one alias_key), each with its source; one alias_key names one model."
    ),
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
        BASIS_FIELD,
        Field("quote", "string", description="The source's words that print the name, verbatim."),
        Field("reason", "string", description="For an inferred alias: why a curator takes it for the model."),
        Field("review_state", "string", required=True, enum=REVIEW_STATES, description="Review state of the alias."),
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
    description=(
        "One row per pair of tasks of different suites recorded as the same data, stated by a source (basis "
        "stated: source, locator, quote) or inferred by a curator (basis inferred: reason). Followed transitively, "
        "those not excluded make a task family."
    ),
    fields=(
        Field("task_equivalence_id", "string", description="Stable id of the equivalence."),
        Field("task_id", "string", required=True, description="A task (dataset_table)."),
        Field("same_as_id", "string", required=True, description="The task it is the same data as (dataset_table)."),
        Field("source_id", "string", description="The source that says so."),
        Field("locator", "string"),
        Field("quote", "string", description="The source's words, verbatim."),
        BASIS_FIELD,
        Field("reason", "string", description="For an inferred equivalence: why a curator concludes it."),
        Field(
            "review_state", "string", required=True, enum=REVIEW_STATES, description="Review state of the equivalence."
        ),
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
        f"independent measurements agree. The rule: {AGREEMENT_RULE} {MEASUREMENT_RULE} Each measurement and every printing of it "
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
        Field(
            "verdict_label",
            "string",
            required=True,
            description='The verdict in words, with what its printings say ("consistent; changed between versions").',
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
        "compared) and every other printing of the same measurement: counted_as copy where it prints the same "
        "value (a repeat, a copy of a number first published elsewhere, another version of the same work), else "
        "how it disagrees: "
        + "; ".join(f"{value} ({label})" for value, label in Discrepancy.LABELS.items())
        + ". Each row carries its source's locator and verbatim quote."
    ),
    fields=(
        Field("agreement_id", "string", description="The agreement (agreements)."),
        Field("result_id", "string", description="The result (model_evaluation_matrix)."),
        Field("evaluation_id", "string", required=True, description="The result's evaluation."),
        Field(
            "value",
            "number",
            required=True,
            description=EXACT_VALUE_NOTE,
        ),
        Field("unit", "string", required=True),
        Field(
            "source_id",
            "string",
            description="The source that prints it (source_table); empty for the portal's own run.",
        ),
        Field("locator", "string", description="Where the source prints it."),
        Field("quote", "string", description="The source's words, verbatim."),
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
        ForeignKey(("source_id",), "source_table", ("source_id",)),
        ForeignKey(("counted_with_result_id",), "model_evaluation_matrix", ("result_id",)),
    ),
)
