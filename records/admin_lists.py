"""The catalogue's admin lists: which columns each shows, how each is sorted and filtered.

Each list starts with its identifying column (a title or name: the link to the record), then a few
chosen facts, the review state and the last change where the record has them. Long texts are cut to
two lines with their whole in a tooltip (common.admin.clamped); static/css/admin.css sizes the
columns so that every list fits 1,280 px beside its filters (tests/browser/test_admin_lists.py).
Every column is read with the page's rows (list_select_related, annotations, one prefetch): a list
runs the same queries for 1 row as for 100.

The admins in records.admin and records.admin_identity take these as their first base class.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Count, FloatField, IntegerField, OuterRef, Prefetch, QuerySet, Subquery
from django.db.models.functions import Cast, Coalesce
from django.http import HttpRequest

from common.admin import ChangedColumn, ValuesListFilter, clamped
from records.models import (
    BaselineRole,
    Configuration,
    Dataset,
    Decision,
    Evaluation,
    EvidenceRow,
    GenomicModel,
    IdentityBasis,
    Limitation,
    ModelAlias,
    Protocol,
    Result,
    Source,
    TaskEquivalence,
    Work,
)
from records.values import display
from reviews.admin_lists import ReviewStateColumn, review_state_cell


def _count(queryset: QuerySet, link: str) -> Coalesce:
    """How many rows of `queryset` point at the listed record through `link` (0 for none), as one
    subquery of the list's own statement."""
    per_record = queryset.filter(**{link: OuterRef("pk")}).order_by().values(link).annotate(n=Count("pk"))
    return Coalesce(Subquery(per_record.values("n"), output_field=IntegerField()), 0)


def _named(record: Any, attribute: str = "name") -> str:
    return "" if record is None else str(getattr(record, attribute))


def _value_text(result: Result) -> str:
    return f"{display(result.value)} {result.unit}"


def _parameters(count: int | None) -> str:
    return "" if count is None else f"{count:,}"


class ListColumns(ChangedColumn):
    """What every catalogue list shares: the protocol, configuration and task columns of records that
    have them (each with its whole name and stable id in the tooltip)."""

    fitted_list = True  # static/css/admin.css sizes the columns (templates/admin/base_site.html)

    @admin.display(description="protocol", ordering="protocol__title")
    def protocol_title(self, record: Any) -> str | None:
        return clamped(record.protocol.title, full=f"{record.protocol.title} ({record.protocol.stable_id})")

    @admin.display(description="configuration", ordering="configuration__name")
    def configuration_name(self, record: Any) -> str | None:
        configuration = record.configuration
        if configuration is None:
            return None
        return clamped(configuration.short_name or configuration.name, full=configuration.name)


# -- catalogue (records.admin)


class SourceList(ListColumns):
    list_display = ("source_title", "authors", "venue_name", "published_date", "kind", "work_title")
    list_display_links = ("source_title",)
    list_filter = ("kind", ("venue", ValuesListFilter))
    list_select_related = ("work",)  # nullable: Django's automatic select_related leaves it out

    @admin.display(description="source", ordering="title")
    def source_title(self, source: Source) -> str | None:
        return clamped(source.title, full=f"{source.title} ({source.stable_id})")

    @admin.display(description="authors", ordering="authors_short")
    def authors(self, source: Source) -> str | None:
        return clamped(source.authors_short)

    @admin.display(description="venue", ordering="venue")
    def venue_name(self, source: Source) -> str | None:
        return clamped(source.venue)

    @admin.display(description="work", ordering="work__title")
    def work_title(self, source: Source) -> str | None:
        return clamped(_named(source.work, "title"))


class VocabularyList(ListColumns):
    list_display = ("label", "stable_id", "changed")
    list_display_links = ("label",)


class DatasetList(ListColumns):
    list_display = ("dataset_name", "suite_name", "sizes", "num_classes", "sequence_length_bp", "metric")
    list_display_links = ("dataset_name",)
    list_filter = (("suite", admin.RelatedOnlyFieldListFilter), ("metric", ValuesListFilter), "num_classes")
    list_select_related = ("suite",)  # nullable: Django's automatic select_related leaves it out

    @admin.display(description="dataset or task", ordering="name")
    def dataset_name(self, dataset: Dataset) -> str | None:
        return clamped(dataset.name, full=f"{dataset.name} ({dataset.stable_id})")

    @admin.display(description="suite", ordering="suite__name")
    def suite_name(self, dataset: Dataset) -> str | None:
        return clamped(_named(dataset.suite))

    @admin.display(description="train / test", ordering="train_size")
    def sizes(self, dataset: Dataset) -> str | None:
        if dataset.train_size is None and dataset.test_size is None:
            return None
        return " / ".join(_parameters(size) or "-" for size in (dataset.train_size, dataset.test_size))


class ConfigurationList(ListColumns):
    list_display = ("tested_name", "model_name", "family", "method_name", "parameters")
    list_display_links = ("tested_name",)
    list_filter = (("family", ValuesListFilter), ("method", ValuesListFilter))
    list_select_related = ("model",)

    @admin.display(description="configuration", ordering="name")
    def tested_name(self, configuration: Configuration) -> str | None:
        return clamped(configuration.name, full=f"{configuration.name} ({configuration.stable_id})")

    @admin.display(description="model", ordering="model__name")
    def model_name(self, configuration: Configuration) -> str | None:
        return clamped(_named(configuration.model))

    @admin.display(description="method", ordering="method")
    def method_name(self, configuration: Configuration) -> str | None:
        return clamped(configuration.method)

    @admin.display(description="parameters", ordering="parameter_count")
    def parameters(self, configuration: Configuration) -> str | None:
        return _parameters(configuration.parameter_count) or None


class ProtocolList(ReviewStateColumn, ListColumns):
    list_display = ("title_of_protocol", "metric", "evaluation_count", "review", "changed")
    list_display_links = ("title_of_protocol",)
    list_filter = ("review_state", "metric_direction", "areas", "contexts")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Protocol]:
        evaluations = _count(Evaluation.objects.all(), "protocol")
        return super().get_queryset(request).annotate(evaluation_total=evaluations)  # type: ignore[misc]

    @admin.display(description="protocol", ordering="title")
    def title_of_protocol(self, protocol: Protocol) -> str | None:
        return clamped(protocol.title, full=f"{protocol.title} ({protocol.stable_id})")

    @admin.display(description="metric", ordering="metric_name")
    def metric(self, protocol: Protocol) -> str | None:
        unit = (
            f" ({protocol.metric_unit})"
            if protocol.metric_unit and protocol.metric_unit != protocol.metric_name
            else ""
        )
        direction = f", {protocol.get_metric_direction_display()}" if protocol.metric_direction else ""
        return clamped(f"{protocol.metric_name}{unit}{direction}")

    @admin.display(description="evaluations", ordering="evaluation_total")
    def evaluation_count(self, protocol: Protocol) -> int:
        return protocol.evaluation_total  # type: ignore[attr-defined]  # annotated by get_queryset


class EvaluationList(ReviewStateColumn, ListColumns):
    list_display = (
        "evaluation_title",
        "protocol_title",
        "task_name",
        "configuration_name",
        "value_text",
        "review",
        "changed",
    )
    list_display_links = ("evaluation_title",)
    list_filter = (
        "review_state",
        "measured_by",
        "reading_method",
        ("protocol", admin.RelatedOnlyFieldListFilter),
        ("configuration", admin.RelatedOnlyFieldListFilter),
    )
    list_select_related = ("protocol", "configuration", "dataset")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Evaluation]:
        results = Prefetch("results", queryset=Result.objects.only("evaluation_id", "stable_id", "value", "unit"))
        return super().get_queryset(request).prefetch_related(results)  # type: ignore[misc]

    @admin.display(description="evaluation", ordering="title")
    def evaluation_title(self, evaluation: Evaluation) -> str | None:
        return clamped(evaluation.title, full=f"{evaluation.title} ({evaluation.stable_id})")

    @admin.display(description="task or dataset", ordering="dataset__name")
    def task_name(self, evaluation: Evaluation) -> str | None:
        return clamped(_named(evaluation.dataset))

    @admin.display(description="value")
    def value_text(self, evaluation: Evaluation) -> str | None:
        """The first result's value and unit, and how many more the evaluation has."""
        results = list(evaluation.results.all())  # in stable id order (Result's ordering)
        if not results:
            return None
        more = f" (+{len(results) - 1} more)" if len(results) > 1 else ""
        whole = "; ".join(_value_text(result) for result in results)
        return clamped(_value_text(results[0]) + more, full=whole)


class ResultList(ListColumns):
    list_display = ("result_of", "value_text", "printed", "relation_text", "review", "changed")
    list_display_links = ("result_of",)
    list_filter = (
        "evaluation__review_state",
        ("evaluation__protocol", admin.RelatedOnlyFieldListFilter),
        "unit",
        "relation",
        "uncertainty_kind",
    )
    list_select_related = ("evaluation", "reference_configuration")

    @admin.display(description="result of", ordering="evaluation__title")
    def result_of(self, result: Result) -> str | None:
        return clamped(result.evaluation.title, full=f"{result.evaluation.title} ({result.stable_id})")

    @admin.display(description="value", ordering=Cast("value", FloatField()))
    def value_text(self, result: Result) -> str | None:
        """Sorted as a number (the value is stored as its exact text, where "10" sorts before "9")."""
        return clamped(_value_text(result))

    @admin.display(description="printed", ordering="printed_value")
    def printed(self, result: Result) -> str | None:
        return clamped(result.printed_value)

    @admin.display(description="relation", ordering="relation")
    def relation_text(self, result: Result) -> str | None:
        reference = result.reference_configuration
        if reference is None:
            return result.get_relation_display()
        return clamped(f"{result.get_relation_display()} to {reference.short_name or reference.name}")

    @admin.display(description="review state", ordering="evaluation__review_state")
    def review(self, result: Result) -> str | None:
        """The evaluation's: a result is reviewed with it."""
        return review_state_cell(result.evaluation.review_state)


class EvidenceRowList(ReviewStateColumn, ListColumns):
    list_display = ("statement_text", "protocol_title", "property_name", "support", "review", "changed")
    list_display_links = ("statement_text",)
    list_filter = ("review_state", "support", ("protocol", admin.RelatedOnlyFieldListFilter))
    list_select_related = ("protocol",)

    @admin.display(description="statement", ordering="statement")
    def statement_text(self, row: EvidenceRow) -> str | None:
        return clamped(row.statement, full=f"{row.statement} ({row.stable_id})")


class BaselineRoleList(ReviewStateColumn, ListColumns):
    list_display = ("role", "protocol_title", "status", "configuration_name", "review")
    list_display_links = ("role",)
    list_filter = ("review_state", "kind", "status")
    list_select_related = ("protocol", "configuration")

    @admin.display(description="baseline role", ordering="kind")
    def role(self, baseline: BaselineRole) -> str | None:
        text = f"{baseline.get_kind_display()}: {baseline.selection_rule}"
        return clamped(text, full=f"{text} ({baseline.stable_id})")


class LimitationList(ListColumns):
    list_display = ("limitation_text", "protocol_title", "position")
    list_display_links = ("limitation_text",)
    list_filter = (("protocol", admin.RelatedOnlyFieldListFilter),)
    list_select_related = ("protocol",)

    @admin.display(description="limitation", ordering="text")
    def limitation_text(self, limitation: Limitation) -> str | None:
        return clamped(limitation.text)


class DecisionList(ListColumns):
    list_display = ("decision_title", "protocol_count", "changed")
    list_display_links = ("decision_title",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Decision]:
        protocols = _count(Decision.protocols.through.objects.all(), "decision")
        return super().get_queryset(request).annotate(protocol_total=protocols)  # type: ignore[misc]

    @admin.display(description="decision", ordering="title")
    def decision_title(self, decision: Decision) -> str | None:
        return clamped(decision.title, full=f"{decision.title} ({decision.stable_id})")

    @admin.display(description="protocols", ordering="protocol_total")
    def protocol_count(self, decision: Decision) -> int:
        return decision.protocol_total  # type: ignore[attr-defined]  # annotated by get_queryset


# -- identity across papers (records.admin_identity)


class WorkList(ListColumns):
    list_display = ("work_title", "authors", "version_count", "changed")
    list_display_links = ("work_title",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Work]:
        versions = _count(Source.objects.all(), "work")
        return super().get_queryset(request).annotate(version_total=versions)  # type: ignore[misc]

    @admin.display(description="work", ordering="title")
    def work_title(self, work: Work) -> str | None:
        return clamped(work.title, full=f"{work.title} ({work.stable_id})")

    @admin.display(description="authors", ordering="authors_short")
    def authors(self, work: Work) -> str | None:
        return clamped(work.authors_short)

    @admin.display(description="versions", ordering="version_total")
    def version_count(self, work: Work) -> int:
        return work.version_total  # type: ignore[attr-defined]  # annotated by get_queryset


class GenomicModelList(ListColumns):
    list_display = ("model_name", "family", "parameters", "merged_into_name", "changed")
    list_display_links = ("model_name",)
    list_filter = (("family", ValuesListFilter),)
    list_select_related = ("merged_into",)

    @admin.display(description="model", ordering="name")
    def model_name(self, model: GenomicModel) -> str | None:
        return clamped(model.name, full=f"{model.name} ({model.stable_id})")

    @admin.display(description="parameters", ordering="parameter_count")
    def parameters(self, model: GenomicModel) -> str | None:
        return _parameters(model.parameter_count) or None

    @admin.display(description="merged into", ordering="merged_into__name")
    def merged_into_name(self, model: GenomicModel) -> str | None:
        return clamped(_named(model.merged_into))


def _said_by(claim: ModelAlias | TaskEquivalence) -> str:
    """Who makes an identity claim: the source's title, or a curator's inference."""
    if claim.basis == IdentityBasis.INFERRED:
        return "inferred by a curator"
    return claim.source.title if claim.source is not None else ""


class ModelAliasList(ReviewStateColumn, ListColumns):
    list_display = ("alias_text", "model_name", "source_title", "review")
    list_filter = ("review_state", "basis")
    list_display_links = ("alias_text",)
    list_select_related = ("model", "source")

    @admin.display(description="alias", ordering="alias")
    def alias_text(self, alias: ModelAlias) -> str | None:
        return clamped(alias.alias, full=f"{alias.alias} ({alias.stable_id})")

    @admin.display(description="model", ordering="model__name")
    def model_name(self, alias: ModelAlias) -> str | None:
        return clamped(_named(alias.model))

    @admin.display(description="printed in (or inferred)", ordering="source__title")
    def source_title(self, alias: ModelAlias) -> str | None:
        return clamped(_said_by(alias))

    @admin.display(description="where", ordering="locator")
    def locator_text(self, alias: ModelAlias) -> str | None:
        return clamped(alias.locator)


class TaskEquivalenceList(ReviewStateColumn, ListColumns):
    list_display = ("task_name", "same_as_name", "source_title", "review", "changed")
    list_filter = ("review_state", "basis")
    list_display_links = ("task_name",)
    list_select_related = ("task", "same_as", "source")

    @admin.display(description="task", ordering="task__name")
    def task_name(self, equivalence: TaskEquivalence) -> str | None:
        return clamped(equivalence.task.name, full=f"{equivalence.task.name} ({equivalence.stable_id})")

    @admin.display(description="same data as", ordering="same_as__name")
    def same_as_name(self, equivalence: TaskEquivalence) -> str | None:
        return clamped(equivalence.same_as.name)

    @admin.display(description="said by", ordering="source__title")
    def source_title(self, equivalence: TaskEquivalence) -> str | None:
        return clamped(_said_by(equivalence))

    @admin.display(description="where", ordering="locator")
    def locator_text(self, equivalence: TaskEquivalence) -> str | None:
        return clamped(equivalence.locator)
