"""Comparison charts (SVG and PNG) cached under the catalogue version; uncached renders for readers
who are not staff limited per client address, and PNG rasterising bounded across processes."""

from __future__ import annotations

from collections import Counter

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from common import ratelimit
from pages import chart_output, page_cache
from records.models import Protocol
from records.seed import PROTOCOL_ID
from records.services import record_save

pytestmark = [pytest.mark.django_db, pytest.mark.backend_independent]

SVG = f"/protocols/{PROTOCOL_ID}/comparison.svg"
PNG = f"/protocols/{PROTOCOL_ID}/comparison.png"


@pytest.fixture
def renders(monkeypatch) -> Counter[str]:
    """How often the view calls the real renderers (counted on the way through, never replaced)."""
    counts: Counter[str] = Counter()
    for name in ("charts_svg", "chart_png"):
        original = getattr(chart_output, name)

        def counting(*args, _original=original, _name=name, **kwargs):
            counts[_name] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(chart_output, name, counting)
    return counts


@pytest.mark.parametrize(("path", "content_type"), [(SVG, "image/svg+xml"), (PNG, "image/png")])
def test_it_answers_a_second_request_for_a_chart_from_the_cache_with_only_the_version_read(
    client, seeded, renders, path, content_type
):
    first = client.get(path)
    assert first.status_code == 200 and first["Content-Type"].startswith(content_type)
    drawn = dict(renders)
    assert drawn["charts_svg"] == 1
    with CaptureQueriesContext(connection) as queries:
        second = client.get(path)
    assert second.status_code == 200 and second.content == first.content
    assert second["Content-Type"] == first["Content-Type"]
    assert second["Content-Disposition"] == f'attachment; filename="{PROTOCOL_ID}-comparison.{path[-3:]}"'
    assert dict(renders) == drawn  # nothing drawn again
    # The one statement is the catalogue version, which is the key: a cached chart is never stale.
    assert [query["sql"] for query in queries.captured_queries] == [
        query["sql"] for query in queries.captured_queries if "common_version" in query["sql"]
    ]
    assert len(queries.captured_queries) == 1


def test_it_draws_a_png_from_the_cached_svg_of_the_same_charts(client, seeded, renders):
    svg = client.get(SVG)
    png = client.get(PNG)
    assert svg.status_code == png.status_code == 200 and png.content.startswith(b"\x89PNG\r\n\x1a\n")
    assert renders == Counter(charts_svg=1, chart_png=1)


def test_it_ignores_query_parameters_the_chart_does_not_read(client, seeded, renders):
    client.get(SVG)
    assert client.get(SVG, {"page": "2", "anything": "x"}).status_code == 200
    assert renders["charts_svg"] == 1
    client.get(SVG, {"include": "excluded"})
    assert renders["charts_svg"] == 2  # the reader's choice draws other charts


def test_it_draws_the_chart_afresh_once_the_catalogue_changes(client, seeded, renders, curator):
    client.get(SVG)
    client.get(SVG)
    assert renders["charts_svg"] == 1
    protocol = Protocol.objects.get(stable_id=PROTOCOL_ID)
    protocol.metric_name = "Wall-clock fine-tuning time"
    record_save(record=protocol, actor=curator, changed_fields=["metric_name"], reason="clearer metric name")
    fresh = client.get(SVG)
    assert fresh.status_code == 200 and renders["charts_svg"] == 2
    assert "Wall-clock fine-tuning time" in fresh.content.decode()


def test_it_refuses_an_uncached_render_past_the_limit_with_retry_after_while_cached_charts_answer(
    client, seeded, renders, settings
):
    settings.CHART_RENDERS_PER_IP = 2
    settings.CHART_RENDERS_WINDOW_SECONDS = 600
    assert client.get(SVG).status_code == 200
    assert client.get(PNG).status_code == 200  # a render: rasterised from the cached SVG, counted once
    refused = client.get(SVG, {"include": "excluded"})
    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 601
    assert refused["Content-Type"] == "text/plain; charset=utf-8"
    assert "Too many new chart renderings from your address" in refused.content.decode()
    assert renders == Counter(charts_svg=1, chart_png=1)  # the refused one drew nothing
    assert client.get(SVG).status_code == 200 and client.get(PNG).status_code == 200  # cached: never limited
    assert client.get(SVG, {"include": "excluded"}, REMOTE_ADDR="192.0.2.7").status_code == 200  # another address


def test_it_does_not_limit_signed_in_staff(client, seeded, renders, settings, curator):
    settings.CHART_RENDERS_PER_IP = 1
    assert client.get(SVG).status_code == 200
    assert client.get(SVG, {"include": "excluded"}).status_code == 429
    client.force_login(curator)
    assert client.get(SVG, {"include": "excluded"}).status_code == 200
    assert client.get(SVG, {"dataset": "no-such-dataset"}).status_code == 200
    assert renders["charts_svg"] == 3


def test_it_answers_busy_while_every_render_slot_is_taken_but_serves_cached_charts_and_staff(
    client, seeded, renders, settings, curator
):
    settings.CHART_RENDERS_AT_ONCE = 1
    settings.CHART_RENDERS_PER_IP = 3
    assert client.get(SVG).status_code == 200  # 1 of 3 renders
    with ratelimit.slot(name=page_cache.RENDER_SLOTS, count=1, hold_seconds=60):  # another request rasterising
        for _ in range(2):  # not counted: the reader has not used a render
            busy = client.get(PNG)
            assert busy.status_code == 503 and int(busy["Retry-After"]) > 0
            assert "rendering another chart" in busy.content.decode()
        assert client.get(SVG).status_code == 200
        client.force_login(curator)
        assert client.get(PNG).status_code == 200
        client.logout()
    assert renders == Counter(charts_svg=1, chart_png=1)
    assert client.get(PNG).status_code == 200 and renders["chart_png"] == 1
    # Each anonymous render (2 and 3 of 3) frees the slot it took: the next one gets it.
    assert client.get(PNG, {"include": "excluded"}).status_code == 200
    assert client.get(PNG, {"dataset": "no-such-dataset"}).status_code == 200 and renders["chart_png"] == 3


@pytest.mark.parametrize("extension", ["svg", "png"])
def test_it_answers_404_for_the_chart_of_no_protocol(client, db, renders, extension):
    response = client.get(f"/protocols/no-such-protocol/comparison.{extension}")
    assert response.status_code == 404 and renders["chart_png"] == 0
    assert client.get(f"/protocols/no-such-protocol/comparison.{extension}").status_code == 404  # nothing cached
