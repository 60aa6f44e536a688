"""Every refusal of the correction form names its cause: a value the visitor can fix marks its field;
what they cannot see (the time stamp, the honeypot) is said for the whole form, with what to do."""

from __future__ import annotations

import re

import pytest

from corrections.forms import MIN_SECONDS
from corrections.models import Correction
from tests.corrections.test_corrections import form_data, stamp

pytestmark = pytest.mark.django_db


def said(response) -> str:
    """The text of the alert above the form, tags removed."""
    html = re.search(r'<div class="form-errors" role="alert" id="form-errors">(.*?)</div>', response.content.decode())
    assert html, "no alert above the form"
    return " ".join(re.sub(r"<[^>]+>", " ", html.group(1)).replace("&quot;", '"').split())


def test_it_says_a_form_sent_too_fast_was_refused_for_that_and_to_wait_and_send_again(client, seeded):
    response = client.post("/corrections/new/", form_data(started=stamp(0.5)))
    assert response.status_code == 400 and not Correction.objects.exists()
    form = response.context["form"]
    assert not [name for name in form.errors if name != "__all__"]  # nothing to mark: no field is blamed
    message = " ".join(form.non_field_errors())
    assert f"sent within {MIN_SECONDS} seconds" in message and "wait a moment, then send it again" in message
    text = said(response)
    assert text.startswith("Your suggestion was not sent.") and "wait a moment, then send it again" in text
    assert "marked below" not in text
    assert 'class="field has-error"' not in response.content.decode()
    # Waiting and sending the re-rendered form (its fresh stamp, aged) goes through.
    again = {**form_data(), "started": stamp(MIN_SECONDS + 1)}
    assert client.post("/corrections/new/", again).status_code == 302


def test_a_field_error_marks_its_field_and_the_alert_names_it(client, seeded):
    response = client.post("/corrections/new/", form_data(explanation="", proposed_value="about 15"))
    assert response.status_code == 400
    text = said(response)
    assert "Correct the fields marked below: Proposed value, Explanation." in text
    page = response.content.decode()
    assert page.count('class="field has-error"') == 2
    assert 'id="id_explanation"' in page and "This field is required." in page


@pytest.mark.parametrize(
    ("data", "cause"),
    [
        ({"started": "a day old"}, "more than a day old"),
        ({"started": "forged"}, "could not be checked"),
        ({"started": ""}, "could not be checked"),
        ({"website": "http://spam.example"}, "was filled in, as spam robots do"),
    ],
)
def test_a_refusal_of_what_the_visitor_cannot_see_says_its_cause_above_the_form(client, seeded, data, cause):
    if data.get("started") == "a day old":
        data = {"started": stamp(2 * 24 * 3600)}
    response = client.post("/corrections/new/", form_data(**data))
    assert response.status_code == 400 and not Correction.objects.exists()
    text = said(response)
    assert cause in text and "marked below" not in text
    assert not [name for name in response.context["form"].errors if name != "__all__"]
