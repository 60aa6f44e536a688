"""Best over time: on the demo content's promoter task page at a 390 px wide viewport the
F1 timeline is drawn inside the screen, every text of it at least 11 px as displayed (its font size
times the SVG's scale, and its drawn box), its steps left to right in date order, the later one
higher (a better F1) with its stored ± drawn; and the page does not scroll sideways."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TASK = "ntv1-promoter-all"

MEASURE = """() => [...document.querySelectorAll('svg.chart.timeline')].map(svg => {
  const box = svg.getBoundingClientRect();
  const scale = box.width / svg.viewBox.baseVal.width;
  return {
    left: box.left, right: box.right, scale,
    texts: [...svg.querySelectorAll('text')].filter(t => t.textContent.trim()).map(t => ({
      text: t.textContent.trim(),
      size: parseFloat(getComputedStyle(t).fontSize) * scale,
      height: t.getBoundingClientRect().height,
    })),
    steps: [...svg.querySelectorAll('g.step')].map(step => {
      const mark = step.querySelector('circle, rect, path:not(.interval)').getBoundingClientRect();
      return {
        number: step.querySelector('text.step-number').textContent.trim(),
        x: mark.left + mark.width / 2, y: mark.top + mark.height / 2,
        interval: step.querySelectorAll('path.interval').length,
      };
    }),
    key: [...svg.querySelectorAll('g.key text')].map(t => t.textContent.trim()).join(' '),
    caption: svg.closest('figure').querySelector('figcaption').textContent,
  };
})"""


def test_the_promoter_tasks_timeline_is_readable_at_390_px(browser, live_server, demo_content):
    context = browser.new_context(base_url=live_server.url, viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(f"/datasets/{TASK}/")
    timelines = page.evaluate(MEASURE)
    widths = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    context.close()
    assert len(timelines) == 1  # F1 (two tables, one scale); the MCC figure has one date: none
    drawn = timelines[0]
    assert 0 <= drawn["left"] and drawn["right"] <= 390
    small = [(text["text"], round(text["size"], 1), round(text["height"], 1)) for text in drawn["texts"]]
    small = [entry for entry in small if entry[1] < 11 or entry[2] < 11]
    assert not small, small
    steps = drawn["steps"]
    assert [step["number"] for step in steps] == ["1", "2"]
    assert steps[0]["x"] < steps[1]["x"] and steps[1]["y"] < steps[0]["y"]
    assert steps[1]["interval"] == 1  # Caduceus prints 0.976 ± 0.006
    assert "Nguyen et al. 2023" in drawn["key"] and "Schiff et al. 2024" in drawn["key"]
    assert "counts as that period's last day" in drawn["caption"]
    assert widths[0] <= widths[1], widths
