"""The curators' desk for identity across papers: works with their versions, models with their
aliases and configurations, task equivalences, and merging, splitting and undoing models.

Merge ("Merge into another model…", an action of the models' list and a link on a model's page),
split ("Split…", on a model's page) and undo ("Undo…", on a model change's page and an action of
their list) are forms that each call one service of records.identity; a refusal is the form's
error, named by its field. Only users who may curate models (records.identity.may_curate_models:
the curators' permissions to add and change models and change configurations and aliases) see
them; anyone else is answered 403. Model changes are the audit log: read, never edited by hand.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import models, transaction
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html, format_html_join

from common.admin import LabelledTabularInline, ReadOnlyAdminMixin
from common.errors import DomainError
from records import admin_lists as lists
from records.admin_base import CatalogueAdmin
from records.identity import may_curate_models, model_change_undo, model_changes_of, model_merge, model_split
from records.models import Configuration, GenomicModel, ModelAlias, ModelChange, Source, TaskEquivalence, Work
from reviews.admin import ReviewableAdminMixin

REASON_MAX_LENGTH = 5000


def _reason_field(help_text: str) -> forms.CharField:
    return forms.CharField(
        max_length=REASON_MAX_LENGTH,
        label="Reason",
        help_text=help_text,
        widget=forms.Textarea(attrs={"rows": 4, "cols": 80}),
    )


def _refused(form: forms.Form, refused: DomainError) -> None:
    """A service's refusal as the form's error on the field it names (or on the whole form)."""
    form.add_error(refused.field if refused.field in form.fields else None, refused.message)


def _admin_link(record: models.Model, text: str | None = None) -> str:
    url = reverse(f"admin:{record._meta.app_label}_{record._meta.model_name}_change", args=[record.pk])
    return format_html('<a href="{}">{}</a>', url, str(record) if text is None else text)


# -- works


class VersionInline(ReadOnlyAdminMixin, LabelledTabularInline):
    """A work's versions (sources), each linked to its own page, where its `work` is edited."""

    model = Source
    fk_name = "work"
    extra = 0
    fields = ("title", "kind", "venue", "arxiv_id", "arxiv_version", "doi", "url", "commit", "stable_id")
    readonly_fields = fields
    show_change_link = True
    verbose_name = "version"
    verbose_name_plural = "versions (sources)"


@admin.register(Work)
class WorkAdmin(lists.WorkList, CatalogueAdmin):
    search_fields = ("title", "stable_id", "authors_short", "versions__doi", "versions__arxiv_id", "versions__url")
    inlines = [VersionInline]


# -- models


class ModelAliasInline(LabelledTabularInline):
    model = ModelAlias
    extra = 0
    fields = ("stable_id", "alias", "source", "locator", "basis", "quote", "reason")
    autocomplete_fields = ["source"]
    verbose_name = "alias"
    verbose_name_plural = "aliases (names papers print for it)"


class _NamedChoice(forms.ModelChoiceField):
    def label_from_instance(self, obj: Any) -> str:
        return f"{obj} ({obj.stable_id})"


class _NamedChoices(forms.ModelMultipleChoiceField):
    def label_from_instance(self, obj: Any) -> str:
        return f"{obj} ({obj.stable_id})"


class MergeForm(forms.Form):
    into = _NamedChoice(
        queryset=GenomicModel.objects.none(),
        label="Merge into",
        help_text="The model the selected ones are the same as: their configurations and aliases move to it.",
    )
    reason = _reason_field("Why they are one model (kept with the change and in every moved record's history).")

    def __init__(self, *args: Any, merged: list[GenomicModel], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["into"]
        assert isinstance(field, forms.ModelChoiceField)
        field.queryset = (
            GenomicModel.objects.filter(merged_into=None).exclude(pk__in=[x.pk for x in merged]).order_by("name")
        )


class SplitForm(forms.Form):
    configurations = _NamedChoices(
        queryset=Configuration.objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="The configurations that test the new model.",
    )
    aliases = _NamedChoices(
        queryset=ModelAlias.objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="The printed names that name the new model (the others stay).",
    )
    stable_id = forms.SlugField(max_length=150, label="New model's stable id")
    name = forms.CharField(max_length=300, label="New model's name")
    family = forms.CharField(max_length=200, required=False, help_text="Blank: the same as this model's.")
    parameter_count = forms.IntegerField(min_value=1, required=False, help_text="Blank: the same as this model's.")
    reason = _reason_field("Why these are another model (kept with the change and in every moved record's history).")

    def __init__(self, *args: Any, model: GenomicModel, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, queryset in (
            ("configurations", model.configurations.order_by("name", "stable_id")),
            ("aliases", model.aliases.order_by("alias")),
        ):
            field = self.fields[name]
            assert isinstance(field, forms.ModelMultipleChoiceField)
            field.queryset = queryset


@admin.register(GenomicModel)
class GenomicModelAdmin(lists.GenomicModelList, CatalogueAdmin):
    search_fields = ("name", "stable_id", "family", "public_id", "aliases__alias")
    autocomplete_fields = ["introduced_in"]
    readonly_fields = ("merged_into", "configurations_listed", "changes_listed")
    inlines = [ModelAliasInline]
    actions = ["merge_selected"]
    change_form_template = "admin/records/genomicmodel/change_form.html"

    def has_curate_permission(self, request: HttpRequest) -> bool:
        return may_curate_models(request.user)

    @admin.display(description="configurations")
    def configurations_listed(self, model: GenomicModel) -> str:
        if model.pk is None:
            return "-"
        links = format_html_join(
            "", "<li>{}</li>", ((_admin_link(c),) for c in model.configurations.order_by("name", "stable_id"))
        )
        return format_html("<ul>{}</ul>", links) if links else "none"

    @admin.display(description="merges and splits")
    def changes_listed(self, model: GenomicModel) -> str:
        if model.pk is None:
            return "-"
        rows = (
            (
                _admin_link(
                    change, f"#{change.pk} {change.kind}: {change.from_model.stable_id} → {change.to_model.stable_id}"
                ),
                change.reason,
            )
            for change in model_changes_of(model=model)[:20]
        )
        links = format_html_join("", "<li>{}: {}</li>", rows)
        return format_html("<ul>{}</ul>", links) if links else "none"

    def get_urls(self) -> list[URLPattern]:
        view = self.admin_site.admin_view
        return [
            path("<path:object_id>/merge/", view(self.merge_view), name="records_genomicmodel_merge"),
            path("<path:object_id>/split/", view(self.split_view), name="records_genomicmodel_split"),
            *super().get_urls(),
        ]

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        extra = {"may_curate_models": may_curate_models(request.user), **(extra_context or {})}
        return super().change_view(request, object_id, form_url, extra_context=extra)

    def _model_or_404(self, request: HttpRequest, object_id: str) -> GenomicModel:
        if not may_curate_models(request.user):
            raise PermissionDenied
        model = self.get_object(request, object_id)
        if model is None:
            raise Http404("no such model")
        return model

    # -- merge

    @admin.action(description="Merge into another model…", permissions=["curate"])
    def merge_selected(self, request: HttpRequest, queryset: QuerySet[GenomicModel]) -> HttpResponse | None:
        return self._merge_page(request, list(queryset.order_by("name", "stable_id")), from_list=True)

    def merge_view(self, request: HttpRequest, object_id: str) -> HttpResponse | None:
        return self._merge_page(request, [self._model_or_404(request, object_id)], from_list=False)

    def _merge_page(self, request: HttpRequest, merged: list[GenomicModel], *, from_list: bool) -> HttpResponse:
        if not may_curate_models(request.user):
            raise PermissionDenied
        applying = request.method == "POST" and "apply" in request.POST
        form = MergeForm(request.POST if applying else None, merged=merged)
        if applying and form.is_valid():
            into, reason = form.cleaned_data["into"], form.cleaned_data["reason"]
            try:
                with transaction.atomic():  # several selected models: all merged, or none
                    for model in merged:
                        model_merge(model=model, into=into, reason=reason, actor=request.user)
            except DomainError as refused:
                _refused(form, refused)
            else:
                names = ", ".join(model.stable_id for model in merged)
                self.message_user(request, f"Merged {names} into {into.stable_id}.", messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:records_genomicmodel_change", args=[into.pk]))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "Merge into another model",
            "form": form,
            "merged": merged,
            "from_list": from_list,
            "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/records/genomicmodel/merge.html", context)

    # -- split

    def split_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        model = self._model_or_404(request, object_id)
        form = SplitForm(request.POST if request.method == "POST" else None, model=model)
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            try:
                change = model_split(
                    model=model,
                    configurations=list(data["configurations"]),
                    aliases=list(data["aliases"]),
                    stable_id=data["stable_id"],
                    name=data["name"],
                    family=data["family"] or None,
                    parameter_count=data["parameter_count"],
                    reason=data["reason"],
                    actor=request.user,
                )
            except DomainError as refused:
                _refused(form, refused)
            else:
                self.message_user(
                    request, f"Split {change.to_model.stable_id} off {model.stable_id}.", messages.SUCCESS
                )
                return HttpResponseRedirect(reverse("admin:records_genomicmodel_change", args=[change.to_model_id]))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": f"Split {model.name}",
            "form": form,
            "original": model,
        }
        return TemplateResponse(request, "admin/records/genomicmodel/split.html", context)


@admin.register(ModelAlias)
class ModelAliasAdmin(lists.ModelAliasList, ReviewableAdminMixin, CatalogueAdmin):
    search_fields = ("alias", "key", "stable_id", "model__name", "model__stable_id")
    autocomplete_fields = ["model", "source"]
    readonly_fields = ("key",)


# -- task equivalences


@admin.register(TaskEquivalence)
class TaskEquivalenceAdmin(lists.TaskEquivalenceList, ReviewableAdminMixin, CatalogueAdmin):
    search_fields = ("stable_id", "task__name", "same_as__name", "quote", "locator")
    fields = ("stable_id", "task", "same_as", "basis", "source", "locator", "quote", "reason")
    autocomplete_fields = ["task", "same_as", "source"]


# -- the audit log of merges, splits and undos


class UndoForm(forms.Form):
    reason = _reason_field("Why the change was wrong (kept with the undo and in every moved record's history).")


@admin.register(ModelChange)
class ModelChangeAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ("created_at", "kind", "from_model", "to_model", "moved", "actor", "undone")
    list_filter = ("kind",)
    list_select_related = ("from_model", "to_model", "actor", "undone_by")
    search_fields = ("reason", "from_model__stable_id", "from_model__name", "to_model__stable_id", "to_model__name")
    date_hierarchy = "created_at"
    fields = ("kind", "from_model", "to_model", "configurations", "aliases", "undoes", "reason", "actor", "created_at")
    readonly_fields = fields
    actions = ["undo_selected"]
    change_form_template = "admin/records/modelchange/change_form.html"

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self.has_view_permission(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return may_curate_models(request.user) or request.user.has_perm("records.view_modelchange")

    def has_undo_permission(self, request: HttpRequest) -> bool:
        return may_curate_models(request.user)

    @admin.display(description="moved")
    def moved(self, change: ModelChange) -> str:
        return f"{len(change.configurations)} configurations, {len(change.aliases)} aliases"

    @admin.display(description="undone", boolean=True)
    def undone(self, change: ModelChange) -> bool:
        return hasattr(change, "undone_by")

    def get_urls(self) -> list[URLPattern]:
        view = self.admin_site.admin_view(self.undo_view)
        return [path("<path:object_id>/undo/", view, name="records_modelchange_undo"), *super().get_urls()]

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        extra = {"may_undo": may_curate_models(request.user), **(extra_context or {})}
        return super().change_view(request, object_id, form_url, extra_context=extra)

    @admin.action(description="Undo…", permissions=["undo"])
    def undo_selected(self, request: HttpRequest, queryset: QuerySet[ModelChange]) -> HttpResponse | None:
        chosen = list(queryset.values_list("pk", flat=True)[:2])
        if len(chosen) != 1:
            self.message_user(request, "Choose one change to undo at a time.", messages.ERROR)
            return None
        return HttpResponseRedirect(reverse("admin:records_modelchange_undo", args=[chosen[0]]))

    def undo_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        if not may_curate_models(request.user):
            raise PermissionDenied
        change = self.get_object(request, object_id)
        if change is None:
            raise Http404("no such model change")
        form = UndoForm(request.POST if request.method == "POST" else None)
        if request.method == "POST" and form.is_valid():
            try:
                undo = model_change_undo(change=change, reason=form.cleaned_data["reason"], actor=request.user)
            except DomainError as refused:
                form.add_error("reason" if refused.field == "reason" else None, refused.message)
            else:
                self.message_user(request, f"Undid change #{change.pk} (change #{undo.pk}).", messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:records_modelchange_change", args=[undo.pk]))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": f"Undo change #{change.pk}",
            "form": form,
            "change": change,
        }
        return TemplateResponse(request, "admin/records/modelchange/undo.html", context)
