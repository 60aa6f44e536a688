"""Numbers written with another script's digits ('١٢٣') are refused with a clear error, never
stored as 123: in the API's serializers, imports, correction suggestions and the admin's forms."""

from __future__ import annotations

import copy
import json

import pytest
from django.core.exceptions import ValidationError

from common.numbers import other_digits, other_digits_problem
from tests.api.conftest import token_client  # noqa: F401
from tests.api.test_import import counts, seed_document

pytestmark = pytest.mark.django_db

ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
FULLWIDTH = str.maketrans("0123456789", "０１２３４５６７８９")


def test_it_finds_digits_that_int_would_read_but_are_not_0_to_9():
    assert int("١٢٣") == 123 and int("１２３") == 123  # what Python does, and why the check exists
    assert other_digits("١٢٣") == "١٢٣" and other_digits("१२३") == "१२३" and other_digits("１２３") == "１２３"
    assert other_digits("123") == "" and other_digits("3E-12") == "" and other_digits("²") == ""
    assert "digits of another script" in other_digits_problem("١٢٣") and other_digits_problem(123) == ""


def test_the_import_refuses_another_scripts_digits_and_names_the_field(token_client):  # noqa: F811
    document = copy.deepcopy(seed_document())
    task = document["datasets"][0]["tasks"][3]
    task["train_size"] = str(task["train_size"]).translate(ARABIC_INDIC)
    response = token_client("curator").post("/api/v1/imports/", document, format="json")
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["path"] == "datasets[0].tasks[3].train_size" and "digits of another script" in error["message"]
    assert sum(counts().values()) == 0


def test_the_api_refuses_another_scripts_digits_in_a_number_field(token_client):  # noqa: F811
    curator = token_client("curator")
    assert curator.post("/api/v1/imports/", seed_document(), format="json").status_code in (200, 201)
    task = seed_document()["datasets"][0]["tasks"][3]
    before = curator.get(f"/api/v1/datasets/{task['stable_id']}/").json()
    for written in (str(task["train_size"]).translate(ARABIC_INDIC), str(task["train_size"]).translate(FULLWIDTH)):
        response = curator.patch(f"/api/v1/datasets/{task['stable_id']}/", {"train_size": written}, format="json")
        assert response.status_code == 400, response.content
        assert "digits of another script" in json.dumps(response.json()["train_size"], ensure_ascii=False)
    assert curator.get(f"/api/v1/datasets/{task['stable_id']}/").json()["train_size"] == before["train_size"]
    plain = curator.patch(
        f"/api/v1/datasets/{task['stable_id']}/", {"train_size": str(task["train_size"])}, format="json"
    )
    assert plain.status_code == 200


def test_a_correction_suggestion_with_another_scripts_digits_is_refused(client, seeded):
    from corrections.models import Correction
    from records.models import Dataset

    task = Dataset.objects.exclude(train_size=None).order_by("pk").first()
    body = {
        "target_type": "dataset",
        "target_id": task.stable_id,
        "field": "train_size",
        "proposed_value": str(task.train_size).translate(ARABIC_INDIC),
        "explanation": "The dataset card gives this training set size.",
    }
    response = client.post("/api/v1/corrections/", json.dumps(body), content_type="application/json")
    assert response.status_code == 400 and "digits of another script" in response.content.decode()
    assert not Correction.objects.exists()


def test_the_benchmark_job_overrides_refuse_another_scripts_digits():
    from benchmarks.api import OverridesSerializer

    refused = OverridesSerializer(data={"steps": "٤٠", "learning_rate": "٠.٠٠٣", "seed": "٧"})
    assert not refused.is_valid()
    assert set(refused.errors) == {"steps", "learning_rate", "seed"}
    assert "digits of another script" in str(refused.errors["steps"][0])
    assert OverridesSerializer(data={"steps": "40", "learning_rate": "0.003", "seed": "7"}).is_valid()


def test_the_admin_forms_refuse_another_scripts_digits(rf, make_user):
    from django.contrib import admin

    from benchmarks.models import Recipe
    from records.models import Dataset

    request = rf.get("/")
    request.user = make_user("superuser")
    for model, name in ((Dataset, "train_size"), (Recipe, "steps"), (Recipe, "learning_rate")):
        field = admin.site._registry[model].get_form(request)().fields[name]
        with pytest.raises(ValidationError, match="digits of another script"):
            field.clean("١٢٣")
        assert field.clean("123") == 123
