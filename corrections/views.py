"""Public views for correction suggestions: the form page and the private status page."""

from __future__ import annotations

from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_safe

from common.ratelimit import RateLimited, client_ip
from corrections import selectors
from corrections.forms import CorrectionForm, parse_target
from corrections.models import Correction
from corrections.services import correction_submit


def _page_record(reference: str):
    try:
        target_type, stable_id, _field = parse_target(f"{reference}:")
    except Exception:
        raise Http404("No such record") from None
    record = selectors.resolve(target_type, stable_id)
    if record is None:
        raise Http404("No such record")
    return record


def _chosen_record_reference(chosen: str) -> str:
    """The record whose form offers the target a value's link chose ("protocol:<id>" for a result)."""
    try:
        target_type, stable_id, _field = parse_target(chosen)
    except Exception:
        raise Http404("No such record") from None
    target = selectors.resolve(target_type, stable_id)
    if target is None:
        raise Http404("No such record")
    record = selectors.page_record_of(target)
    return f"{selectors.target_type_of(record)}:{record.stable_id}"


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def correction_new(request):
    """The form on a page of its own: a record's (`?record=type:id`), with what should change chosen
    when a link says so (`?target=type:id:field`, or a value's link, `?value=<result id>`: the record
    is then the value's protocol). It offers the record's fields and the chosen value; other values
    are found by a search (`?find=<words>`, corrections.selectors.form_choices), never all listed."""
    reference = (request.POST.get("record") or request.GET.get("record") or "")[:200]
    chosen = ""
    if request.method != "POST":
        value = request.GET.get("value", "")[:200]
        chosen = selectors.value_target(value) if value else request.GET.get("target", "")[:300]
    if chosen and not reference:
        reference = _chosen_record_reference(chosen)
    page_record = _page_record(reference)
    posted = request.POST.get("target", "")[:300] if request.method == "POST" else ""
    offered = selectors.form_choices(page_record, find=request.GET.get("find", ""), chosen=posted or chosen)
    initial = {"record": reference}
    chosen_missing = bool(chosen) and chosen not in dict(offered.choices)
    if chosen and not chosen_missing:
        initial["target"] = chosen
    form = CorrectionForm(request.POST or None, choices=offered.choices, initial=initial)
    context = {
        "form": form,
        "page_record": page_record,
        "chosen_missing": chosen_missing,
        "reference": reference,
        "find": offered.find,
        "found": offered.found,
        "found_max": selectors.FOUND_VALUES_MAX,
        "searchable": selectors.offers_values(page_record),
    }
    if request.method == "POST" and form.is_valid():
        target_type, stable_id, field_name = parse_target(form.cleaned_data["target"])
        target = selectors.resolve(target_type, stable_id)
        if target is None:
            form.add_error("target", "That record no longer exists.")
        else:
            try:
                correction = correction_submit(
                    target=target,
                    field_name=field_name,
                    proposed_value=form.cleaned_data["proposed_value"],
                    explanation=form.cleaned_data["explanation"],
                    supporting_source=form.cleaned_data["supporting_source"],
                    supporting_locator=form.cleaned_data["supporting_locator"],
                    contact_email=form.cleaned_data["contact_email"],
                    ip=client_ip(request),
                    user=request.user,
                )
            except RateLimited as limited:
                response = render(
                    request, "corrections/correction_limited.html", {"retry_after": limited.retry_after}, status=429
                )
                response["Retry-After"] = str(limited.retry_after)
                return response
            return redirect(f"/corrections/{correction.token}/?sent=1")
    status = 400 if request.method == "POST" or chosen_missing else 200
    return render(request, "corrections/correction_new.html", context, status=status)


@never_cache
@require_safe
def correction_status(request, token: str):
    correction = get_object_or_404(Correction.objects.select_related("duplicate_of"), token=token)
    context = {
        "correction": correction,
        "sent": "sent" in request.GET,
        "record_url": selectors.page_of(correction.target),
    }
    response = render(request, "corrections/correction_status.html", context)
    response["X-Robots-Tag"] = "noindex"
    response["Referrer-Policy"] = "no-referrer"  # the token is in the URL: never leak it to another site
    return response
