"""A researcher, a curator, a release manager and an operator walk their paths on real
content (the seed, the example papers, a built release, a real tiny benchmark run) at 390 px and
1,280 px. On every page: no sideways page scroll (`scrollWidth <= innerWidth`) and no axe-core
violation of any impact; on the way, the way-finding the issue asked for is there."""

from __future__ import annotations

import pytest

from corrections.forms import MIN_SECONDS
from records.models import Dataset, Evaluation, Protocol, Source
from records.seed import PROTOCOL_ID, SEED_RELEASE_ID, SUITE_ID
from tests.browser.conftest import admin_login, axe_violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = (390, 1280)
SETTLED = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"


class Walk:
    """Checks every page it is shown at both widths; collects the problems rather than stopping."""

    def __init__(self, browser, base_url: str, who: str):
        self.context = browser.new_context(base_url=base_url, viewport={"width": 1280, "height": 900}, bypass_csp=True)
        self.page = self.context.new_page()
        self.page.set_default_timeout(20_000)
        self.who = who
        self.problems: list[str] = []
        self.checked: list[str] = []

    def visit(self, url: str, *, ready: str | None = None) -> None:
        self.page.goto(url)
        if ready:
            self.page.wait_for_selector(ready)
        self.check()

    def check(self) -> None:
        page = self.page
        path = page.url.split("//", 1)[-1].split("/", 1)[-1]
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 900})
            page.evaluate(SETTLED)
            scroll, inner = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
            if scroll > inner:
                self.problems.append(f"{self.who} /{path} at {width} px: the page is {scroll} px wide")
            for violation in axe_violations(page, impacts=None):
                self.problems.append(f"{self.who} /{path} at {width} px: {violation}")
        page.set_viewport_size({"width": 1280, "height": 900})
        self.checked.append(f"/{path}")

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def real_content(demo_content, make_user, settings, tmp_path, monkeypatch):
    """The seed and the example papers, a release built from them, and a finished tiny IA3 run."""
    from benchmarks import execution
    from benchmarks.models import Recipe
    from benchmarks.services import benchmark_job_enqueue
    from benchmarks.tasks import benchmark_job_run
    from releases.build import release_build
    from releases.services import release_cut

    settings.RELEASES_DIR = tmp_path / "releases"
    release = release_build(
        release_pk=release_cut(actor=make_user("release_manager", "release-one"), note="The demo papers added.").pk
    )
    assert release.status == "published", release.build.error

    monkeypatch.setattr(benchmark_job_run, "apply_async", lambda *args, **kwargs: None)  # the test runs it
    operator = make_user("benchmark_operator", "operator-one")
    recipe = Recipe.objects.get(protocol__stable_id=PROTOCOL_ID)
    job = benchmark_job_enqueue(
        recipe=recipe, requested_by=operator, overrides={"preset": "tiny", "steps": 8, "batch_size": 2}
    )
    job.refresh_from_db()
    outcome = execution.benchmark_job_execute(
        job_id=job.pk, task_id=job.celery_task_id, worker_host="gpu-host-with-a-long-name.example.org"
    )
    job.refresh_from_db()
    assert outcome == "succeeded", job.error
    # the log tail holds the runner's report and the worker's own lines, wider than a phone
    assert max(len(line) for line in job.log_tail.splitlines()) > 60
    make_user("curator", "curator-one")
    return {"release": release, "job": job}


def test_every_role_walks_its_path_at_390_and_1280_px_without_sideways_scroll_or_axe_violation(
    browser, live_server, real_content
):
    release, job = real_content["release"], real_content["job"]
    walks = []

    # The researcher: search, record pages of every kind, coverage, releases, a correction, the API.
    researcher = Walk(browser, live_server.url, "researcher")
    walks.append(researcher)
    page = researcher.page
    researcher.visit("/")
    assert page.locator("header nav a", has_text="Releases").count() == 1
    researcher.visit("/search/?q=IA3")
    long_named = max(Source.objects.all(), key=lambda source: max(len(word) for word in source.title.split()))
    researcher.visit(f"/search/?q={long_named.title.split()[0]}")
    assert long_named.title in page.locator("main").inner_text()
    researcher.visit(f"/protocols/{PROTOCOL_ID}/")
    assert ".;" not in page.locator("main").inner_text()
    assert page.locator("pre code", has_text="python -m benchmarks.ia3").count() >= 1  # the run command wraps
    researcher.visit(f"/protocols/{PROTOCOL_ID}/?include=excluded")
    researcher.visit("/protocols/gue-mcc-x100-zhou-2024/")
    evaluation = Evaluation.objects.filter(protocol__stable_id=PROTOCOL_ID).order_by("stable_id").first()
    researcher.visit(evaluation.get_absolute_url())
    researcher.visit(evaluation.configuration.get_absolute_url())
    researcher.visit(Dataset.objects.get(stable_id=SUITE_ID).get_absolute_url())
    with_doi = Source.objects.exclude(doi="").order_by("stable_id").first()
    researcher.visit(with_doi.get_absolute_url())
    assert page.locator("a.doi").get_attribute("href") == f"https://doi.org/{with_doi.doi}"
    researcher.visit(Protocol.objects.get(stable_id=PROTOCOL_ID).decisions.first().get_absolute_url())
    researcher.visit("/coverage/")
    headers = page.locator("table.coverage thead th").all_inner_texts()
    assert headers[:2] == ["Protocol", "Missing"]  # the key columns first
    researcher.visit("/releases/")
    researcher.visit(f"/releases/{release.release_id}/")
    researcher.visit(f"/releases/{SEED_RELEASE_ID}/")
    text = page.locator("main").inner_text()
    assert "seed record page" not in text
    assert text.count(release.__class__.objects.get(release_id=SEED_RELEASE_ID).note) == 1
    researcher.visit(f"/benchmarks/jobs/{job.pk}/")
    assert "Heartbeat" not in page.locator("main").inner_text()
    assert "Finished" in page.locator("main").inner_text()

    page.goto(f"/protocols/{PROTOCOL_ID}/")
    page.select_option(
        "#id_target", label="value of NT 500M-parameter models on NT benchmark, all 18 tasks (20 minute)"
    )
    page.fill("#id_proposed_value", "15")
    page.fill("#id_explanation", "The Discussion says the largest models fine-tune in under 15 min on a single GPU.")
    page.fill("#id_supporting_source", "https://pmc.ncbi.nlm.nih.gov/articles/PMC11810778/")
    page.wait_for_timeout((MIN_SECONDS + 0.5) * 1000)
    page.get_by_role("button", name="Send suggestion").click()
    page.wait_for_selector("h1:text('Thank you')")
    researcher.check()
    page.get_by_role("link", name="Back to the record").click()
    page.wait_for_selector("h1#record-title")
    assert page.url.split("#")[0].endswith(f"/protocols/{PROTOCOL_ID}/")

    researcher.visit("/api/v1/docs/", ready=".opblock")
    assert page.get_by_role("link", name="Back to the site").get_attribute("href") == "/"

    # The curator: the review queue, the catalogue's lists and forms, the moderation list.
    curator = Walk(browser, live_server.url, "curator")
    walks.append(curator)
    page = curator.page
    admin_login(page, "curator-one")
    curator.check()
    assert "Django administration" not in page.content()
    curator.visit("/admin/review-queue/")
    curator.visit("/admin/records/evaluation/")
    seed_evaluation = Evaluation.objects.filter(protocol__stable_id=PROTOCOL_ID, results__isnull=False).first()
    curator.visit(f"/admin/records/evaluation/{seed_evaluation.pk}/change/")
    label = page.locator("label[for=review-reason]").inner_text()
    assert label.count("required for") <= 1, label
    curator.visit(f"/admin/records/evaluation/{seed_evaluation.pk}/history/")
    curator.visit("/admin/records/protocol/")
    curator.visit(f"/admin/records/protocol/{Protocol.objects.get(stable_id=PROTOCOL_ID).pk}/change/")
    curator.visit("/admin/records/source/")
    curator.visit(f"/admin/records/source/{with_doi.pk}/change/")
    curator.visit(f"/admin/records/dataset/{Dataset.objects.get(stable_id=SUITE_ID).pk}/change/")
    curator.visit("/admin/records/evidencerow/")
    curator.visit("/admin/reviews/reviewevent/")
    curator.visit("/admin/corrections/correction/")
    fits = page.evaluate(
        "(() => { const box = document.querySelector('#changelist .results'); return box.scrollWidth <= box.clientWidth; })()"
    )
    assert fits, "the moderation list's columns are cut off at 1,280 px"
    filters = page.locator("#changelist-filter a").all_inner_texts()
    assert filters.count(PROTOCOL_ID) == 1 and "Result" in filters
    assert not [name for name in filters if "|" in name]
    curator.visit("/admin/corrections/correction/1/change/")
    curator.visit(f"/benchmarks/jobs/{job.pk}/")
    assert page.locator("pre.job-log").count() == 1  # the log tail, shown to curators and operators

    # The release manager: the releases in the admin and the build page.
    manager = Walk(browser, live_server.url, "release manager")
    walks.append(manager)
    admin_login(manager.page, "release-one")
    manager.check()
    manager.visit("/admin/releases/release/")
    manager.visit(f"/admin/releases/release/{release.pk}/change/")
    manager.visit(f"/releases/{release.pk}/")
    manager.visit("/admin/releases/releasefixitycheck/")

    # The operator: jobs and recipes in the admin, the job page with its log tail.
    operator = Walk(browser, live_server.url, "operator")
    walks.append(operator)
    admin_login(operator.page, "operator-one")
    operator.check()
    operator.visit("/admin/benchmarks/benchmarkjob/")
    operator.visit(f"/admin/benchmarks/benchmarkjob/{job.pk}/change/")
    operator.visit("/admin/benchmarks/recipe/")
    operator.visit(f"/admin/benchmarks/recipe/{job.recipe_id}/change/")
    operator.visit(f"/benchmarks/jobs/{job.pk}/")
    log = operator.page.locator("pre.job-log")
    assert "steps x batch 2" in log.inner_text()

    problems = [problem for walk in walks for problem in walk.problems]
    checked = sum(len(walk.checked) for walk in walks)
    for walk in walks:
        walk.close()
    assert checked >= 40
    assert problems == [], "\n".join(problems)
