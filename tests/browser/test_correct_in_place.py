"""On the demo content, a researcher corrects a GUE value where they read it: the matrix
cell's link opens the correction form with that value chosen, the filter box narrows the 270 values
as they type, and the suggestion is sent for that value."""

from __future__ import annotations

import pytest

from corrections.forms import MIN_SECONDS
from corrections.models import Correction
from records.models import Result

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GUE = "/protocols/gue-mcc-x100-zhou-2024/"
MATRIX_LINKS = "table.matrix a.correct-link"


def test_a_gue_matrix_cells_link_opens_the_form_with_its_value_chosen_and_the_filter_finds_it(page, demo_content):
    page.goto(GUE)
    links = page.locator(MATRIX_LINKS)
    hrefs = links.evaluate_all("links => links.map(link => link.getAttribute('href'))")
    gue_results = Result.objects.filter(evaluation__protocol__stable_id="gue-mcc-x100-zhou-2024")
    assert len(hrefs) == len(set(hrefs)) == gue_results.count() == 270  # every value has its link
    targets = {f"result:{href.split('value=', 1)[1]}:value" for href in hrefs}
    assert targets == {f"result:{stable_id}:value" for stable_id in gue_results.values_list("stable_id", flat=True)}

    last = links.nth(269)  # a cell far down the matrix, beyond where the form's list used to stop
    last.scroll_into_view_if_needed()
    target = f"result:{hrefs[269].split('value=', 1)[1]}:value"
    last.click()
    page.wait_for_selector("h1:text('Suggest a correction')")

    # The linked value is chosen, named by task, configuration, value and unit; the page lists no other value.
    values = page.locator("#id_target option").evaluate_all("options => options.map(o => o.value)")
    assert [v for v in values if v.startswith("result:")] == [target]
    assert page.locator("#id_target").input_value() == target
    result = gue_results.select_related("evaluation__dataset", "evaluation__configuration").get(
        stable_id=target.split(":")[1]
    )
    chosen = page.locator("#id_target option:checked").inner_text()
    assert result.evaluation.dataset.name in chosen  # named by its task
    configuration = result.evaluation.configuration.short_name or result.evaluation.configuration.name
    assert configuration in chosen
    assert "MCC x 100" in chosen

    # Another value is found by the search: the task's values, in a page of a few KB.
    task = result.evaluation.dataset.name
    page.get_by_label("Find a value to correct (task, model or unit)").fill(task)
    page.get_by_role("button", name="Find", exact=True).click()
    page.wait_for_selector("#find-value [role=status]")
    found = page.locator("#id_target option").evaluate_all("options => options.map(o => o.value)")
    matching = {
        f"result:{r}:value"
        for r in gue_results.filter(evaluation__dataset__name__icontains=task).values_list("stable_id", flat=True)
    }
    assert matching and matching <= {v for v in found if v.startswith("result:")}
    page.select_option("#id_target", target)

    page.fill("#id_proposed_value", "61.5")
    page.fill("#id_explanation", "Table 4 prints 61.5 for this model on this task.")
    page.wait_for_timeout((MIN_SECONDS + 0.5) * 1000)  # a person takes a few seconds; the form checks it
    page.get_by_role("button", name="Send suggestion").click()
    page.wait_for_selector("h1:text('Thank you')")
    correction = Correction.objects.get()
    assert (correction.target, correction.field_name, correction.proposed_value) == (result, "value", "61.5")


def test_without_scripts_the_linked_form_chooses_the_value_and_its_search_finds_others(
    browser, live_server, demo_content
):
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False)
    page = context.new_page()
    page.goto(GUE)
    href = page.locator(MATRIX_LINKS).nth(230).get_attribute("href")
    response = page.goto(href)
    assert page.locator("#id_target").input_value() == f"result:{href.split('value=', 1)[1]}:value"
    assert len(response.body()) < 30_000  # not every value of the protocol
    assert page.get_by_label("Filter the list").count() == 0  # no dead box without its script
    page.get_by_label("Find a value to correct (task, model or unit)").fill("DNABERT-2")
    page.get_by_role("button", name="Find", exact=True).click()
    assert "values match “DNABERT-2”" in page.inner_text("#find-value")
    assert page.locator("#id_target option").count() > 10
    context.close()
