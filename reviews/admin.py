"""Admin for the review workflow: the review panel on every reviewable record, bulk transitions,
the review queue and the read-only event log. Every state change goes through the one service."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django import forms
from django.apps import apps
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import URLPattern, path, reverse

from common.admin import ReadOnlyAdminMixin
from reviews.models import Reviewable, ReviewEvent, ReviewState
from reviews.selectors import review_events
from reviews.services import AvailableTransition, ReviewError, available_transitions, review_transition_apply
from reviews.transitions import TRANSITIONS

REASON_MAX_LENGTH = 5000


if TYPE_CHECKING:  # what the mixin is mixed into, for the type checker
    _ModelAdminBase = admin.ModelAdmin
else:
    _ModelAdminBase = object


class TransitionForm(forms.Form):
    transition = forms.ChoiceField(choices=[(name, spec.label) for name, spec in TRANSITIONS.items()])
    reason = forms.CharField(required=False, max_length=REASON_MAX_LENGTH, widget=forms.Textarea(attrs={"rows": 3}))
    expected_state = forms.ChoiceField(choices=ReviewState.choices, required=False)


class ReasonActionForm(ActionForm):
    """The changelist's action bar, with a reason for the bulk transitions that need one."""

    reason = forms.CharField(required=False, max_length=REASON_MAX_LENGTH, label="Reason")


def _bulk_action(name: str) -> Callable[[admin.ModelAdmin, HttpRequest, QuerySet], None]:
    spec = TRANSITIONS[name]

    @admin.action(
        description=f"{spec.label} (selected records{', with the reason given' if spec.needs_reason else ''})",
        permissions=["review"],
    )
    def action(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet) -> None:
        reason = request.POST.get("reason", "")
        applied, failed = 0, []
        for record in queryset.order_by("pk"):
            try:
                review_transition_apply(record=record, transition=name, actor=request.user, reason=reason)
                applied += 1
            except ReviewError as exc:
                failed.append(f"{getattr(record, 'stable_id', record.pk)}: {exc.message}")
        if applied:
            modeladmin.message_user(request, f"{spec.label}: applied to {applied} record(s).", messages.SUCCESS)
        if failed:
            modeladmin.message_user(
                request, f"{spec.label}: {len(failed)} refused. " + "; ".join(failed), messages.ERROR
            )

    action.__name__ = f"bulk_{name}"
    return action


class ReviewableAdminMixin(_ModelAdminBase):
    """Adds the review panel (legal transitions only, reason, review log) and bulk transitions."""

    change_form_template = "admin/reviews/reviewable_change_form.html"
    action_form = ReasonActionForm
    actions = [_bulk_action(name) for name in TRANSITIONS]

    def has_review_permission(self, request: HttpRequest) -> bool:
        return any(request.user.has_perm(spec.permission) for spec in TRANSITIONS.values())

    def get_urls(self) -> list[URLPattern]:
        info = self.model._meta.app_label, self.model._meta.model_name
        custom = [
            path(
                "<path:object_id>/transition/",
                self.admin_site.admin_view(self.transition_view),
                name="{}_{}_transition".format(*info),
            ),
        ]
        return custom + super().get_urls()

    def transition_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        record = get_object_or_404(self.model, pk=object_id)
        if not self.has_view_permission(request, record):
            raise PermissionDenied
        change_url = reverse(f"admin:{record._meta.app_label}_{record._meta.model_name}_change", args=[record.pk])
        form = TransitionForm(request.POST)
        if not form.is_valid():
            errors = "; ".join(f"{field}: {' '.join(str(msg) for msg in msgs)}" for field, msgs in form.errors.items())
            self.message_user(request, f"Nothing changed: {errors}", messages.ERROR)
            return HttpResponseRedirect(change_url)
        try:
            review_transition_apply(
                record=record,
                transition=form.cleaned_data["transition"],
                actor=request.user,
                reason=form.cleaned_data["reason"],
                expected_state=form.cleaned_data["expected_state"] or None,
            )
        except ReviewError as exc:
            self.message_user(request, f"Nothing changed: {exc.message}", messages.ERROR)
        else:
            spec = TRANSITIONS[form.cleaned_data["transition"]]
            self.message_user(
                request, f"{spec.label}: the record is now {ReviewState(spec.target).label.lower()}.", messages.SUCCESS
            )
        return HttpResponseRedirect(change_url)

    def render_change_form(
        self,
        request: HttpRequest,
        context: dict[str, Any],
        add: bool = False,
        change: bool = False,
        form_url: str = "",
        obj: Any = None,
    ) -> HttpResponse:
        if obj is not None and obj.pk:
            transitions = available_transitions(record=obj, user=request.user)
            context["review"] = {
                "state": ReviewState(obj.review_state).label,
                "transitions": transitions,
                "reason_label": reason_label(transitions),
                "events": list(review_events(record=obj, newest_first=True)),
                "action_url": reverse(f"admin:{obj._meta.app_label}_{obj._meta.model_name}_transition", args=[obj.pk]),
                "expected_state": obj.review_state,
                "history_url": reverse(f"admin:{obj._meta.app_label}_{obj._meta.model_name}_history", args=[obj.pk]),
            }
        return super().render_change_form(request, context, add=add, change=change, form_url=form_url, obj=obj)


def reason_label(transitions: list[AvailableTransition]) -> str:
    """The reason field's label: "Reason (required for reinstate and reopen)", once, not once per transition."""
    needing = [t.label.lower() for t in transitions if t.needs_reason]
    if not needing:
        return "Reason (optional)"
    named = needing[0] if len(needing) == 1 else ", ".join(needing[:-1]) + " and " + needing[-1]
    return f"Reason (required for {named})"


@admin.register(ReviewEvent)
class ReviewEventAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """The audit log: readable by curators, never added to, edited or deleted through the admin."""

    list_display = (
        "created_at",
        "record_stable_id",
        "content_type",
        "transition",
        "from_state",
        "to_state",
        "actor_role",
        "actor",
    )
    list_filter = ("transition", "to_state", "content_type", "actor_role")
    search_fields = ("record_stable_id", "reason")
    date_hierarchy = "created_at"
    list_select_related = ("content_type", "actor")


def reviewable_models() -> list[type[Reviewable]]:
    return [model for model in apps.get_models() if issubclass(model, Reviewable)]


QUEUE_PAGE_SIZE = 50


def review_queue_view(request: HttpRequest) -> HttpResponse:
    """Proposed records of every reviewable type, oldest first, filterable by type and protocol."""
    if not request.user.has_perm("reviews.check_source"):
        raise PermissionDenied
    models = {model._meta.model_name: model for model in reviewable_models()}
    chosen_type = request.GET.get("type", "")
    protocol = request.GET.get("protocol", "").strip()
    rows = []
    for name, model in models.items():
        if chosen_type and name != chosen_type:
            continue
        queryset: QuerySet[Any] = model._default_manager.filter(
            review_state=ReviewState.PROPOSED
        )  # fields differ by type
        field_names = {f.name for f in model._meta.get_fields()}
        if protocol:
            if "protocol" in field_names:
                queryset = queryset.filter(protocol__stable_id=protocol)
            elif "stable_id" in field_names and name == "protocol":
                queryset = queryset.filter(stable_id=protocol)
            else:
                continue
        if "protocol" in field_names:
            queryset = queryset.select_related("protocol")
        for record in queryset.order_by("created_at", "pk")[: QUEUE_PAGE_SIZE * 20]:
            rows.append(
                {
                    "type": model._meta.verbose_name,
                    "record": record,
                    "protocol": getattr(record, "protocol", None),
                    "since": record.created_at,
                    "url": reverse(f"admin:{model._meta.app_label}_{name}_change", args=[record.pk]),
                }
            )
    rows.sort(key=lambda row: (row["since"], row["type"], row["record"].pk))
    page = Paginator(rows, QUEUE_PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        **admin.site.each_context(request),
        "title": "Review queue",
        "page": page,
        "types": sorted((name, model._meta.verbose_name) for name, model in models.items()),
        "chosen_type": chosen_type,
        "protocol": protocol,
    }
    return render(request, "admin/reviews/review_queue.html", context)
