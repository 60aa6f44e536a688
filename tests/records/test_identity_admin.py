"""The curators' desk for identity across papers, through the Django test client: works with their
versions, duplicate sources refused by the source form, models with aliases and configurations,
merge, split and undo forms (and who may use them), task equivalences."""

from __future__ import annotations

import re

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.urls import reverse

from records.models import Configuration, GenomicModel, ModelAlias, ModelChange, Source, TaskEquivalence, Work
from records.seed import PAPER_ID
from tests.factories import (
    ConfigurationFactory,
    DatasetFactory,
    GenomicModelFactory,
    ModelAliasFactory,
    SourceFactory,
    WorkFactory,
)

pytestmark = pytest.mark.django_db

IDENTITY = [Work, GenomicModel, ModelAlias, TaskEquivalence]


def url(model, view: str, *args) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{view}", args=args)


@pytest.fixture
def desk(client, curator):
    client.force_login(curator)
    return client


@pytest.fixture
def two_models():
    kept = GenomicModelFactory(stable_id="hyenadna-tiny", name="HyenaDNA tiny")
    duplicate = GenomicModelFactory(stable_id="hyenadna-1k", name="HyenaDNA 1k")
    ConfigurationFactory(stable_id="kept-config", name="HyenaDNA tiny, fine-tuned", model=kept)
    for n in (1, 2):
        ConfigurationFactory(stable_id=f"duplicate-config-{n}", name=f"HyenaDNA-1KB run {n}", model=duplicate)
    ModelAliasFactory(stable_id="duplicate-alias", model=duplicate, alias="HyenaDNA-1KB")
    return kept, duplicate


def where() -> dict[str, str | None]:
    return {
        **dict(Configuration.objects.values_list("stable_id", "model__stable_id")),
        **dict(ModelAlias.objects.values_list("stable_id", "model__stable_id")),
    }


def source_form(**values) -> dict[str, str]:
    return {"stable_id": "new-source", "title": "A new paper", "kind": "paper", **values}


# -- works and sources


@pytest.mark.parametrize("model", IDENTITY + [ModelChange], ids=lambda model: model.__name__)
def test_a_curator_lists_searches_and_opens_every_identity_record(desk, seeded, two_models, model):
    assert desk.get(url(model, "changelist")).status_code == 200
    assert desk.get(url(model, "changelist"), {"q": "hyena"}).status_code == 200
    assert desk.get(url(model, "add")).status_code == (403 if model is ModelChange else 200)
    record = model.objects.first()
    if record is not None:
        assert desk.get(url(model, "change", record.pk)).status_code == 200


def test_a_works_page_lists_its_versions_with_links(desk, seeded):
    work = Work.objects.get(stable_id=PAPER_ID)
    paper = Source.objects.get(stable_id=PAPER_ID)
    body = desk.get(url(Work, "change", work.pk)).content.decode()
    assert "Versions (sources)" in body and url(Source, "change", paper.pk) in body


def test_it_refuses_the_seed_paper_listed_again_by_its_doi_naming_the_source(desk, seeded):
    response = desk.post(url(Source, "add"), source_form(doi="10.1038/S41592-024-02523-Z"))
    assert response.status_code == 200
    assert f"source &#x27;{PAPER_ID}&#x27; already has this DOI" in response.content.decode()
    assert not Source.objects.filter(stable_id="new-source").exists()


def test_it_refuses_a_near_identical_title_naming_the_source(desk, seeded):
    title = "Nucleotide Transformer: building and evaluating robust foundation models for human genomics."
    response = desk.post(url(Source, "add"), source_form(title=title))
    assert response.status_code == 200
    body = response.content.decode()
    assert f"source &#x27;{PAPER_ID}&#x27; has a near-identical title" in body
    assert f"put this source in work &#x27;{PAPER_ID}&#x27;" in body


def test_it_accepts_a_second_arxiv_version_in_the_same_work(desk, seeded):
    work = WorkFactory(stable_id="hyenadna", title="HyenaDNA")
    SourceFactory(stable_id="hyenadna-v1", title="HyenaDNA", arxiv_id="2306.15794", arxiv_version="v1", work=work)
    refused = desk.post(url(Source, "add"), source_form(title="HyenaDNA", arxiv_id="2306.15794", arxiv_version="v2"))
    assert refused.status_code == 200 and "another version of this arXiv id" in refused.content.decode()
    accepted = desk.post(
        url(Source, "add"),
        source_form(title="HyenaDNA", arxiv_id="2306.15794", arxiv_version="v2", work=str(work.pk)),
    )
    assert accepted.status_code == 302, accepted.content.decode()[:3000]
    assert set(work.versions.values_list("arxiv_version", flat=True)) == {"v1", "v2"}


# -- models


def test_a_models_page_shows_its_aliases_and_links_its_configurations(desk, two_models):
    _, duplicate = two_models
    body = desk.get(url(GenomicModel, "change", duplicate.pk)).content.decode()
    assert 'value="HyenaDNA-1KB"' in body
    for configuration in duplicate.configurations.all():
        assert url(Configuration, "change", configuration.pk) in body
    assert url(GenomicModel, "split", duplicate.pk) in body and url(GenomicModel, "merge", duplicate.pk) in body


def test_it_finds_a_model_by_an_alias(desk, two_models):
    body = desk.get(url(GenomicModel, "changelist"), {"q": "HyenaDNA-1KB"}).content.decode()
    assert "1 model" in body and "hyenadna-1k" in body


def test_a_configuration_is_given_its_model_through_an_autocomplete(desk, two_models, admin_user):
    kept, _ = two_models
    configuration = ConfigurationFactory(stable_id="loose")
    page = desk.get(url(Configuration, "change", configuration.pk)).content.decode()
    assert re.search(r'<select name="model"[^>]*class="admin-autocomplete"', page)
    response = desk.post(
        url(Configuration, "change", configuration.pk),
        {"name": configuration.name, "family": configuration.family, "model": str(kept.pk)},
    )
    assert response.status_code == 302
    configuration.refresh_from_db()
    assert configuration.model == kept and configuration.history.first().history_change_reason == "edited: model"


def merge_post(client, models, **form):
    data = {"action": "merge_selected", ACTION_CHECKBOX_NAME: [str(x.pk) for x in models], **form}
    return client.post(url(GenomicModel, "changelist"), data)


def test_a_curator_merges_models_through_the_list_action_with_a_reason(desk, two_models, curator):
    kept, duplicate = two_models
    page = merge_post(desk, [duplicate], index="0")
    assert page.status_code == 200 and 'id="model-merge-form"' in page.content.decode()
    response = merge_post(desk, [duplicate], apply="1", into=str(kept.pk), reason="Same checkpoint.\r\nSee its card.")
    assert response.status_code == 302 and response["Location"] == url(GenomicModel, "change", kept.pk)
    assert set(where().values()) == {"hyenadna-tiny"}
    change = ModelChange.objects.get()
    assert (change.kind, change.from_model, change.to_model, change.actor) == ("merge", duplicate, kept, curator)
    assert change.reason == "Same checkpoint.\nSee its card."  # the textarea's CRLF, stored as LF
    duplicate.refresh_from_db()
    assert duplicate.merged_into == kept
    assert duplicate.history.first().history_change_reason.endswith(": Same checkpoint.\nSee its card.")


def test_a_merge_from_the_models_page_needs_a_reason(desk, two_models):
    kept, duplicate = two_models
    assert desk.get(url(GenomicModel, "merge", duplicate.pk)).status_code == 200
    response = desk.post(url(GenomicModel, "merge", duplicate.pk), {"apply": "1", "into": str(kept.pk), "reason": " "})
    assert response.status_code == 200 and 'id="id_reason_errors"' in response.content.decode()
    assert not ModelChange.objects.exists()


def test_a_refused_merge_is_a_form_error_and_merges_none_of_the_selected(desk, two_models):
    kept, duplicate = two_models
    third, fourth = GenomicModelFactory(stable_id="third"), GenomicModelFactory(stable_id="fourth")
    desk.post(url(GenomicModel, "merge", fourth.pk), {"apply": "1", "into": str(third.pk), "reason": "same"})
    before = where()
    # `third` has `fourth` merged into it: merging it is refused, so `duplicate` is not merged either.
    response = merge_post(desk, [duplicate, third], apply="1", into=str(kept.pk), reason="same")
    assert response.status_code == 200
    assert "&#x27;fourth&#x27; are merged into &#x27;third&#x27;" in response.content.decode()
    assert where() == before and ModelChange.objects.count() == 1


def test_a_merged_model_is_not_offered_as_a_target(desk, two_models):
    kept, duplicate = two_models
    third = GenomicModelFactory(stable_id="third")
    desk.post(url(GenomicModel, "merge", duplicate.pk), {"apply": "1", "into": str(kept.pk), "reason": "same"})
    response = desk.post(url(GenomicModel, "merge", third.pk), {"apply": "1", "into": str(duplicate.pk), "reason": "x"})
    assert response.status_code == 200 and 'id="id_into_errors"' in response.content.decode()
    third.refresh_from_db()
    assert third.merged_into is None


def test_a_curator_splits_configurations_off_into_a_new_model(desk, two_models):
    _, duplicate = two_models
    moved = Configuration.objects.get(stable_id="duplicate-config-2")
    page = desk.get(url(GenomicModel, "split", duplicate.pk)).content.decode()
    assert "duplicate-config-1" in page and "duplicate-config-2" in page and "duplicate-alias" in page
    response = desk.post(
        url(GenomicModel, "split", duplicate.pk),
        {
            "configurations": [str(moved.pk)],
            "stable_id": "hyenadna-32k",
            "name": "HyenaDNA 32k",
            "reason": "Run 2 used the 32k checkpoint.\r\n",
        },
    )
    new = GenomicModel.objects.get(stable_id="hyenadna-32k")
    assert response.status_code == 302 and response["Location"] == url(GenomicModel, "change", new.pk)
    assert where()["duplicate-config-2"] == "hyenadna-32k" and where()["duplicate-config-1"] == "hyenadna-1k"
    assert new.family == duplicate.family
    assert ModelChange.objects.get().reason == "Run 2 used the 32k checkpoint."


@pytest.mark.parametrize(
    ("form", "error"),
    [
        ({"stable_id": "hyenadna-tiny"}, "id_stable_id_errors"),
        ({"configurations": []}, "id_configurations_errors"),
        ({"reason": ""}, "id_reason_errors"),
    ],
)
def test_a_refused_split_is_a_form_error_on_its_field(desk, two_models, form, error):
    _, duplicate = two_models
    data = {
        "configurations": [str(duplicate.configurations.first().pk)],
        "stable_id": "new-model",
        "name": "New",
        "reason": "why",
        **form,
    }
    response = desk.post(url(GenomicModel, "split", duplicate.pk), data)
    assert response.status_code == 200 and f'id="{error}"' in response.content.decode()
    assert GenomicModel.objects.count() == 2


# -- model changes: read only, undone with a reason


def test_model_changes_are_read_only(desk, two_models):
    kept, duplicate = two_models
    desk.post(url(GenomicModel, "merge", duplicate.pk), {"apply": "1", "into": str(kept.pk), "reason": "same"})
    change = ModelChange.objects.get()
    assert desk.post(url(ModelChange, "add"), {"kind": "merge", "reason": "x"}).status_code == 403
    assert desk.post(url(ModelChange, "change", change.pk), {"reason": "rewritten"}).status_code == 403
    assert desk.post(url(ModelChange, "delete", change.pk), {"post": "yes"}).status_code == 403
    change.refresh_from_db()
    assert change.reason == "same"


def test_a_curator_undoes_a_merge_with_a_reason_and_cannot_undo_it_twice(desk, two_models):
    kept, duplicate = two_models
    before = where()
    desk.post(url(GenomicModel, "merge", duplicate.pk), {"apply": "1", "into": str(kept.pk), "reason": "same"})
    merge = ModelChange.objects.get()
    assert url(ModelChange, "undo", merge.pk) in desk.get(url(ModelChange, "change", merge.pk)).content.decode()
    model_page = desk.get(url(GenomicModel, "change", kept.pk)).content.decode()
    assert f"#{merge.pk} merge: hyenadna-1k → hyenadna-tiny</a>: same" in model_page

    chosen = desk.post(
        url(ModelChange, "changelist"),
        {"action": "undo_selected", "index": "0", ACTION_CHECKBOX_NAME: [str(merge.pk)]},
    )
    assert chosen.status_code == 302 and chosen["Location"] == url(ModelChange, "undo", merge.pk)
    response = desk.post(url(ModelChange, "undo", merge.pk), {"reason": "Different\r\ncontext lengths."})
    assert response.status_code == 302
    assert where() == before
    undo = ModelChange.objects.get(kind="undo")
    assert undo.undoes == merge and undo.reason == "Different\ncontext lengths."

    again = desk.post(url(ModelChange, "undo", merge.pk), {"reason": "again"})
    assert again.status_code == 200 and "already undone" in again.content.decode()
    assert ModelChange.objects.count() == 2


# -- who may merge, split and undo


@pytest.mark.parametrize("role", ["release_manager", "staff"])
def test_someone_who_may_not_curate_models_gets_403_and_no_action(client, make_user, two_models, role):
    kept, duplicate = two_models
    client.force_login(make_user(role))
    before = where()
    assert client.get(url(GenomicModel, "merge", duplicate.pk)).status_code == 403
    assert (
        client.post(
            url(GenomicModel, "merge", duplicate.pk), {"apply": "1", "into": str(kept.pk), "reason": "x"}
        ).status_code
        == 403
    )
    assert (
        client.post(
            url(GenomicModel, "split", duplicate.pk), {"stable_id": "x", "name": "x", "reason": "x"}
        ).status_code
        == 403
    )
    listing = client.get(url(GenomicModel, "changelist"))
    if listing.status_code == 200:  # a release manager reads models
        assert "merge_selected" not in listing.content.decode()
        merge_post(client, [duplicate], apply="1", into=str(kept.pk), reason="x")
    else:
        assert listing.status_code == 403
    assert client.get(url(ModelChange, "changelist")).status_code == 403
    assert where() == before and not ModelChange.objects.exists()


def test_an_anonymous_visitor_is_sent_to_the_login_page_and_nothing_moves(client, two_models):
    kept, duplicate = two_models
    before = where()
    response = client.post(
        url(GenomicModel, "merge", duplicate.pk), {"apply": "1", "into": str(kept.pk), "reason": "x"}
    )
    assert response.status_code == 302 and response["Location"].startswith(reverse("admin:login"))
    assert where() == before and not ModelChange.objects.exists()


def test_a_curator_without_the_model_permissions_cannot_undo(client, desk, make_user, two_models):
    kept, duplicate = two_models
    desk.post(url(GenomicModel, "merge", duplicate.pk), {"apply": "1", "into": str(kept.pk), "reason": "same"})
    merge = ModelChange.objects.get()
    client.force_login(make_user("release_manager"))
    assert client.post(url(ModelChange, "undo", merge.pk), {"reason": "x"}).status_code == 403
    assert not ModelChange.objects.filter(kind="undo").exists()


# -- task equivalences


def test_a_curator_records_two_tasks_as_the_same_data_with_autocompletes(desk, seeded):
    task, same_as = DatasetFactory(stable_id="gb-human-enhancers"), DatasetFactory(stable_id="nt-enhancers")
    source = Source.objects.get(stable_id=PAPER_ID)
    page = desk.get(url(TaskEquivalence, "add")).content.decode()
    for field in ("task", "same_as", "source"):
        assert re.search(rf'<select name="{field}"[^>]*class="admin-autocomplete"', page), field
    response = desk.post(
        url(TaskEquivalence, "add"),
        {
            "stable_id": "enhancers-same-data",
            "task": str(task.pk),
            "same_as": str(same_as.pk),
            "basis": "stated",
            "source": str(source.pk),
            "locator": "Table 1",
            "quote": "The enhancer task is taken from\r\nGenomic Benchmarks.",
        },
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    equivalence = TaskEquivalence.objects.get()
    assert equivalence.quote == "The enhancer task is taken from\nGenomic Benchmarks."
    assert equivalence.history.first().history_change_reason == "created"
    itself = desk.post(
        url(TaskEquivalence, "add"),
        {
            "stable_id": "x",
            "task": str(task.pk),
            "same_as": str(task.pk),
            "basis": "stated",
            "source": str(source.pk),
            "locator": "l",
            "quote": "q",
        },
    )
    assert itself.status_code == 200 and "not as itself" in itself.content.decode()
