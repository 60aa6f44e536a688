"""Admin for the review workflow: the review panel on every reviewable record, bulk transitions,
the review queue and the read-only event log. Every state change goes through the one service."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from django import forms
from django.apps import apps
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.core.exceptions import FieldDoesNotExist, PermissionDenied
from django.core.paginator import Paginator
from django.db.models import Count, Model, QuerySet
from django.db.models.functions import Coalesce
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import NoReverseMatch, URLPattern, path, reverse

from common.admin import ReadOnlyAdminMixin
from reviews.models import Reviewable, ReviewEvent, ReviewState
from reviews.selectors import active_claims, claim_key, review_events
from reviews.services import (
    BulkOutcome,
    ReviewError,
    ReviewOption,
    review_options,
    review_transition_apply,
    review_transitions_apply,
)
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
        outcome = review_transitions_apply(
            records=queryset.order_by("pk"), transition=name, actor=request.user, reason=request.POST.get("reason", "")
        )
        report_outcome(modeladmin, request, label=spec.label, outcome=outcome)

    action.__name__ = f"bulk_{name}"
    return action


def report_outcome(modeladmin: Any, request: HttpRequest, *, label: str, outcome: BulkOutcome) -> None:
    """Say what a transition applied to many records did: how many it changed, and each refusal with its reason."""
    if outcome.applied:
        modeladmin.message_user(request, f"{label}: applied to {len(outcome.applied)} record(s).", messages.SUCCESS)
    if outcome.refused:
        refusals = "; ".join(f"{getattr(record, 'stable_id', record.pk)}: {why}" for record, why in outcome.refused)
        modeladmin.message_user(request, f"{label}: {len(outcome.refused)} refused. {refusals}", messages.ERROR)


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

    def review_evidence(self, obj: Any) -> dict[str, Any] | None:
        """What the checker reads the source against, shown in the review panel; None for none
        (an admin of a record with a quote and values overrides it)."""
        return None

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
            options = review_options(record=obj, user=request.user)
            transitions = [option for option in options if not option.refusal]
            claim = active_claims(records=[obj]).get(claim_key(obj))
            context["review"] = {
                "state": ReviewState(obj.review_state).label,
                "transitions": transitions,
                "refused": [option for option in options if option.refusal],
                "claim": claim,
                "reason_label": reason_label(transitions),
                "events": list(review_events(record=obj, newest_first=True)),
                "action_url": reverse(f"admin:{obj._meta.app_label}_{obj._meta.model_name}_transition", args=[obj.pk]),
                "expected_state": obj.review_state,
                "history_url": reverse(f"admin:{obj._meta.app_label}_{obj._meta.model_name}_history", args=[obj.pk]),
                "evidence": self.review_evidence(obj),
            }
        return super().render_change_form(request, context, add=add, change=change, form_url=form_url, obj=obj)


def reason_label(transitions: list[ReviewOption]) -> str:
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
# The queue's per-type reading: a page of the oldest (or newest) waiting, never every row.
QUEUE_READ_PER_TYPE = QUEUE_PAGE_SIZE * 20
QUEUE_ORDERS = {"oldest": "oldest first", "newest": "newest first"}


def _waiting_since() -> Coalesce:
    """When a record entered its state: its last review transition, or its creation when it has none."""
    return Coalesce("review_state_changed_at", "created_at")


def _review_table_url(related: type[Model], pk: int) -> str:
    """The page where a source's (or protocol's) proposed values are reviewed side by side with
    their quotes, where its app's admin offers one ("" otherwise)."""
    try:
        return reverse(f"admin:{related._meta.app_label}_{related._meta.model_name}_review_table", args=[pk])
    except NoReverseMatch:
        return ""


def _waiting_by(models: Iterable[type[Reviewable]], field: str) -> list[dict[str, Any]]:
    """Proposed records counted by the record they name in `field` (their protocol, their source),
    across the reviewable types that have it: one query a type, one for the names."""
    counts: dict[tuple[type[Model], int], int] = {}
    for model in models:
        try:
            related = model._meta.get_field(field).related_model
        except FieldDoesNotExist:
            continue
        if not isinstance(related, type):
            continue
        rows = (
            model._default_manager.filter(review_state=ReviewState.PROPOSED, **{f"{field}__isnull": False})
            .order_by()
            .values_list(field)
            .annotate(n=Count("pk"))
        )
        for pk, n in rows:
            counts[(related, pk)] = counts.get((related, pk), 0) + n
    named: dict[tuple[type[Model], int], Model] = {}
    for related in {related for related, _ in counts}:
        for pk, record in related._default_manager.in_bulk([pk for model, pk in counts if model is related]).items():
            named[(related, pk)] = record
    found = [
        {
            "record": named[key],
            "count": n,
            "change_url": reverse(f"admin:{key[0]._meta.app_label}_{key[0]._meta.model_name}_change", args=[key[1]]),
            "table_url": _review_table_url(key[0], key[1]),
        }
        for key, n in counts.items()
        if key in named
    ]
    return sorted(found, key=lambda row: (-row["count"], str(row["record"])))


def review_queue_view(request: HttpRequest) -> HttpResponse:
    """Proposed records of every reviewable type by how long they have waited in their state (the time
    of their last review transition, or of their creation), oldest first or newest first, filterable
    by type and protocol; counted by protocol and by source; each with the claim in force on it."""
    if not request.user.has_perm("reviews.check_source"):
        raise PermissionDenied
    models = {model._meta.model_name: model for model in reviewable_models()}
    chosen_type = request.GET.get("type", "")
    protocol = request.GET.get("protocol", "").strip()
    order = request.GET.get("order", "oldest")
    if order not in QUEUE_ORDERS:
        order = "oldest"
    rows = []
    for name, model in models.items():
        if chosen_type and name != chosen_type:
            continue
        queryset: QuerySet[Any] = model._default_manager.filter(review_state=ReviewState.PROPOSED).annotate(
            since=_waiting_since()
        )
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
        ordering = ("since", "pk") if order == "oldest" else ("-since", "-pk")
        for record in queryset.order_by(*ordering)[:QUEUE_READ_PER_TYPE]:
            rows.append(
                {
                    "type": model._meta.verbose_name,
                    "record": record,
                    "protocol": getattr(record, "protocol", None),
                    "since": record.since,
                    "url": reverse(f"admin:{model._meta.app_label}_{name}_change", args=[record.pk]),
                }
            )
    rows.sort(key=lambda row: (row["since"], row["type"], row["record"].pk), reverse=order == "newest")
    page = Paginator(rows, QUEUE_PAGE_SIZE).get_page(request.GET.get("page"))
    claims = active_claims(records=[row["record"] for row in page])
    for row in page:
        row["claim"] = claims.get(claim_key(row["record"]))
    context = {
        **admin.site.each_context(request),
        "title": "Review queue",
        "page": page,
        "types": sorted((name, model._meta.verbose_name) for name, model in models.items()),
        "chosen_type": chosen_type,
        "protocol": protocol,
        "order": order,
        "order_label": QUEUE_ORDERS[order],
        "orders": QUEUE_ORDERS,
        "by_protocol": _waiting_by(models.values(), "protocol"),
        "by_source": _waiting_by(models.values(), "source"),
    }
    return render(request, "admin/reviews/review_queue.html", context)
