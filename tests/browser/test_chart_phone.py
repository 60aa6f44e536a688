"""On the demo content's GUE protocol page at a 390 px wide viewport every text of every comparison
chart is at least 11 px as displayed (its size in the chart's own document times the scale the page
shows the chart's image at, and its drawn box), and no chart runs past the screen; where the demo
stores an uncertainty (the Nucleotide Transformer benchmark's ± figures) each bar has its interval drawn."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GUE = "gue-mcc-x100-zhou-2024"
NT = "ntv1-mcc"

IMAGES = """() => [...document.querySelectorAll('figure.chart-figure img')].map(img => {
  const box = img.getBoundingClientRect();
  return {src: img.getAttribute('src'), left: box.left, right: box.right, width: box.width};
})"""
MEASURE = """() => [...document.querySelectorAll('svg.chart')].map(svg => {
  const box = svg.getBoundingClientRect();
  const scale = box.width / svg.viewBox.baseVal.width;
  return {
    id: svg.getAttribute('aria-labelledby'), left: box.left, right: box.right, scale,
    texts: [...svg.querySelectorAll('text')].filter(t => t.textContent.trim()).map(t => ({
      text: t.textContent.trim(),
      size: parseFloat(getComputedStyle(t).fontSize) * scale,
      height: t.getBoundingClientRect().height,
    })),
    intervals: svg.querySelectorAll('path.interval').length,
    bars: svg.querySelectorAll('g.bar').length,
  };
})"""


def charts_as_shown(page, url: str) -> list[dict]:
    """Each chart of a page as the page shows it: its image's place, and its texts, intervals and
    bars measured in the chart's own document, their sizes scaled to the image's displayed width."""
    page.goto(url)
    images = page.evaluate(IMAGES)
    charts = []
    for image in images:
        svg = page.request.get(image["src"]).text()  # the image's own bytes, drawn at their own size
        page.set_content(f"<!doctype html><body style='margin:0'>{svg.split('?>', 1)[-1]}</body>")
        [chart] = page.evaluate(MEASURE)
        shown = image["width"] / (chart["right"] - chart["left"])
        for text in chart["texts"]:
            text["size"] *= shown
            text["height"] *= shown
        charts.append({**chart, "left": image["left"], "right": image["right"]})
    return charts


def test_every_chart_label_on_the_gue_page_is_at_least_11_px_at_390_px(browser, live_server, demo_content):
    context = browser.new_context(base_url=live_server.url, viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.set_default_timeout(30_000)
    charts = charts_as_shown(page, f"/protocols/{GUE}/")
    context.close()
    assert len(charts) > 1  # the suite's small multiples, one a task
    assert sum(chart["bars"] for chart in charts) >= 200
    small = [
        (chart["id"], text["text"], round(text["size"], 1), round(text["height"], 1))
        for chart in charts
        for text in chart["texts"]
        if text["size"] < 11 or text["height"] < 11
    ]
    assert not small, small[:10]
    smallest = min(text["size"] for chart in charts for text in chart["texts"])
    assert smallest >= 11
    assert all(0 <= chart["left"] and chart["right"] <= 390 for chart in charts)


def test_the_charts_draw_an_interval_for_every_stored_uncertainty(browser, live_server, demo_content):
    from records.models import Result

    context = browser.new_context(base_url=live_server.url, viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.set_default_timeout(30_000)
    charts = charts_as_shown(page, f"/protocols/{NT}/")
    context.close()
    drawn = sum(chart["intervals"] for chart in charts)
    stored = Result.objects.filter(evaluation__protocol__stable_id=NT).exclude(uncertainty_kind="")
    assert drawn > 0
    assert drawn == sum(chart["bars"] for chart in charts if chart["intervals"])  # each bar of those charts
    assert drawn <= stored.count()
    assert any("best; tied with" in text["text"] for chart in charts for text in chart["texts"])
