"""The public site: coverage, comparison chart, filters, search, downloads, sitemap."""

from __future__ import annotations

import csv
import html
import io
import re
from decimal import Decimal

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from records.models import Area, BaselineRole, BaselineStatus, Protocol
from records.seed import PROTOCOL_ID
from tests.factories import ConfigurationFactory, ProtocolFactory, ResultFactory, SourceFactory
from tests.helpers import apply_transitions
from tests.pages.test_pages import page_text

pytestmark = pytest.mark.django_db


@pytest.fixture
def catalogue():
    """Two protocols, three configurations, results in every state and known gaps."""
    area = Area.objects.create(stable_id="dna-genomes", label="DNA and genomes")
    other_area = Area.objects.create(stable_id="proteins", label="Proteins")
    source = SourceFactory()
    runtime = ProtocolFactory(stable_id="runtime", title="Run time", source=source, metric_unit="minute")
    accuracy = ProtocolFactory(
        stable_id="accuracy", title="Accuracy", source=source, metric_unit="MCC", metric_direction="higher"
    )
    runtime.areas.add(area)
    accuracy.areas.add(other_area)
    small, large, control = (
        ConfigurationFactory(stable_id=s, name=n)
        for s, n in [("small", "Small model"), ("large", "Large model"), ("control", "Shuffled-label control")]
    )
    checked = ResultFactory(evaluation__protocol=runtime, evaluation__configuration=small, value=Decimal("30"))
    excluded = ResultFactory(evaluation__protocol=runtime, evaluation__configuration=large, value=Decimal("10"))
    measured = ResultFactory(
        evaluation__protocol=runtime,
        evaluation__configuration=control,
        evaluation__measured_by="portal",
        evaluation__reading_method="job_report",
        evaluation__source=None,
        value=Decimal("45"),
    )
    proposed = ResultFactory(evaluation__protocol=accuracy, evaluation__configuration=small, value=Decimal("0.61"))
    apply_transitions(checked.evaluation, "check_source")
    apply_transitions(excluded.evaluation, "check_source", "exclude", reason="Measured on the test split.")
    apply_transitions(measured.evaluation, "check_source")
    BaselineRole.objects.create(
        stable_id="runtime-null", protocol=runtime, kind="null_control", selection_rule="r", configuration=control
    )
    BaselineRole.objects.create(
        stable_id="runtime-ref", protocol=runtime, kind="conventional_reference", selection_rule="r"
    )
    return {
        "runtime": runtime,
        "accuracy": accuracy,
        "checked": checked,
        "excluded": excluded,
        "measured": measured,
        "proposed": proposed,
    }


def test_the_coverage_matrix_shows_each_cell_state_and_each_protocols_gaps(client, catalogue):
    text = page_text(client.get("/coverage/"))
    assert "Protocols 1–2 of 2 with results" in text and "Models and configurations 1–3 of the 3" in text
    rows = {
        row.split("</th>")[0]: row
        for row in client.get("/coverage/").content.decode().split('<tr><th scope="row">')[1:]
    }
    runtime_row = next(row for key, row in rows.items() if "Run time" in key)
    assert "✓ 1 checked" in runtime_row and "✕ 1 excluded" in runtime_row and "✓ 1 checked (here)" in runtime_row
    assert "conventional reference not measured; no reviewed recipe" in runtime_row
    assert "null control not measured" not in runtime_row  # the control's evaluation is source checked
    accuracy_row = next(row for key, row in rows.items() if "Accuracy" in key)
    assert "? 1 proposed" in accuracy_row and "no source-checked result" in accuracy_row


def test_the_coverage_matrix_filters_by_area_and_downloads_as_csv(client, catalogue):
    assert "Protocols 1–1 of 1 with results" in page_text(client.get("/coverage/", {"area": "dna-genomes"}))
    assert "Accuracy" not in page_text(client.get("/coverage/", {"area": "dna-genomes"}))
    response = client.get("/coverage.csv", {"area": "dna-genomes"})
    rows = list(csv.DictReader(io.StringIO(response.getvalue().decode())))
    assert {row["protocol_id"] for row in rows} == {"runtime"} and len(rows) == 3
    by_config = {row["configuration_id"]: row for row in rows}
    assert by_config["small"]["result_state"] == "source_checked" and by_config["large"]["result_state"] == "excluded"
    assert by_config["control"]["measured_here"] == "true" and by_config["small"]["null_control_measured"] == "true"


def test_a_retired_baseline_role_is_not_counted_as_measured(client, catalogue):
    role = BaselineRole.objects.get(stable_id="runtime-null")
    role.status = BaselineStatus.RETIRED  # its configuration's evaluation stays source checked
    role.save()
    runtime_row = next(
        row
        for row in client.get("/coverage/").content.decode().split('<tr><th scope="row">')
        if "Run time" in row.split("</th>")[0]
    )
    assert "null control not measured; conventional reference not measured" in runtime_row
    rows = list(csv.DictReader(io.StringIO(client.get("/coverage.csv", {"area": "dna-genomes"}).getvalue().decode())))
    assert {row["null_control_measured"] for row in rows} == {"false"}


def values(svg: str) -> list[str]:
    return re.findall(r'<text class="value"[^>]*>([^<]+)</text>', svg)


def test_the_chart_draws_comparable_values_and_keeps_excluded_rows_out_of_best(client, catalogue):
    svg = client.get("/protocols/runtime/comparison.svg").content.decode()
    assert svg.startswith("<?xml") and 'role="img"' in svg and "<desc" in svg
    compared, _, apart = svg.partition("Excluded from comparison (shown apart")
    assert values(compared) == ["30 best", "45"] and values(apart) == ["10"]
    assert "Measured on the test split." in apart
    assert compared.count("<circle") >= 1 and '<path d="M' in compared  # author-reported circle, measured-here diamond
    included = client.get("/protocols/runtime/comparison.svg", {"include": "excluded"}).content.decode()
    assert values(included) == ["10 best", "30", "45"] and "Excluded from comparison (shown apart" not in included


def test_the_chart_downloads_as_png(client, catalogue):
    response = client.get("/protocols/runtime/comparison.png")
    assert response["Content-Type"] == "image/png" and response.content.startswith(b"\x89PNG\r\n\x1a\n")


def test_the_protocol_page_embeds_the_chart_with_a_text_alternative(client, catalogue):
    body = client.get("/protocols/runtime/").content.decode()
    [(source, alternative)] = re.findall(r'<img src="([^"]+)" alt="([^"]+)" width="340" loading="lazy">', body)
    assert "the best is Small model (30)" in alternative
    svg = client.get(html.unescape(source)).content.decode()
    assert '<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img"' in svg
    assert "Small model: 30 minute, measured by the model&#x27;s authors, best" in svg


def evaluation_rows(response) -> list[str]:
    table = response.content.decode().split('<table class="evaluations">')[1].split("</table>")[0]
    return re.findall(r'<tr id="evaluation-([^"]+)">', table)


@pytest.mark.parametrize(
    "params, expected",
    [
        ({}, {"checked", "excluded", "measured"}),
        ({"configuration": "small"}, {"checked"}),
        ({"measured_by": "portal"}, {"measured"}),
        ({"review_state": "source_checked"}, {"checked", "measured"}),
        ({"review_state": "source_checked", "measured_by": "authors"}, {"checked"}),
        ({"review_state": "excluded", "configuration": "large"}, {"excluded"}),
        ({"configuration": "small", "measured_by": "portal"}, set()),
    ],
)
def test_every_filter_narrows_the_evaluations_and_they_combine(client, catalogue, params, expected):
    response = client.get("/protocols/runtime/", params)
    assert set(evaluation_rows(response)) == {catalogue[key].evaluation.stable_id for key in expected}
    text = page_text(response)
    assert f"{len(expected)} of 3 evaluations match." in text
    if params:
        assert "Clear filters" in text and "Applied filters:" in text
    else:
        assert "Applied filters" not in text and "Clear filters" not in text


def test_filter_links_carry_the_current_filters_and_counts(client, catalogue):
    body = client.get("/protocols/runtime/", {"measured_by": "authors"}).content.decode()
    assert 'href="?measured_by=authors&amp;configuration=small#all-rows"' in body
    assert "Small model (1)" in body and "Measured by" in body


@pytest.mark.parametrize("query", ["IA3", PROTOCOL_ID, "Nucleotide Transformer"])
def test_search_finds_the_seed_protocol(client, seeded, query):
    response = client.get("/search/", {"q": query})
    hits = re.findall(r'<a href="/(\w+)/([^/]+)/">', response.content.decode().split('class="search-results"')[1])
    assert ("protocols", PROTOCOL_ID) in hits


def test_search_ranks_and_offers_type_facets(client, seeded):
    body = client.get("/search/", {"q": "Nucleotide Transformer"}).content.decode()
    assert "Protocols (1)" in body and "Configurations (2)" in body
    only = client.get("/search/", {"q": "Nucleotide Transformer", "type": "configuration"}).content.decode()
    results = only.split('class="search-results"')[1]
    assert "/configurations/" in results and "/protocols/" not in results
    exact = (
        client.get("/search/", {"q": "nt-500m-ia3-dalla-torre-2025"})
        .content.decode()
        .split('class="search-results"')[1]
    )
    assert exact.index("/configurations/nt-500m-ia3-dalla-torre-2025/") < (
        exact.find("/evaluations/") if "/evaluations/" in exact else len(exact)
    )


def test_the_protocol_downloads_parse_and_match_the_page(client, seeded):
    page = page_text(client.get(f"/protocols/{PROTOCOL_ID}/"))
    rows = list(csv.DictReader(io.StringIO(client.get(f"/protocols/{PROTOCOL_ID}/results.csv").content.decode())))
    data = client.get(f"/protocols/{PROTOCOL_ID}/results.json").json()
    assert [r["value"] for r in rows] == [r["value"] for r in data["rows"]] == ["50", "20"]
    for row in rows:
        assert row["configuration_name"] in page and row["printed_value"] in page and row["source_locator"] in page
        assert (row["review_state"], row["comparable"]) == ("excluded", "false")
    assert data["columns"][:3] == ["result_id", "evaluation_id", "protocol_id"]


@pytest.mark.parametrize(
    ("url", "fewer"),
    [
        ("/coverage/", 0),
        (f"/protocols/{PROTOCOL_ID}/results.json", 0),
        ("/search/?q=Nucleotide", 0),
        # One fewer: past 20 values the protocol's correction form lists none (its own page does).
        (f"/protocols/{PROTOCOL_ID}/?configuration=x", 1),
    ],
)
def test_site_pages_run_constant_queries(client, seeded, url, fewer):
    def count() -> int:
        cache.clear()  # the factories write around the services, so no version bump: render afresh
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url).status_code == 200
        return len(queries)

    before = count()
    protocol = Protocol.objects.get(stable_id=PROTOCOL_ID)
    for _ in range(30):
        ResultFactory(
            evaluation__protocol=protocol,
            evaluation__dataset=protocol.datasets.get(),
            evaluation__title="Nucleotide model",
            evaluation__configuration__name="Nucleotide config",
        )
    assert count() == before - fewer


def test_the_sitemap_lists_every_record_page(client, seeded):
    body = client.get("/sitemap.xml").content.decode()
    assert f"/protocols/{PROTOCOL_ID}/" in body and "/datasets/nt-benchmark-revised-splice-sites-all/" in body
    assert "/coverage/" in body and "<lastmod>" in body
    assert "/search/" not in body


def test_the_sitemap_lists_each_public_record_kind_and_the_published_releases(client, seeded):
    from records.models import public_record_kinds
    from releases.models import Release
    from tests.factories import GenomicModelFactory, WorkFactory

    kinds = {model.__name__ for model in public_record_kinds()}
    assert kinds == {"Source", "Dataset", "Configuration", "Protocol", "Evaluation", "Decision", "Work", "GenomicModel"}
    records = (GenomicModelFactory(), WorkFactory())
    body = client.get("/sitemap.xml").content.decode()
    for record in records:
        assert f"{record.get_absolute_url()}</loc>" in body
    published = Release.objects.filter(published_at__isnull=False).exclude(release_id=None)
    assert published.exists()
    for release in published:
        assert f"/releases/{release.release_id}/</loc>" in body
    assert "/releases/</loc>" in body


def test_every_page_has_a_title_and_a_canonical_link(client, seeded):
    for url in [
        "/",
        "/coverage/",
        "/search/?q=IA3",
        f"/protocols/{PROTOCOL_ID}/",
        "/sources/dalla-torre-2025-nature-methods-nucleotide-transformer/",
    ]:
        body = client.get(url).content.decode()
        assert re.search(r"<title>[^<]+ · Rewire</title>", body), url
        assert '<link rel="canonical" href="http://testserver/' in body
