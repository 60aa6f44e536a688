"""A curator's admin: every catalogue model lists, searches, filters, edits and shows history."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.urls import reverse

from records.models import (
    Area,
    BaselineRole,
    Configuration,
    Context,
    Dataset,
    Decision,
    Evaluation,
    EvidenceRow,
    Limitation,
    Protocol,
    Result,
    Source,
)
from records.seed import PROTOCOL_ID

pytestmark = pytest.mark.django_db

CATALOGUE = [
    Source,
    Area,
    Context,
    Dataset,
    Configuration,
    Protocol,
    Limitation,
    Evaluation,
    Result,
    EvidenceRow,
    BaselineRole,
    Decision,
]


def url(model, view: str, *args) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{view}", args=args)


@pytest.mark.parametrize("model", CATALOGUE, ids=lambda model: model.__name__)
def test_it_offers_every_catalogue_model_with_list_search_add_change_and_history(admin_client, seeded, model):
    assert model in admin.site._registry
    assert admin_client.get(url(model, "changelist")).status_code == 200
    assert admin_client.get(url(model, "changelist"), {"q": "Nucleotide"}).status_code == 200
    assert admin_client.get(url(model, "add")).status_code == 200
    record = model.objects.first()
    if record is not None:
        assert admin_client.get(url(model, "change", record.pk)).status_code == 200
        assert admin_client.get(url(model, "history", record.pk)).status_code == 200


def test_it_shows_results_inside_an_evaluation_and_limitations_and_baselines_inside_a_protocol(admin_client, seeded):
    protocol = Protocol.objects.get(stable_id=PROTOCOL_ID)
    body = admin_client.get(url(Protocol, "change", protocol.pk)).content.decode()
    assert "Developer-reported average" in body and "Select a task-valid null control" in body
    evaluation = protocol.evaluations.first()
    body = admin_client.get(url(Evaluation, "change", evaluation.pk)).content.decode()
    assert evaluation.results.get().printed_value in body


def test_it_finds_a_protocol_by_stable_id_in_the_admin_search(admin_client, seeded):
    body = admin_client.get(url(Protocol, "changelist"), {"q": PROTOCOL_ID}).content.decode()
    assert "1 protocol" in body and PROTOCOL_ID in body


def test_it_saves_an_admin_edit_with_history_under_the_editing_user(admin_client, admin_user, seeded):
    configuration = Configuration.objects.get(stable_id="nt-500m-ia3-dalla-torre-2025")
    response = admin_client.post(
        url(Configuration, "change", configuration.pk),
        {
            "name": configuration.name,
            "short_name": configuration.short_name,
            "family": configuration.family,
            "parameter_count": "500000000",
            "method": configuration.method,
            "description": "Edited in the admin.",
            "source": configuration.source_id,
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    latest = configuration.history.first()
    assert latest.description == "Edited in the admin."
    assert latest.history_user == admin_user
    assert latest.history_change_reason == "edited: description"


@pytest.mark.parametrize("model", CATALOGUE, ids=lambda model: model.__name__)
def test_every_changelist_runs_the_same_queries_for_few_and_many_rows(admin_client, seeded, model):
    """The seed holds 1 suite and 18 tasks, 2 evaluations, ...: a query per row would show as a difference."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries(per_page: int) -> int:
        site_admin = admin.site._registry[model]
        site_admin.list_per_page, saved = per_page, site_admin.list_per_page
        try:
            with CaptureQueriesContext(connection) as captured:
                assert admin_client.get(url(model, "changelist")).status_code == 200
        finally:
            site_admin.list_per_page = saved
        return len(captured)

    assert queries(1) == queries(100)


def test_a_second_source_with_a_held_doi_is_a_form_error_naming_the_first(admin_client, seeded):
    paper = Source.objects.get(stable_id="dalla-torre-2025-nature-methods-nucleotide-transformer")
    paper.doi = "10.1038/s41592-024-02523-z"
    paper.save()
    response = admin_client.post(
        url(Source, "add"),
        {
            "stable_id": "nt-again",
            "title": "NT, again",
            "kind": "paper",
            "doi": "https://doi.org/10.1038/S41592-024-02523-Z",
            "published_date": "2024",
        },
    )
    assert response.status_code == 200 and not Source.objects.filter(stable_id="nt-again").exists()
    assert f"source &#x27;{paper.stable_id}&#x27; already has this DOI" in response.content.decode()


def test_a_result_whose_printed_value_does_not_show_it_is_a_form_error(admin_client, seeded):
    result = Result.objects.get(stable_id="nt-500m-ia3-finetune-runtime-dalla-torre-2025-runtime")
    data = {
        "stable_id": result.stable_id,
        "evaluation": result.evaluation_id,
        "value": "0.41",
        "unit": "minute",
        "printed_value": "0.410 min",
        "relation": "absolute",
        "uncertainty_kind": "",
    }
    response = admin_client.post(url(Result, "change", result.pk), data)
    assert response.status_code == 200
    assert "does not keep the precision printed in" in response.content.decode()
    assert Result.objects.get(pk=result.pk).printed_value == "20 min"
