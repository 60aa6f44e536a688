"""A curator merges two models in a real browser through the models list's action, with a reason
typed in the textarea, then undoes the merge from the list of model changes: every configuration
and alias is back with its model, and both changes keep their reasons (LF line endings)."""

from __future__ import annotations

import pytest

from records.models import Configuration, GenomicModel, ModelAlias, ModelChange
from tests.browser.conftest import admin_login, axe_violations
from tests.factories import ConfigurationFactory, GenomicModelFactory, ModelAliasFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def where() -> dict[str, str | None]:
    return {
        **dict(Configuration.objects.values_list("stable_id", "model__stable_id")),
        **dict(ModelAlias.objects.values_list("stable_id", "model__stable_id")),
    }


def test_a_curator_merges_two_models_with_a_reason_and_undoes_it(browser, live_server, curator):
    kept = GenomicModelFactory(stable_id="hyenadna-tiny", name="HyenaDNA tiny")
    duplicate = GenomicModelFactory(stable_id="hyenadna-1k", name="HyenaDNA 1k")
    ConfigurationFactory(stable_id="tiny-finetuned", model=kept)
    ConfigurationFactory(stable_id="one-k-finetuned", model=duplicate)
    ModelAliasFactory(stable_id="alias-hyenadna-1kb", model=duplicate, alias="HyenaDNA-1KB")
    before = where()

    context = browser.new_context(base_url=live_server.url, bypass_csp=True)  # axe-core is an inline script
    page = context.new_page()
    page.set_default_timeout(15_000)
    admin_login(page, curator.username)

    page.goto("/admin/records/genomicmodel/")
    page.locator("tr", has_text="HyenaDNA 1k").locator("input.action-select").check()
    page.select_option("select[name=action]", "merge_selected")
    page.get_by_role("button", name="Go").first.click()
    page.wait_for_selector("#model-merge-form")
    assert "HyenaDNA 1k (hyenadna-1k): 1 configurations, 1 aliases" in page.inner_text("#merged-models")
    assert axe_violations(page) == []
    page.get_by_label("Merge into").select_option(label="HyenaDNA tiny (hyenadna-tiny)")
    page.get_by_label("Reason").fill("The same checkpoint.\nIts model card says so.")
    page.get_by_role("button", name="Merge").click()
    page.wait_for_selector("text=Merged hyenadna-1k into hyenadna-tiny.")

    assert set(where().values()) == {"hyenadna-tiny"}
    merge = ModelChange.objects.get()
    assert merge.reason == "The same checkpoint.\nIts model card says so."  # sent as CRLF by the browser
    assert GenomicModel.objects.get(pk=duplicate.pk).merged_into == kept

    page.goto("/admin/records/modelchange/")
    page.locator("tr", has_text="HyenaDNA 1k").locator("input.action-select").check()
    page.select_option("select[name=action]", "undo_selected")
    page.get_by_role("button", name="Go").first.click()
    page.wait_for_selector("#model-undo-form")
    assert "configuration one-k-finetuned" in page.inner_text("#undo-moves")
    assert axe_violations(page) == []
    page.get_by_label("Reason").fill("Different context lengths:\nnot one checkpoint.")
    page.get_by_role("button", name="Undo").click()
    page.wait_for_selector(f"text=Undid change #{merge.pk}")

    assert where() == before
    assert GenomicModel.objects.get(pk=duplicate.pk).merged_into is None
    undo = ModelChange.objects.get(kind="undo")
    assert undo.undoes == merge and undo.reason == "Different context lengths:\nnot one checkpoint."
    assert "Undo…" not in page.content()  # an undo is not undone
    context.close()


def test_a_curator_typing_a_model_alias_with_a_cyrillic_letter_is_told_on_its_field(browser, live_server, curator):
    model = GenomicModelFactory(stable_id="hyenadna-1k", name="HyenaDNA 1k")
    page = browser.new_page(base_url=live_server.url)
    admin_login(page, curator.username)
    page.set_default_timeout(15_000)
    page.goto(f"/admin/records/genomicmodel/{model.pk}/change/")
    page.get_by_text("Add another Alias").click()
    page.fill("#id_aliases-0-stable_id", "alias-hyenadna-1kb")
    page.fill("#id_aliases-0-alias", "HyenaDNA-1КB")  # a Cyrillic К, as a PDF's text layer may give it
    page.locator("input[name=_continue]").first.click()
    page.wait_for_selector(".errorlist")
    errors = page.locator(".errorlist").all_inner_texts()
    assert any("Cyrillic and Latin" in text and "CYRILLIC CAPITAL LETTER KA" in text for text in errors), errors
    assert not ModelAlias.objects.exists()
    page.fill("#id_aliases-0-alias", "HyenaDNA-1KB")
    page.select_option("#id_aliases-0-basis", "inferred")  # no source at hand: the curator says why
    page.fill("#id_aliases-0-reason", "The figure's bar label, read as this checkpoint.")
    page.locator("input[name=_continue]").first.click()
    page.wait_for_selector(".messagelist")
    assert ModelAlias.objects.get().alias == "HyenaDNA-1KB"
    page.close()
