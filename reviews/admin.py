"""Admin for the review workflow: the review panel on every reviewable record, bulk transitions,
the review queue and the read-only event log. Every state change goes through the one service."""

from __future__ import annotations

from django import forms
from django.apps import apps
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import path, reverse

from simple_history.admin import SimpleHistoryAdmin

from common.admin import ReadOnlyAdminMixin
from reviews.corrections import CorrectionError, correction_decide, targets
from reviews.models import Correction, CorrectionStatus, Reviewable, ReviewEvent, ReviewState
from reviews.services import ReviewError, available_transitions, review_transition_apply
from reviews.transitions import TRANSITIONS

REASON_MAX_LENGTH = 5000


class TransitionForm(forms.Form):
    transition = forms.ChoiceField(choices=[(name, spec.label) for name, spec in TRANSITIONS.items()])
    reason = forms.CharField(required=False, max_length=REASON_MAX_LENGTH, widget=forms.Textarea(attrs={"rows": 3}))
    expected_state = forms.ChoiceField(choices=ReviewState.choices, required=False)


class ReasonActionForm(ActionForm):
    """The changelist's action bar, with a reason for the bulk transitions that need one."""

    reason = forms.CharField(required=False, max_length=REASON_MAX_LENGTH, label="Reason")


def review_events_for(record) -> list[ReviewEvent]:
    content_type = ContentType.objects.get_for_model(type(record))
    return list(ReviewEvent.objects.filter(content_type=content_type, object_id=record.pk).order_by("-created_at", "-id"))


def _bulk_action(name: str):
    spec = TRANSITIONS[name]

    def action(modeladmin, request, queryset):
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
            modeladmin.message_user(request, f"{spec.label}: {len(failed)} refused. " + "; ".join(failed), messages.ERROR)

    action.__name__ = f"bulk_{name}"
    action.short_description = f"{spec.label} (selected records{', with the reason given' if spec.needs_reason else ''})"
    action.allowed_permissions = ("review",)
    return action


class ReviewableAdminMixin:
    """Adds the review panel (legal transitions only, reason, review log) and bulk transitions."""

    change_form_template = "admin/reviews/reviewable_change_form.html"
    action_form = ReasonActionForm
    actions = [_bulk_action(name) for name in TRANSITIONS]

    def has_review_permission(self, request) -> bool:
        return any(request.user.has_perm(spec.permission) for spec in TRANSITIONS.values())

    def get_urls(self):
        info = self.model._meta.app_label, self.model._meta.model_name
        custom = [
            path("<path:object_id>/transition/", self.admin_site.admin_view(self.transition_view), name="%s_%s_transition" % info),
        ]
        return custom + super().get_urls()

    def transition_view(self, request, object_id):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        record = get_object_or_404(self.model, pk=object_id)
        if not self.has_view_permission(request, record):
            raise PermissionDenied
        change_url = reverse(f"admin:{record._meta.app_label}_{record._meta.model_name}_change", args=[record.pk])
        form = TransitionForm(request.POST)
        if not form.is_valid():
            errors = "; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in form.errors.items())
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
            self.message_user(request, f"{spec.label}: the record is now {ReviewState(spec.target).label.lower()}.", messages.SUCCESS)
        return HttpResponseRedirect(change_url)

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None and obj.pk:
            context["review"] = {
                "state": ReviewState(obj.review_state).label,
                "transitions": available_transitions(record=obj, user=request.user),
                "events": review_events_for(obj),
                "action_url": reverse(f"admin:{obj._meta.app_label}_{obj._meta.model_name}_transition", args=[obj.pk]),
                "expected_state": obj.review_state,
                "history_url": reverse(f"admin:{obj._meta.app_label}_{obj._meta.model_name}_history", args=[obj.pk]),
            }
        return super().render_change_form(request, context, add=add, change=change, form_url=form_url, obj=obj)


@admin.register(ReviewEvent)
class ReviewEventAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """The audit log: readable by curators, never added to, edited or deleted through the admin."""

    list_display = ("created_at", "record_stable_id", "content_type", "transition", "from_state", "to_state", "actor_role", "actor")
    list_filter = ("transition", "to_state", "content_type", "actor_role")
    search_fields = ("record_stable_id", "reason")
    date_hierarchy = "created_at"
    list_select_related = ("content_type", "actor")


def reviewable_models() -> list[type[Reviewable]]:
    return [model for model in apps.get_models() if issubclass(model, Reviewable)]


QUEUE_PAGE_SIZE = 50


def review_queue_view(request):
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
        queryset = model.objects.filter(review_state=ReviewState.PROPOSED)
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


class ModerationForm(forms.Form):
    decision = forms.ChoiceField(choices=[("accept", "Accept"), ("reject", "Reject"), ("duplicate", "Mark duplicate")])
    response = forms.CharField(max_length=REASON_MAX_LENGTH, required=False)
    apply_value = forms.BooleanField(required=False)
    printed_value = forms.CharField(max_length=200, required=False, strip=True)
    duplicate_of = forms.IntegerField(required=False, min_value=1)


class ProtocolFilter(admin.SimpleListFilter):
    title = "protocol"
    parameter_name = "protocol"

    def lookups(self, request, model_admin):
        values = Correction.objects.exclude(protocol_stable_id="").values_list("protocol_stable_id", flat=True).distinct()
        return [(value, value) for value in sorted(values)]

    def queryset(self, request, queryset):
        return queryset.filter(protocol_stable_id=self.value()) if self.value() else queryset


@admin.register(Correction)
class CorrectionAdmin(ReadOnlyAdminMixin, SimpleHistoryAdmin):
    """The moderation queue: suggestions oldest first, each beside its field's current value.
    Read-only here: decisions go through the moderation panel and its service only."""

    list_display = ("id", "created_at", "status", "record_type", "target_stable_id", "field_label", "value_now", "proposed_value_short", "folded")
    list_filter = ("status", ("content_type", admin.RelatedOnlyFieldListFilter), ProtocolFilter)
    search_fields = ("target_stable_id", "explanation", "proposed_value", "protocol_stable_id")
    ordering = ("created_at", "id")
    change_form_template = "admin/reviews/correction_change_form.html"
    readonly_fields = [f.name for f in Correction._meta.fields if f.name not in {"token", "ip_hash", "fingerprint"}]
    exclude = ("token", "ip_hash", "fingerprint")

    def get_queryset(self, request):
        from django.db.models import Count

        return super().get_queryset(request).select_related("content_type").prefetch_related("target").annotate(folded_count=Count("duplicates"))

    @admin.display(description="record type")
    def record_type(self, obj):
        return obj.content_type.model

    @admin.display(description="current value")
    def value_now(self, obj):
        if not obj.field_name or obj.target is None:
            return "—"
        return targets().field_text(obj.target, obj.field_name)

    @admin.display(description="proposed value")
    def proposed_value_short(self, obj):
        return obj.proposed_value[:80]

    @admin.display(description="folded")
    def folded(self, obj):
        return obj.folded_count


    def get_urls(self):
        custom = [path("<path:object_id>/decide/", self.admin_site.admin_view(self.decide_view), name="reviews_correction_decide")]
        return custom + super().get_urls()

    def decide_view(self, request, object_id):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        correction = get_object_or_404(Correction, pk=object_id)
        change_url = reverse("admin:reviews_correction_change", args=[correction.pk])
        form = ModerationForm(request.POST)
        if not form.is_valid():
            errors = "; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in form.errors.items())
            self.message_user(request, f"Nothing changed: {errors}", messages.ERROR)
            return HttpResponseRedirect(change_url)
        duplicate_of = None
        if form.cleaned_data["duplicate_of"]:
            duplicate_of = Correction.objects.filter(pk=form.cleaned_data["duplicate_of"]).first()
            if duplicate_of is None:
                self.message_user(request, f"Nothing changed: there is no suggestion #{form.cleaned_data['duplicate_of']}", messages.ERROR)
                return HttpResponseRedirect(change_url)
        try:
            decided = correction_decide(
                correction=correction, actor=request.user, decision=form.cleaned_data["decision"],
                response=form.cleaned_data["response"], apply_value=form.cleaned_data["apply_value"], duplicate_of=duplicate_of,
                printed_value=form.cleaned_data["printed_value"],
            )
        except CorrectionError as exc:
            self.message_user(request, f"Nothing changed: {exc.message}", messages.ERROR)
        else:
            applied = " The proposed value was applied and the record reopened for review." if decided.value_applied else ""
            self.message_user(request, f"Suggestion #{decided.pk}: {decided.get_status_display().lower()}.{applied}", messages.SUCCESS)
        return HttpResponseRedirect(change_url)

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None:
            context["moderation"] = {
                "action_url": reverse("admin:reviews_correction_decide", args=[obj.pk]),
                "current_value": self.value_now(obj),
                **targets().moderation_extras(obj.target, obj.field_name, obj.proposed_value),
                "may_decide": obj.status == CorrectionStatus.NEW and request.user.has_perm("reviews.moderate_correction"),
                "public_url": reverse("reviews:correction-status", args=[obj.token]),
            }
        return super().render_change_form(request, context, add=add, change=change, form_url=form_url, obj=obj)
