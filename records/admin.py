"""The curators' admin: every catalogue model, with search, filters, inlines and history (works,
models, aliases, task equivalences and model merges in records.admin_identity).

Saves go through `records.services.record_save` (records.admin_base.CatalogueAdmin), so the admin writes the same history (and
reopens reviewed records on sourced-field edits) as every other way in.
"""

from __future__ import annotations

from functools import partial

from django import forms
from django.contrib import admin
from django.db import models
from django.urls import path, reverse

from common.admin import LabelledTabularInline
from records import (
    admin_identity,  # noqa: F401  (registers works, models, aliases, task equivalences)
    admin_imports,  # noqa: F401  (registers the import page: ImportJobAdmin)
    admin_review_table,
)
from records import admin_lists as lists
from records.admin_base import REVIEW_FIELDS, CatalogueAdmin
from records.models import (
    Area,
    BaselineRole,
    Configuration,
    Context,
    Dataset,
    Decision,
    Evaluation,
    EvidenceRow,
    Limitation,
    Protocol,
    Result,
    Source,
)
from reviews.admin import ReviewableAdminMixin


class LimitationInline(LabelledTabularInline):
    model = Limitation
    extra = 0
    ordering = ["position"]


class BaselineRoleInline(admin.StackedInline):
    model = BaselineRole
    extra = 0
    autocomplete_fields = ["configuration"]
    readonly_fields = REVIEW_FIELDS


class ResultInline(admin.StackedInline):
    """Stacked, in three lines of related fields: as a table its twelve columns were 1,924 px wide."""

    model = Result
    extra = 0
    fieldsets = (
        (None, {"fields": (("stable_id", "value", "unit", "printed_value"),)}),
        (
            "Uncertainty",
            {
                "fields": (
                    ("uncertainty_kind", "uncertainty_value", "uncertainty_level"),
                    ("lower_bound", "upper_bound", "num_runs"),
                )
            },
        ),
        ("Relative to a reference", {"fields": (("relation", "reference_configuration"),)}),
        (None, {"fields": ("quote_mismatch_reason",)}),
    )
    autocomplete_fields = ["reference_configuration"]
    formfield_overrides = {models.TextField: {"widget": forms.Textarea(attrs={"rows": 2, "cols": 80})}}


class TaskInline(LabelledTabularInline):
    model = Dataset
    fk_name = "suite"
    extra = 0
    fields = (
        "stable_id",
        "task_key",
        "name",
        "position",
        "train_size",
        "test_size",
        "num_classes",
        "sequence_length_bp",
        "metric",
    )
    verbose_name = "task"
    verbose_name_plural = "tasks"


@admin.register(Source)
class SourceAdmin(lists.SourceList, CatalogueAdmin):
    """A source is one version of a work (`work`): a duplicate of a catalogued source is a form error
    naming it (Source.clean, records.works.source_duplicates); another version goes in its work."""

    search_fields = ("title", "stable_id", "doi", "pmcid", "arxiv_id", "url", "citation", "authors_short")
    autocomplete_fields = ["work"]
    change_form_template = "admin/records/source_change_form.html"

    def get_urls(self):
        review_table = self.admin_site.admin_view(partial(admin_review_table.review_table_view, self))
        return [
            path("<path:object_id>/review-table/", review_table, name="records_source_review_table"),
            *super().get_urls(),
        ]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra = {"review_table_url": reverse("admin:records_source_review_table", args=[object_id])}
        return super().change_view(request, object_id, form_url, {**extra, **(extra_context or {})})


@admin.register(Area, Context)
class VocabularyAdmin(lists.VocabularyList, CatalogueAdmin):
    search_fields = ("stable_id", "label")


@admin.register(Dataset)
class DatasetAdmin(lists.DatasetList, CatalogueAdmin):
    search_fields = ("name", "stable_id", "task_key", "description")
    autocomplete_fields = ["suite", "source"]
    inlines = [TaskInline]


@admin.register(Configuration)
class ConfigurationAdmin(lists.ConfigurationList, CatalogueAdmin):
    search_fields = ("name", "short_name", "stable_id", "family", "method", "model__name")
    autocomplete_fields = ["source", "model"]


@admin.register(Protocol)
class ProtocolAdmin(lists.ProtocolList, ReviewableAdminMixin, CatalogueAdmin):
    search_fields = ("title", "stable_id", "summary", "metric_name")
    autocomplete_fields = ["source", "datasets"]
    filter_horizontal = ("areas", "contexts")
    inlines = [LimitationInline, BaselineRoleInline]


@admin.register(Evaluation)
class EvaluationAdmin(lists.EvaluationList, ReviewableAdminMixin, CatalogueAdmin):
    search_fields = (
        "title",
        "stable_id",
        "quote",
        "source_locator",
        "configuration__name",
        "protocol__title",
        "measured_by_name",
    )
    autocomplete_fields = ["protocol", "configuration", "dataset", "source", "concern_source", "repeats"]
    inlines = [ResultInline]

    def get_form(self, request, obj=None, change=False, **kwargs):
        """Its results are validated in the inline against the quote as edited (Evaluation.clean
        would read them as stored)."""
        base = super().get_form(request, obj, change, **kwargs)

        class EvaluationForm(base):  # type: ignore[valid-type,misc]
            def _post_clean(self) -> None:
                self.instance.quote_checked_elsewhere = True
                super()._post_clean()

        return EvaluationForm

    def review_evidence(self, obj: Evaluation) -> dict:
        """What a checker reads the source against: the quote beside each value, contradictions marked."""
        problems = dict((result.pk, problem) for result, problem in obj.quote_contradictions())
        return {
            "quote": obj.quote,
            "locator": obj.source_locator,
            "results": [
                {"result": result, "problem": problems.get(result.pk, "")}
                for result in obj.results.order_by("stable_id")
            ],
        }


@admin.register(Result)
class ResultAdmin(lists.ResultList, CatalogueAdmin):
    search_fields = ("stable_id", "evaluation__title", "printed_value", "value")
    autocomplete_fields = ["evaluation", "reference_configuration"]


@admin.register(EvidenceRow)
class EvidenceRowAdmin(lists.EvidenceRowList, ReviewableAdminMixin, CatalogueAdmin):
    search_fields = ("stable_id", "statement", "quote", "locator")
    autocomplete_fields = ["protocol", "evaluation", "source"]


@admin.register(BaselineRole)
class BaselineRoleAdmin(lists.BaselineRoleList, ReviewableAdminMixin, CatalogueAdmin):
    search_fields = ("stable_id", "selection_rule", "protocol__title")
    autocomplete_fields = ["protocol", "configuration"]


@admin.register(Limitation)
class LimitationAdmin(lists.LimitationList, CatalogueAdmin):
    search_fields = ("text", "protocol__title")
    autocomplete_fields = ["protocol"]


@admin.register(Decision)
class DecisionAdmin(lists.DecisionList, CatalogueAdmin):
    search_fields = ("title", "stable_id", "description")
    autocomplete_fields = ["protocols"]


# Works, models, aliases, task equivalences and model changes: their admins build on CatalogueAdmin above.
