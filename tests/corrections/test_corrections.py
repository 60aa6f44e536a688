"""Public correction suggestions: the form, the API, anti-abuse, moderation and mail."""

from __future__ import annotations

import json
import re
import time
from unittest import mock

import pytest
from django.core import signing
from django.urls import reverse

from corrections.forms import TIMING_SALT, timing_stamp
from corrections.models import Correction, CorrectionStatus
from corrections.services import CorrectionError, correction_decide, correction_submit
from records.models import Protocol, Result
from records.seed import PROTOCOL_ID
from reviews.models import ReviewEvent, ReviewState

pytestmark = pytest.mark.django_db

RESULT_500M = "nt-500m-ia3-finetune-runtime-dalla-torre-2025-runtime"
PAGE = f"protocol:{PROTOCOL_ID}"


def stamp(age_seconds: float = 10) -> str:
    with mock.patch("time.time", return_value=time.time() - age_seconds):
        return timing_stamp()


def form_data(**overrides) -> dict:
    data = {
        "record": PAGE,
        "target": f"result:{RESULT_500M}:value",
        "proposed_value": "15",
        "explanation": "The Discussion says under 15 min on a single GPU.",
        "supporting_source": "https://pmc.ncbi.nlm.nih.gov/articles/PMC11810778/",
        "supporting_locator": "Discussion, paragraph 3",
        "contact_email": "reader@example.org",
        "website": "",
        "started": stamp(),
    }
    data.update(overrides)
    return data


def api_data(**overrides) -> dict:
    data = {
        "target_type": "result",
        "target_id": RESULT_500M,
        "field": "value",
        "proposed_value": "15",
        "explanation": "The Discussion says under 15 min on a single GPU.",
        "supporting_source": "10.1038/s41592-024-02523-z",
    }
    data.update(overrides)
    return data


def post_api(client, data, **extra):
    return client.post("/api/v1/corrections/", json.dumps(data), content_type="application/json", **extra)


def test_it_stores_a_valid_suggestion_and_shows_its_private_status_page(client, seeded):
    response = client.post("/corrections/new/", form_data())
    correction = Correction.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/corrections/{correction.token}/?sent=1"
    assert (correction.target_stable_id, correction.field_name, correction.value_at_submission) == (
        RESULT_500M,
        "value",
        "20",
    )
    assert correction.protocol_stable_id == PROTOCOL_ID and correction.status == CorrectionStatus.NEW
    page = client.get(response["Location"])
    body = page.content.decode()
    assert "Thank you" in body and f"/corrections/{correction.token}/" in body and "New" in body
    assert "reader@example.org" not in body
    assert page["X-Robots-Tag"] == "noindex" and "no-store" in page["Cache-Control"]


def test_it_lists_new_suggestions_oldest_first_beside_the_current_value(client, seeded, curator):
    client.post("/corrections/new/", form_data())
    client.post(
        "/corrections/new/",
        form_data(target=f"protocol:{PROTOCOL_ID}:title", proposed_value="A better title", explanation="Second."),
    )
    client.force_login(curator)
    body = client.get(reverse("admin:corrections_correction_changelist"), {"status__exact": "new"}).content.decode()
    assert body.index(RESULT_500M) < body.index(": title of protocol ")  # the list's first column names each
    assert '<td class="field-current"><span class="clamp">20</span></td>' in body
    filtered = client.get(
        reverse("admin:corrections_correction_changelist"), {"protocol": PROTOCOL_ID, "record_type": "result"}
    )
    assert filtered.status_code == 200 and ": title of protocol " not in filtered.content.decode()
    # each protocol once in its filter (two suggestions on one protocol), record types by name
    filters = re.findall(r'<a href="\?[^"]*">([^<]+)</a>', body.split('id="changelist-filter"')[1])
    assert filters.count(PROTOCOL_ID) == 1
    assert {"Protocol", "Result"} <= set(filters) and not [name for name in filters if "|" in name]


def test_the_thank_you_page_leads_back_to_the_record(client, seeded):
    response = client.post("/corrections/new/", form_data())
    body = client.get(response["Location"]).content.decode()
    evaluation = Result.objects.get(stable_id=RESULT_500M).evaluation
    assert f'href="/protocols/{PROTOCOL_ID}/#evaluation-{evaluation.stable_id}">Back to the record</a>' in body


@pytest.mark.parametrize(
    "overrides, field",
    [
        ({"explanation": ""}, "explanation"),
        ({"explanation": "x" * 5001}, "explanation"),
        ({"proposed_value": ""}, "proposed_value"),
        ({"proposed_value": "y" * 2001}, "proposed_value"),
        ({"supporting_source": "javascript:alert(1)"}, "supporting_source"),
        ({"supporting_source": "not a link"}, "supporting_source"),
        ({"supporting_locator": "z" * 301}, "supporting_locator"),
        ({"contact_email": "not-an-address"}, "contact_email"),
        ({"target": "protocol:no-such-protocol:title"}, "target"),
        ({"explanation": "nul\x00byte"}, "explanation"),
    ],
)
def test_it_refuses_invalid_form_input_naming_the_field_and_stores_nothing(client, seeded, overrides, field):
    response = client.post("/corrections/new/", form_data(**overrides))
    assert response.status_code == 400
    assert response.context["form"].errors.get(field), response.context["form"].errors
    assert not Correction.objects.exists()


@pytest.mark.parametrize(
    "overrides, field",
    [
        ({"explanation": ""}, "explanation"),
        ({"target_type": "user"}, "target_type"),
        ({"target_id": "no-such-result"}, "target_id"),
        ({"field": "password"}, "field"),
        ({"proposed_value": ""}, "proposed_value"),
        ({"supporting_source": "javascript:alert(1)"}, "supporting_source"),
        ({"contact_email": "nope"}, "contact_email"),
        ({"website": "http://spam.example"}, "website"),
        ({"explanation": "a" * 5001}, "explanation"),
    ],
)
def test_the_api_refuses_invalid_input_with_400_naming_the_field(client, seeded, overrides, field):
    response = post_api(client, api_data(**overrides))
    assert response.status_code == 400
    assert field in response.json()
    assert not Correction.objects.exists()


def test_the_api_answers_201_with_the_status_link(client, seeded):
    response = post_api(client, api_data())
    assert response.status_code == 201
    correction = Correction.objects.get()
    assert response.json() == {"status": "new", "status_url": f"http://testserver/corrections/{correction.token}/"}


def test_it_refuses_a_filled_honeypot(client, seeded):
    response = client.post("/corrections/new/", form_data(website="http://spam.example"))
    assert response.status_code == 400 and not Correction.objects.exists()


@pytest.mark.parametrize("age, message", [(0.5, "That was quick"), (2 * 24 * 3600, "more than a day old")])
def test_it_refuses_a_form_sent_too_fast_or_too_late_politely(client, seeded, age, message):
    response = client.post("/corrections/new/", form_data(started=stamp(age)))
    assert response.status_code == 400 and message in response.content.decode()
    assert not Correction.objects.exists()
    fresh = response.context["form"].data["started"]
    assert fresh != form_data()["started"]  # a new stamp, so the visitor can send it again


def test_it_refuses_a_tampered_time_stamp(client, seeded):
    response = client.post("/corrections/new/", form_data(started="1700000000.0:forged"))
    assert response.status_code == 400 and "could not be checked" in response.content.decode()


def test_a_time_stamp_sends_one_suggestion_and_a_replay_is_refused(client, seeded):
    data = form_data()
    assert client.post("/corrections/new/", data).status_code == 302
    for i in range(5):  # the same stamp with other texts, as a script would replay it
        replay = client.post("/corrections/new/", {**data, **distinct(i)})
        assert replay.status_code == 400 and "This form was sent already" in replay.content.decode()
    assert Correction.objects.count() == 1
    assert replay.context["form"].data["started"] != data["started"]  # a fresh stamp for a person to go on


def test_a_form_refused_for_a_mistake_keeps_its_stamp_for_the_corrected_one(client, seeded):
    data = form_data(proposed_value="about 15")
    mistake = client.post("/corrections/new/", data)
    assert mistake.status_code == 400 and "not a valid" in mistake.content.decode()
    assert client.post("/corrections/new/", {**data, "proposed_value": "15"}).status_code == 302


def test_it_refuses_a_stamp_without_a_nonce(client, seeded):
    with mock.patch("time.time", return_value=time.time() - 10):
        earlier_format = signing.dumps(time.time(), salt=TIMING_SALT)
    response = client.post("/corrections/new/", form_data(started=earlier_format))
    assert response.status_code == 400 and "could not be checked" in response.content.decode()
    assert not Correction.objects.exists()


def distinct(i: int) -> dict:
    return {"explanation": f"Suggestion number {i} with its own reasons."}


@pytest.mark.parametrize("proxies", [0, 1])
def test_the_21st_suggestion_from_one_address_gets_429_even_with_rotating_forwarded_for(
    client, seeded, settings, proxies
):
    settings.NUM_PROXIES = proxies
    settings.TRUSTED_PROXIES = ["127.0.0.1"] if proxies else []  # the test client's address is the proxy
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": proxies}
    for i in range(20):
        response = post_api(client, api_data(**distinct(i)), HTTP_X_FORWARDED_FOR=f"10.0.{i}.1, 203.0.113.7")
        assert response.status_code == 201, response.content
    response = post_api(client, api_data(**distinct(21)), HTTP_X_FORWARDED_FOR="10.9.9.9, 203.0.113.7")
    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0
    assert Correction.objects.count() == 20
    form = client.post("/corrections/new/", form_data(**distinct(22)), HTTP_X_FORWARDED_FOR="10.8.8.8, 203.0.113.7")
    assert form.status_code == 429 and int(form["Retry-After"]) > 0
    assert Correction.objects.count() == 20


def test_it_limits_suggestions_per_record(client, seeded, settings):
    settings.CORRECTIONS_PER_RECORD = 3
    for i in range(3):
        assert post_api(client, api_data(**distinct(i)), REMOTE_ADDR=f"192.0.2.{i}").status_code == 201
    assert post_api(client, api_data(**distinct(9)), REMOTE_ADDR="192.0.2.99").status_code == 429


def test_it_refuses_an_oversized_body_with_413(client, seeded):
    huge = "x" * 40_000
    assert post_api(client, api_data(explanation=huge)).status_code == 413
    assert client.post("/corrections/new/", form_data(explanation=huge)).status_code == 413
    assert not Correction.objects.exists()


XSS = [
    "<script>alert('x')</script>",
    '"><img src=x onerror=alert(1)>',
    "javascript:alert(document.cookie)",
    '<a href="javascript:alert(1)">click</a>',
    "\u202egnp.exe <svg onload=alert(1)>",
    "\ufeff<scr\u200bipt>alert(1)</scr\u200bipt>",
    "{{ settings.SECRET_KEY }} {% debug %}",
]


@pytest.mark.parametrize("payload", XSS)
def test_it_shows_hostile_text_escaped_on_the_status_page_in_the_admin_and_in_the_api(client, seeded, curator, payload):
    response = post_api(
        client, api_data(field="printed_value", proposed_value=payload, explanation=payload, supporting_locator=payload)
    )
    assert response.status_code == 201 and response["Content-Type"] == "application/json"
    correction = Correction.objects.get()
    assert correction.explanation == payload.strip()  # stored as sent
    status_page = client.get(f"/corrections/{correction.token}/").content.decode()
    client.force_login(curator)
    admin_page = client.get(reverse("admin:corrections_correction_change", args=[correction.pk])).content.decode()
    for body in (status_page, admin_page):
        assert "<script>alert" not in body and "<img src=x" not in body and "<svg onload" not in body
        assert 'href="javascript:' not in body
        assert "SECRET_KEY }}" in body or "{{" not in payload  # template syntax is shown, never evaluated
    assert "&lt;" in status_page or "<" not in payload


def test_accepting_with_the_value_applied_changes_the_field_reopens_the_record_and_names_the_correction(
    client, seeded, curator
):
    client.post("/corrections/new/", form_data())
    correction = Correction.objects.get()
    client.force_login(curator)
    response = client.post(
        reverse("admin:corrections_correction_decide", args=[correction.pk]),
        {
            "decision": "accept",
            "response": "Recorded the single-GPU figure.",
            "apply_value": "1",
            "quote_reason": "The Discussion's single-GPU figure; the Methods sentence quoted prints 20 and 50.",
        },
    )
    assert response.status_code == 302
    result = Result.objects.get(stable_id=RESULT_500M)
    assert (result.display_value, result.printed_value) == ("15", "15 min")  # the printed value follows the value
    assert result.quote_mismatch_reason.startswith("The Discussion's single-GPU figure")
    evaluation = result.evaluation
    # The seed's evaluations are excluded: the correction keeps them out, with their concern, until a reinstate.
    assert evaluation.review_state == ReviewState.EXCLUDED_RECHECK and evaluation.concern.startswith(
        "Fine-tuning time conflicts"
    )
    assert f"correction #{correction.pk} accepted" in result.history.first().history_change_reason
    reopen = ReviewEvent.objects.filter(record_stable_id=evaluation.stable_id).last()
    assert reopen.transition == "reopen_excluded" and f"correction #{correction.pk}" in reopen.reason
    correction.refresh_from_db()
    assert (correction.status, correction.value_applied, correction.response) == (
        "accepted",
        True,
        "Recorded the single-GPU figure.",
    )
    assert "Accepted" in client.get(f"/corrections/{correction.token}/").content.decode()


def test_it_keeps_the_old_value_when_the_proposed_one_contradicts_the_quote_and_no_reason_is_given(
    client, seeded, curator
):
    client.post("/corrections/new/", form_data())
    correction = Correction.objects.get()
    client.force_login(curator)
    page = client.get(reverse("admin:corrections_correction_change", args=[correction.pk])).content.decode()
    assert "lasted 20 min for the 500M-parameter models" in page  # the quote beside the value
    assert (
        "The proposed value contradicts the quote: its quote does not print 15 (it prints 20, 500M, 50, 2.5B)" in page
    )
    response = client.post(
        reverse("admin:corrections_correction_decide", args=[correction.pk]),
        {"decision": "accept", "response": "Recorded the single-GPU figure.", "apply_value": "1"},
        follow=True,
    )
    assert (
        "Nothing changed: the proposed value cannot be applied: its quote does not print 15"
        in response.content.decode()
    )
    result = Result.objects.get(stable_id=RESULT_500M)
    assert (result.display_value, result.printed_value, result.quote_mismatch_reason) == ("20", "20 min", "")
    correction.refresh_from_db()
    assert correction.status == CorrectionStatus.NEW and not correction.value_applied


def test_it_refuses_a_value_that_does_not_fit_the_field_and_changes_nothing(seeded, curator):
    correction = correction_submit(
        target=Result.objects.get(stable_id=RESULT_500M),
        field_name="value",
        proposed_value="about fifteen",
        explanation="x",
        supporting_source="",
        supporting_locator="",
        contact_email="",
        ip="192.0.2.1",
    )
    with pytest.raises(CorrectionError, match="cannot be applied"):
        correction_decide(correction=correction, actor=curator, decision="accept", response="ok", apply_value=True)
    correction.refresh_from_db()
    assert correction.status == CorrectionStatus.NEW
    assert Result.objects.get(stable_id=RESULT_500M).display_value == "20"


def test_it_refuses_to_apply_a_unit_its_protocol_does_not_use_and_changes_nothing(seeded, curator):
    correction = correction_submit(
        target=Result.objects.get(stable_id=RESULT_500M),
        field_name="unit",
        proposed_value="hour",
        explanation="the table says hours",
        supporting_source="",
        supporting_locator="",
        contact_email="",
        ip="192.0.2.1",
    )
    with pytest.raises(CorrectionError, match="cannot be applied: must be 'minute'"):
        correction_decide(correction=correction, actor=curator, decision="accept", response="ok", apply_value=True)
    correction.refresh_from_db()
    assert correction.status == CorrectionStatus.NEW
    assert Result.objects.get(stable_id=RESULT_500M).unit == "minute"


def test_a_curator_cannot_accept_a_suggestion_they_submitted_while_logged_in(client, seeded, curator, other_curator):
    client.force_login(curator)
    client.post("/corrections/new/", form_data())
    correction = Correction.objects.get()
    assert correction.submitted_by == curator
    with pytest.raises(CorrectionError, match="submitted this suggestion yourself"):
        correction_decide(correction=correction, actor=curator, decision="accept", response="fine")
    correction_decide(correction=correction, actor=other_curator, decision="accept", response="fine")


def test_it_requires_a_response_and_the_moderator_permission(seeded, curator, make_user):
    correction = correction_submit(
        target=Protocol.objects.get(),
        field_name="",
        proposed_value="",
        explanation="x",
        supporting_source="",
        supporting_locator="",
        contact_email="",
        ip="192.0.2.1",
    )
    with pytest.raises(CorrectionError, match="response"):
        correction_decide(correction=correction, actor=curator, decision="reject", response=" ")
    with pytest.raises(CorrectionError, match="permission"):
        correction_decide(correction=correction, actor=make_user("release_manager"), decision="reject", response="no")


def test_it_folds_identical_suggestions_on_the_same_record_within_a_day(client, seeded, curator):
    client.post("/corrections/new/", form_data())
    client.post(
        "/corrections/new/",
        form_data(
            explanation="  THE Discussion says under 15 min on a single GPU. ", contact_email="second@example.org"
        ),
    )
    first, second = Correction.objects.order_by("id")
    assert (first.status, second.status, second.duplicate_of) == ("new", "duplicate", first)
    client.force_login(curator)
    body = client.get(reverse("admin:corrections_correction_changelist"), {"status__exact": "new"}).content.decode()
    assert body.count(RESULT_500M) == 1 and '<td class="field-folded">1</td>' in body
    correction_decide(correction=first, actor=curator, decision="reject", response="The Methods figure stands.")
    assert "The Methods figure stands." in client.get(f"/corrections/{second.token}/").content.decode()


def test_it_does_not_fold_a_suggestion_into_one_already_decided(client, seeded, curator):
    client.post("/corrections/new/", form_data())
    first = Correction.objects.get()
    correction_decide(correction=first, actor=curator, decision="reject", response="The Methods figure stands.")
    client.post("/corrections/new/", form_data())
    again = Correction.objects.exclude(pk=first.pk).get()
    assert (again.status, again.duplicate_of) == ("new", None)


@pytest.mark.parametrize("proposed", ["about 0.55", "0.55?", "NaN"])
def test_a_proposed_value_that_is_not_a_number_is_refused_when_sent_by_form_or_api(client, seeded, proposed):
    response = post_api(client, api_data(proposed_value=proposed))
    assert response.status_code == 400
    assert "proposed_value" in response.json() and "not a valid value" in response.json()["proposed_value"][0]
    page = client.post("/corrections/new/", form_data(proposed_value=proposed))
    assert page.status_code == 400 and b"not a valid value" in page.content  # the form again, with the error
    assert not Correction.objects.exists()


def test_a_proposed_choice_outside_the_fields_choices_lists_them(client, seeded):
    response = post_api(client, api_data(field="uncertainty_kind", proposed_value="variance"))
    assert response.status_code == 400
    assert "'variance' is not one of: sd, se, ci, range" in response.json()["proposed_value"][0]


def test_the_curator_gives_the_printed_value_that_goes_with_a_corrected_value(client, seeded, curator):
    client.post("/corrections/new/", form_data(proposed_value="14.5"))
    correction = Correction.objects.get()
    client.force_login(curator)
    panel = client.get(reverse("admin:corrections_correction_change", args=[correction.pk])).content.decode()
    assert 'name="printed_value"' in panel and 'value="14.5 min"' in panel  # the old printed text with the new number
    client.post(
        reverse("admin:corrections_correction_decide", args=[correction.pk]),
        {
            "decision": "accept",
            "response": "As printed in the Discussion.",
            "apply_value": "1",
            "quote_reason": "The Discussion's figure, not the Methods sentence quoted.",
            "printed_value": "under 14.5 min",
        },
    )
    result = Result.objects.get(stable_id=RESULT_500M)
    assert (result.display_value, result.printed_value) == ("14.5", "under 14.5 min")


def test_a_printed_value_that_does_not_show_the_corrected_value_changes_nothing(seeded, curator):
    correction = correction_submit(
        target=Result.objects.get(stable_id=RESULT_500M),
        field_name="value",
        proposed_value="14.5",
        explanation="x",
        supporting_source="",
        supporting_locator="",
        contact_email="",
        ip="192.0.2.1",
    )
    with pytest.raises(CorrectionError, match="not the number printed"):
        correction_decide(
            correction=correction,
            actor=curator,
            decision="accept",
            response="ok",
            apply_value=True,
            printed_value="15 min",
            quote_reason="The Discussion's figure.",
        )
    assert Result.objects.get(stable_id=RESULT_500M).printed_value == "20 min"


def test_a_cached_record_page_gives_each_reader_their_own_csrf_token_and_a_fresh_time_stamp(seeded):
    from django.test import Client

    def form_of(client) -> tuple[str, str]:
        body = client.get(f"/protocols/{PROTOCOL_ID}/").content.decode()
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', body).group(1)
        started = re.search(r'name="started" value="([^"]+)"', body).group(1)
        return token, started

    first, second = Client(enforce_csrf_checks=True), Client(enforce_csrf_checks=True)
    first_token, first_started = form_of(first)
    with mock.patch("time.time", return_value=time.time() + 5):
        second_token, second_started = form_of(second)  # from the page cache
    assert first.cookies["csrftoken"].value != second.cookies["csrftoken"].value
    assert first_started != second_started and "\x00" not in first_token + second_token
    data = form_data(started=stamp(), csrfmiddlewaretoken=second_token)
    assert first.post("/corrections/new/", data).status_code == 403  # another reader's token
    assert second.post("/corrections/new/", data).status_code == 302
