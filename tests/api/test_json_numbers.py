"""JSON numbers reach the API with the digits they were written with, and never cause a 500."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from records.models import Result
from records.values import exact_text

pytestmark = pytest.mark.django_db

RESULT = "nt-500m-ia3-finetune-runtime-dalla-torre-2025-runtime"


def test_a_json_number_keeps_its_digits_for_an_exact_value_and_is_a_float_to_other_fields(seeded, token_client):
    api = token_client("curator")
    body = (
        '{"value": 20.0, "printed_value": "20.0 min", "num_runs": 3, "quote_mismatch_reason": "Table 3 prints 20.0."}'
    )
    response = api.patch(f"/api/v1/results/{RESULT}/", body, content_type="application/json")
    assert response.status_code == 200, response.json()
    assert response.json()["value"] == "20.0" and exact_text(Result.objects.get(stable_id=RESULT).value) == "20.0"
    suggestion = (
        '{"target_type": "result", "target_id": "%s", "field": "value", "proposed_value": 0.55, "explanation": "x"}'
        % RESULT
    )
    sent = APIClient().post(
        "/api/v1/corrections/", suggestion, content_type="application/json", REMOTE_ADDR="192.0.2.40"
    )
    assert sent.status_code == 201, sent.json()


@pytest.mark.parametrize(
    "number", ["1e9999999999999999999", "-1e400", "1e-400", "123456789012345678901234567890123456789012345.5"]
)
def test_an_extreme_json_number_is_a_clear_400_never_a_500(seeded, token_client, number):
    api = token_client("curator")
    response = api.patch(
        f"/api/v1/results/{RESULT}/",
        '{"value": %s, "printed_value": "%s"}' % (number, number),
        content_type="application/json",
    )
    assert response.status_code == 400 and "value" in response.json()
    suggestion = (
        '{"target_type": "result", "target_id": "%s", "field": "value", "proposed_value": %s, "explanation": "x"}'
        % (RESULT, number)
    )
    sent = APIClient().post(
        "/api/v1/corrections/", suggestion, content_type="application/json", REMOTE_ADDR="192.0.2.41"
    )
    assert sent.status_code == 400


def test_a_choice_error_names_the_valid_choices(seeded, token_client):
    response = token_client("curator").patch(
        "/api/v1/evaluations/nt-500m-ia3-finetune-runtime-dalla-torre-2025/", {"measured_by": "rumour"}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["measured_by"] == ['"rumour" is not a valid choice: use one of authors, third_party, portal']
