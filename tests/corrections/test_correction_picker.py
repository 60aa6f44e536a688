"""The correction form reaches every value of a record: a search on its own page finds values by
task, configuration or unit (a few KB whatever the record holds, never every value listed), each
named by task, configuration, value and unit, and each value on a page links to the form with that
value chosen."""

from __future__ import annotations

import re
import time
from decimal import Decimal
from unittest import mock

import pytest
from django.core.cache import cache
from django.urls import reverse

from corrections.forms import timing_stamp
from corrections.models import Correction
from pages.parts import VALUES_ON_RECORD_PAGES
from pages.templatetags.record_tags import correction_url
from tests.factories import ConfigurationFactory, DatasetFactory, EvaluationFactory, ProtocolFactory, ResultFactory

pytestmark = pytest.mark.django_db

TASKS = 9
CONFIGURATIONS = 30  # 270 values, as many as the GUE page holds


@pytest.fixture
def suite():
    """A protocol of 270 values: 9 tasks x 30 configurations."""
    cache.clear()  # the factories write around the services: no catalogue version bump
    protocol = ProtocolFactory(stable_id="suite", metric_unit="MCC x 100")
    tasks = [DatasetFactory(stable_id=f"task-{t}", name=f"Task {t:02d}") for t in range(TASKS)]
    configurations = [ConfigurationFactory(name=f"Config {c:02d}") for c in range(CONFIGURATIONS)]
    results = []
    for t, task in enumerate(tasks):
        for c, configuration in enumerate(configurations):
            evaluation = EvaluationFactory(protocol=protocol, dataset=task, configuration=configuration)
            value = Decimal(f"{t}{c:02d}.5")
            results.append(
                ResultFactory(evaluation=evaluation, value=value, printed_value=str(value), unit="MCC x 100")
            )
    return protocol, results


def options(html: str) -> list[tuple[str, str, bool]]:
    """The target select's options: (value, label, selected)."""
    select = re.search(r'<select name="target"[^>]*>(.*?)</select>', html, re.S)
    assert select, "no target select"
    return [
        (value, label.replace("&amp;", "&"), bool(selected))
        for value, selected, label in re.findall(r'<option value="([^"]*)"( selected)?>([^<]*)</option>', select[1])
    ]


def test_the_protocol_form_lists_no_value_until_a_search_finds_them_named_by_task_configuration_value_and_unit(
    client, suite
):
    protocol, results = suite
    url = reverse("corrections:correction-new")
    response = client.get(url, {"record": f"protocol:{protocol.stable_id}"})
    assert response.status_code == 200
    html = response.content.decode()
    assert not [value for value, _, _ in options(html) if value.startswith("result:")]
    assert len(response.content) < 20_000 and 'id="find"' in html  # a few KB, and the search box
    found = client.get(url, {"record": f"protocol:{protocol.stable_id}", "find": "task 08 config 2"})
    values = [(value, label) for value, label, _ in options(found.content.decode()) if value.startswith("result:")]
    expected = {  # every word in the task's, the configuration's or the unit's name
        f"result:{r.stable_id}:value"
        for r in results
        if all(
            word in f"{r.evaluation.dataset.name} {r.evaluation.configuration.name} {r.unit}".lower()
            for word in ("task", "08", "config", "2")
        )
    }
    assert {value for value, _ in values} == expected and len(expected) == 13
    assert (f"result:{results[-1].stable_id}:value", "value of Config 29 on Task 08 (829.5 MCC x 100)") in values
    assert "13 values match" in found.content.decode()
    many = client.get(url, {"record": f"protocol:{protocol.stable_id}", "find": "config"})
    assert len([v for v, _, _ in options(many.content.decode()) if v.startswith("result:")]) == 50
    assert "270 values match “config”: the first 50" in many.content.decode() and len(many.content) < 30_000
    assert (
        "No value matches"
        in client.get(url, {"record": f"protocol:{protocol.stable_id}", "find": "zzz"}).content.decode()
    )


def test_a_values_link_opens_the_form_with_that_value_chosen(client, suite):
    protocol, results = suite
    chosen = results[250]
    href = correction_url(chosen)
    assert href == f"{reverse('corrections:correction-new')}?value={chosen.stable_id}"
    response = client.get(href)
    assert response.status_code == 200
    html = response.content.decode()
    selected = [(value, label) for value, label, is_selected in options(html) if is_selected]
    assert selected == [(f"result:{chosen.stable_id}:value", "value of Config 10 on Task 08 (810.5 MCC x 100)")]
    assert f'name="record" value="protocol:{protocol.stable_id}"' in html
    assert 'id="suggest"' in html  # the record page's link to all values lands there
    assert "correction-picker.js" in html  # the filter box, when scripts run


def test_every_value_on_the_protocol_and_evaluation_pages_links_to_its_correction(client, suite):
    protocol, results = suite
    page = client.get(protocol.get_absolute_url()).content.decode()
    linked = set(re.findall(r'href="/corrections/new/\?value=([^"]+)"', page))
    assert linked == {r.stable_id for r in results}  # the matrix's one page: 30 configurations x 9 tasks
    evaluation = results[3].evaluation
    page = client.get(evaluation.get_absolute_url()).content.decode()
    assert f'href="/corrections/new/?value={results[3].stable_id}"' in page


def test_a_record_pages_form_offers_few_values_itself_and_links_to_the_form_that_offers_many(client, suite):
    protocol, results = suite
    page = client.get(protocol.get_absolute_url()).content.decode()
    form = page[page.index('<section class="correction"') :]
    assert not [value for value, _, _ in options(form) if value.startswith("result:")]
    assert f'href="/corrections/new/?record=protocol%3A{protocol.stable_id}#suggest"' in form
    assert "all 270 on the form's own page" in form
    evaluation = results[3].evaluation
    assert evaluation.results.count() <= VALUES_ON_RECORD_PAGES
    form = client.get(evaluation.get_absolute_url()).content.decode()
    assert (f"result:{results[3].stable_id}:value") in [value for value, _, _ in options(form)]


def test_a_suggestion_on_a_value_beyond_the_old_cap_is_stored(client, suite):
    protocol, results = suite
    chosen = results[-1]
    with mock.patch("time.time", return_value=time.time() - 10):
        started = timing_stamp()
    response = client.post(
        reverse("corrections:correction-new"),
        {
            "record": f"protocol:{protocol.stable_id}",
            "target": f"result:{chosen.stable_id}:value",
            "proposed_value": "82.95",
            "explanation": "Table 4 prints 82.95.",
            "website": "",
            "started": started,
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    correction = Correction.objects.get()
    assert (correction.target, correction.field_name, correction.proposed_value) == (chosen, "value", "82.95")


def test_a_link_to_a_value_no_longer_on_the_record_says_so_and_offers_the_list(client, suite):
    protocol, results = suite
    response = client.get(
        reverse("corrections:correction-new"),
        {"record": f"protocol:{protocol.stable_id}", "target": "result:not-a-result:value"},
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert "not on this record any more" in html
    assert options(html) and not any(selected for _, _, selected in options(html))


@pytest.mark.parametrize("target", ["result:not-a-result:value", "nothing", "planet:x:value"])
def test_a_link_to_an_unknown_record_is_404(client, suite, target):
    assert client.get(reverse("corrections:correction-new"), {"target": target}).status_code == 404


def test_a_link_to_an_unknown_value_is_404(client, suite):
    assert client.get(reverse("corrections:correction-new"), {"value": "not-a-result"}).status_code == 404
