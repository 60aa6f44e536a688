"""The admin's lists fit. On the demo content (the seed and every example paper, a release
built from them, and what tests/records/test_admin_lists.py's `list_extras` adds: evidence rows, task
equivalences, benchmark jobs, suggestions), logged in as a curator, a benchmark operator and a release
manager, each list they use is measured at 1,280 and 1,920 px:

- its identifying column comes first (the link) and is at least 220 px wide, no word broken inside it;
- every row is at most two lines of text high;
- the table does not scroll sideways (its width within its box), nor does the page;
- the review state (or the status) column is in view, and the filters are beside the table;
- axe-core finds no serious or critical violation."""

from __future__ import annotations

import json

import pytest

from tests.browser.conftest import admin_login, axe_violations
from tests.records.test_admin_lists import list_extras

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = (1280, 1920)
MIN_IDENTIFYING_WIDTH = 220
SETTLED = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"

# (list, its state column or None, the fewest rows it shows on the demo content), by who uses it
CURATOR = [
    ("records/evaluation", "review", 50),
    ("records/result", "review", 50),
    ("records/protocol", "review", 20),
    ("records/source", None, 20),
    ("records/dataset", None, 50),
    ("records/configuration", None, 50),
    ("records/genomicmodel", None, 20),
    ("records/work", None, 10),
    ("records/evidencerow", "review", 50),
    ("records/baselinerole", "review", 2),
    ("records/decision", None, 2),
    ("records/modelalias", None, 30),
    ("records/taskequivalence", None, 2),
    ("records/limitation", None, 50),
    ("records/area", None, 2),
    ("records/context", None, 2),
    ("corrections/correction", "status", 3),
    ("benchmarks/recipe", "review", 2),
    ("benchmarks/benchmarkjob", "state", 3),
]
OPERATOR = [("benchmarks/benchmarkjob", "state", 3), ("benchmarks/recipe", "review", 2)]
RELEASE_MANAGER = [("releases/release", "state", 3)]

MEASURE = """(stateColumn) => {
  const table = document.querySelector('#result_list');
  const box = document.querySelector('#changelist .results');
  const rows = [...table.querySelectorAll('tbody tr')];
  const first = rows[0];
  const cells = [...first.cells].filter(cell => !cell.classList.contains('action-checkbox'));
  const identifying = cells[0];
  const style = getComputedStyle(identifying);
  const px = name => parseFloat(style[name]) || 0;
  const twoLines = 2 * px('lineHeight') + px('paddingTop') + px('paddingBottom') + px('borderBottomWidth') + 1;
  // a word broken inside the identifying column: a run of letters and digits on two lines
  // (a line may end after a hyphen or a slash, as text does; a run longer than 30 characters,
  // an identifier, may be cut where it must)
  const broken = [];
  for (const row of rows) {
    const cell = row.cells[identifying.cellIndex];
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const match of node.data.matchAll(/[^\\s\\-\\/]+/g)) {
        if (match[0].length > 30) continue;
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        if (new Set([...range.getClientRects()].map(rect => Math.round(rect.top))).size > 1) broken.push(match[0]);
      }
    }
  }
  const boxRect = box.getBoundingClientRect();
  const state = stateColumn ? first.querySelector('.field-' + stateColumn) : null;
  const stateRect = state ? state.getBoundingClientRect() : null;
  const filter = document.querySelector('#changelist-filter');
  const filterRect = filter ? filter.getBoundingClientRect() : null;
  const heights = rows.map(row => row.getBoundingClientRect().height);
  return {
    identifying: identifying.tagName + '.' + identifying.className,
    link_first: identifying.tagName === 'TH' && !!identifying.querySelector('a[href]'),
    identifying_width: Math.round(identifying.getBoundingClientRect().width),
    broken: broken.slice(0, 5),
    rows: rows.length,
    first_row: Math.round(heights[0]),
    tallest_row: Math.round(Math.max(...heights)),
    two_lines: Math.round(twoLines),
    page_of_rows: Math.round(heights.reduce((a, b) => a + b, 0)),
    table_width: Math.round(table.getBoundingClientRect().width),
    box_width: Math.round(boxRect.width),
    box_scrolls: box.scrollWidth > box.clientWidth,
    page_scrolls: document.documentElement.scrollWidth > window.innerWidth,
    state_in_view: stateRect === null ? null
      : stateRect.width > 40 && stateRect.left >= boxRect.left && stateRect.right <= Math.min(boxRect.right, window.innerWidth),
    filters_beside: filterRect === null ? null : filterRect.left >= boxRect.right && filterRect.top < boxRect.bottom,
  };
}"""


def measure_lists(page, lists, who: str, measured: dict[str, dict]) -> list[str]:
    """Each list at each width; the problems found, one line each (and every measurement in `measured`)."""
    problems = []
    for path, state_column, fewest in lists:
        page.goto(f"/admin/{path}/")
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 900})
            page.evaluate(SETTLED)
            found = page.evaluate(MEASURE, state_column)
            measured[f"{who} {path} {width}"] = found
            where = f"{who} /admin/{path}/ at {width} px"
            if not found["link_first"]:
                problems.append(f"{where}: the first column is not the link ({found['identifying']})")
            if found["identifying_width"] < MIN_IDENTIFYING_WIDTH:
                problems.append(f"{where}: the identifying column is {found['identifying_width']} px wide")
            if found["broken"]:
                problems.append(f"{where}: words broken in the identifying column: {found['broken']}")
            if found["tallest_row"] > found["two_lines"]:
                problems.append(f"{where}: a row is {found['tallest_row']} px high (two lines: {found['two_lines']})")
            if found["box_scrolls"] or found["page_scrolls"]:
                problems.append(f"{where}: the table is {found['table_width']} px wide in {found['box_width']} px")
            if found["state_in_view"] is False:
                problems.append(f"{where}: the {state_column} column is out of view")
            if found["filters_beside"] is False:
                problems.append(f"{where}: the filters are not beside the table")
            if found["rows"] < fewest:
                problems.append(f"{where}: {found['rows']} rows, fewer than the demo's {fewest}")
            problems += [f"{where}: {violation}" for violation in axe_violations(page)]
        page.set_viewport_size({"width": 1280, "height": 900})
    return problems


@pytest.fixture
def demo(demo_content, make_user, settings, tmp_path):
    from releases.build import release_build
    from releases.services import release_cut

    list_extras()
    settings.RELEASES_DIR = tmp_path / "releases"
    manager = make_user("release_manager", "release-one")
    release = release_build(release_pk=release_cut(actor=manager, note="The demo papers added.").pk)
    assert release.status == "published", release.build.error
    make_user("curator", "curator-one")
    make_user("benchmark_operator", "operator-one")


def test_every_admin_list_fits_1280_and_1920_px_with_a_readable_identifying_column(browser, live_server, demo):
    problems: list[str] = []
    measured: dict[str, dict] = {}
    for username, lists in (("curator-one", CURATOR), ("operator-one", OPERATOR), ("release-one", RELEASE_MANAGER)):
        context = browser.new_context(
            base_url=live_server.url,
            viewport={"width": 1280, "height": 900},
            bypass_csp=True,  # axe runs inline
        )
        page = context.new_page()
        page.set_default_timeout(20_000)
        admin_login(page, username)
        problems += measure_lists(page, lists, username, measured)
        context.close()
    print(json.dumps(measured, indent=1))  # the measurements, for the record (pytest -s)
    evaluations = measured["curator-one records/evaluation 1280"]
    assert evaluations["rows"] == 50 and evaluations["page_of_rows"] <= 50 * evaluations["two_lines"]
    assert len(measured) == 2 * (len(CURATOR) + len(OPERATOR) + len(RELEASE_MANAGER))
    assert problems == [], "\n".join(problems)
