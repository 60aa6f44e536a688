"""The correction moderation queue in the admin: suggestions oldest first, each beside its field's
current value, decided through the one service (`correction_decide`)."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.db.models import Count
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from simple_history.admin import SimpleHistoryAdmin

from common.admin import ReadOnlyAdminMixin, clamped, list_time
from corrections import selectors
from corrections.models import Correction, CorrectionStatus
from corrections.services import CorrectionError, correction_decide
from reviews.admin import REASON_MAX_LENGTH


class ModerationForm(forms.Form):
    decision = forms.ChoiceField(choices=[("accept", "Accept"), ("reject", "Reject"), ("duplicate", "Mark duplicate")])
    response = forms.CharField(max_length=REASON_MAX_LENGTH, required=False)
    apply_value = forms.BooleanField(required=False)
    printed_value = forms.CharField(max_length=200, required=False, strip=True)
    quote_reason = forms.CharField(max_length=REASON_MAX_LENGTH, required=False)
    duplicate_of = forms.IntegerField(required=False, min_value=1)


class ProtocolFilter(admin.SimpleListFilter):
    title = "protocol"
    parameter_name = "protocol"

    def lookups(self, request, model_admin):
        # order_by() first: the model's ordering would make DISTINCT distinguish rows by their dates
        values = (
            Correction.objects.exclude(protocol_stable_id="")
            .order_by()
            .values_list("protocol_stable_id", flat=True)
            .distinct()
        )
        return [(value, value) for value in sorted(values)]

    def queryset(self, request, queryset):
        return queryset.filter(protocol_stable_id=self.value()) if self.value() else queryset


class RecordTypeFilter(admin.SimpleListFilter):
    """The kind of record a suggestion is about, named as curators call it ("Protocol", not
    "Catalogue | protocol"), listing only the kinds suggestions exist for."""

    title = "record type"
    parameter_name = "record_type"

    def lookups(self, request, model_admin):
        models = Correction.objects.order_by().values_list("content_type__model", flat=True).distinct()
        labels = {model: label for model, label in selectors.record_type_labels().items() if model in set(models)}
        return sorted(labels.items(), key=lambda item: item[1])

    def queryset(self, request, queryset):
        return queryset.filter(content_type__model=self.value()) if self.value() else queryset


@admin.register(Correction)
class CorrectionAdmin(ReadOnlyAdminMixin, SimpleHistoryAdmin):
    """The moderation queue: suggestions oldest first, each beside its field's current value.
    Read-only here: decisions go through the moderation panel and its service only."""

    list_display = ("suggestion", "created", "status", "current", "proposed", "folded")
    list_display_links = ("suggestion",)
    fitted_list = True  # static/css/admin.css sizes the columns
    list_filter = ("status", RecordTypeFilter, ProtocolFilter)
    search_fields = ("target_stable_id", "explanation", "proposed_value", "protocol_stable_id")
    ordering = ("created_at", "id")
    change_form_template = "admin/corrections/correction_change_form.html"
    readonly_fields = [f.name for f in Correction._meta.fields if f.name not in {"token", "ip_hash", "fingerprint"}]
    exclude = ("token", "ip_hash", "fingerprint")

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("content_type")
            .prefetch_related("target")
            .annotate(folded_count=Count("duplicates"))
        )

    @admin.display(description="suggestion", ordering="id")
    def suggestion(self, obj):
        """#12, the field and the record it is about, by the record's title when it arrived."""
        kind = selectors.record_type_labels().get(obj.content_type.model, obj.content_type.model)
        about = f"{obj.field_label or 'the record'} of {kind.lower()} {obj.target_label or obj.target_stable_id}"
        return clamped(f"#{obj.pk}: {about}", full=f"#{obj.pk}: {about} ({obj.target_stable_id})")

    @admin.display(description="sent (UTC)", ordering="created_at")
    def created(self, obj):
        return clamped(list_time(obj.created_at))

    @admin.display(description="current value")
    def value_now(self, obj):
        if not obj.field_name or obj.target is None:
            return "—"
        text = selectors.field_text(obj.target, obj.field_name)
        return text if len(text) <= 120 else text[:119] + "…"

    @admin.display(description="current value")
    def current(self, obj):
        if not obj.field_name or obj.target is None:
            return None
        return clamped(selectors.field_text(obj.target, obj.field_name))

    @admin.display(description="proposed value")
    def proposed(self, obj):
        return clamped(obj.proposed_value)

    @admin.display(description="folded in")
    def folded(self, obj):
        return obj.folded_count

    def get_urls(self):
        custom = [
            path(
                "<path:object_id>/decide/",
                self.admin_site.admin_view(self.decide_view),
                name="corrections_correction_decide",
            )
        ]
        return custom + super().get_urls()

    def decide_view(self, request, object_id):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        correction = get_object_or_404(Correction, pk=object_id)
        change_url = reverse("admin:corrections_correction_change", args=[correction.pk])
        form = ModerationForm(request.POST)
        if not form.is_valid():
            errors = "; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in form.errors.items())
            self.message_user(request, f"Nothing changed: {errors}", messages.ERROR)
            return HttpResponseRedirect(change_url)
        duplicate_of = None
        if form.cleaned_data["duplicate_of"]:
            duplicate_of = Correction.objects.filter(pk=form.cleaned_data["duplicate_of"]).first()
            if duplicate_of is None:
                self.message_user(
                    request,
                    f"Nothing changed: there is no suggestion #{form.cleaned_data['duplicate_of']}",
                    messages.ERROR,
                )
                return HttpResponseRedirect(change_url)
        try:
            decided = correction_decide(
                correction=correction,
                actor=request.user,
                decision=form.cleaned_data["decision"],
                response=form.cleaned_data["response"],
                apply_value=form.cleaned_data["apply_value"],
                duplicate_of=duplicate_of,
                printed_value=form.cleaned_data["printed_value"],
                quote_reason=form.cleaned_data["quote_reason"],
            )
        except CorrectionError as exc:
            self.message_user(request, f"Nothing changed: {exc.message}", messages.ERROR)
        else:
            applied = (
                " The proposed value was applied and the record reopened for review." if decided.value_applied else ""
            )
            self.message_user(
                request, f"Suggestion #{decided.pk}: {decided.get_status_display().lower()}.{applied}", messages.SUCCESS
            )
        return HttpResponseRedirect(change_url)

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None:
            context["moderation"] = {
                "action_url": reverse("admin:corrections_correction_decide", args=[obj.pk]),
                "current_value": self.value_now(obj),
                **selectors.moderation_extras(obj.target, obj.field_name, obj.proposed_value),
                "may_decide": obj.status == CorrectionStatus.NEW
                and request.user.has_perm("corrections.moderate_correction"),
                "public_url": reverse("corrections:correction-status", args=[obj.token]),
            }
        return super().render_change_form(request, context, add=add, change=change, form_url=form_url, obj=obj)
