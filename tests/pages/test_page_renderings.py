"""Record pages render byte for byte as recorded: a change to a page's bytes is a deliberate one.

The expected renderings under `renderings/` (gzipped) are written by this test with
PAGE_RENDERINGS_WRITE=1 over a fixed data set: the seed record, the example documents and a
protocol of 30 evaluations with uncertainty figures, bounds, repeats and an exclusion. They are
written again, deliberately, when a page's wording or markup changes on purpose (the git log says
when and why); between such rewrites every byte of every page listed is compared. What differs
between two renderings of the same page is masked before comparing: the CSRF token, the
correction form's signed time stamp and the review dates (the seed import records its reviews today).
Each page is fetched twice: cold (an empty cache) and from the page cache.
"""

from __future__ import annotations

import difflib
import gzip
import os
import re
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.cache import cache
from django.db import connection
from django.utils import timezone

from records.models import Configuration, Dataset, Evaluation, Protocol, Result, Source
from records.seed import PROTOCOL_ID
from records.services import record_save
from reviews.services import review_transition_apply

pytestmark = pytest.mark.django_db

RENDERINGS = Path(__file__).parent / "renderings"
WRITE = os.environ.get("PAGE_RENDERINGS_WRITE") == "1"
MIXED = "renderings-protocol-mixed"

PAGES = {
    "seed-protocol": f"/protocols/{PROTOCOL_ID}/",
    "seed-protocol-excluded": f"/protocols/{PROTOCOL_ID}/?include=excluded",
    "seed-protocol-facet": f"/protocols/{PROTOCOL_ID}/?measured_by=authors&review_state=excluded#all-rows",
    "seed-evaluation": "/evaluations/nt-500m-ia3-finetune-runtime-dalla-torre-2025/",
    "seed-configuration": "/configurations/nt-500m-ia3-dalla-torre-2025/",
    "seed-dataset": "/datasets/nt-benchmark-revised-18-tasks/",
    "seed-source": "/sources/dalla-torre-2025-nature-methods-nucleotide-transformer/",
    "home": "/",
    "coverage": "/coverage/",
    "coverage-area": "/coverage/?area=dna-genomes",
    "example-protocol": "/protocols/facts-proto-training-speedup-vs-reference/",
    "example-protocol-ratio": "/protocols/facts-proto-model-size-ratio-vs-reference/",
    "example-matrix": "/protocols/ntv1-mcc-x100/",
    "example-matrix-excluded": "/protocols/ntv1-mcc-x100/?include=excluded",
    "example-matrix-task": "/protocols/cad-gb-top1-accuracy/",
    "example-evaluation": "/evaluations/hyena-t42-nt-500m-1-genome-ntv1-enhancers/",
    "example-suite": "/protocols/gue-mcc-x100-zhou-2024/",
    "example-suite-page": "/protocols/gue-mcc-x100-zhou-2024/?table=evaluations&page=3",
    "example-task": "/datasets/ntv1-promoter-all/",
    "example-model": "/models/hyenadna-1-6m/",
    "mixed-protocol": f"/protocols/{MIXED}/",
    "mixed-protocol-excluded": f"/protocols/{MIXED}/?include=excluded",
    "mixed-protocol-dataset": f"/protocols/{MIXED}/?dataset=renderings-dataset-b",
    "mixed-protocol-facets": f"/protocols/{MIXED}/?setup=Five-fold&measured_by=third_party",
    "mixed-evaluation": "/evaluations/renderings-evaluation-07/",
}


def mixed_protocol() -> None:
    """A protocol over two datasets with 32 evaluations: uncertainty, bounds, third parties, the
    portal's own run, repeats counted once and of an excluded one, an exclusion edited since."""
    source = Source(stable_id="renderings-source", title="Renderings source", venue="Venue", authors_short="Doe et al.")
    record_save(record=source, actor=None)
    other_source = Source(stable_id="renderings-review", title="A review that reports again", venue="Review")
    record_save(record=other_source, actor=None)
    datasets = []
    for key in ("a", "b"):
        dataset = Dataset(stable_id=f"renderings-dataset-{key}", name=f"Dataset {key.upper()}")
        record_save(record=dataset, actor=None)
        datasets.append(dataset)
    protocol = Protocol(
        stable_id=MIXED,
        title="A protocol with mixed evaluations",
        summary="Mixed.",
        metric_name="Accuracy",
        metric_short_name="accuracy",
        metric_unit="percent",
        metric_direction="higher",
        source=source,
    )
    record_save(record=protocol, actor=None)
    protocol.datasets.set(datasets)
    evaluations = []
    for index in range(30):
        configuration = Configuration(
            stable_id=f"renderings-config-{index:02d}", name=f"Model <{index:02d}>", short_name=f"M{index}"
        )
        if index == 29:  # the same measurement as evaluation 0, reported again
            configuration = evaluations[0].configuration
        else:
            record_save(record=configuration, actor=None)
        third = index % 3 == 0 or index == 29
        portal = index == 11
        evaluation = Evaluation(
            stable_id=f"renderings-evaluation-{index:02d}",
            title=f"Evaluation & {index}",
            protocol=protocol,
            configuration=configuration,
            dataset=datasets[0 if index == 29 else index % 2],
            measured_by="third_party" if third else "portal" if portal else "authors",
            measured_by_name="A lab" if third else "",
            reading_method="job_report" if portal else "table" if index % 4 else "figure_label",
            setup="Five-fold" if index % 5 == 0 else "",
            aggregation="mean of folds" if index % 7 == 0 else "",
            uncertainty="standard deviation over folds" if index % 6 == 0 else "",
            source=None if portal else other_source if index == 29 else source,
            source_locator=f"Table {index % 3 + 1}",
            quote=f"Model {index} reaches {50 + index}.",
            repeats=evaluations[0] if index == 29 else None,
        )
        record_save(record=evaluation, actor=None)
        evaluations.append(evaluation)
        result = Result(
            stable_id=f"renderings-result-{index:02d}",
            evaluation=evaluation,
            value=Decimal(50 + index) + Decimal("0.10"),
            unit="percent",
            printed_value=f"{50 + index}.10",
            quote_mismatch_reason="The quote rounds it; the table prints two places.",
        )
        if index % 4 == 1:
            result.uncertainty_kind = "sd"
            result.uncertainty_value = Decimal("0.5")
            result.num_runs = 5
        if index % 8 == 2:
            result.uncertainty_kind = "ci"
            result.lower_bound = Decimal(49 + index)
            result.upper_bound = Decimal(51 + index)
            result.uncertainty_level = Decimal("95")
        record_save(record=result, actor=None)
    # The same measurement as the (excluded) evaluation 4, reported again by the review.
    repeat = Evaluation(
        stable_id="renderings-evaluation-30",
        title="Evaluation 4, reported again",
        protocol=protocol,
        configuration=evaluations[4].configuration,
        dataset=evaluations[4].dataset,
        measured_by="authors",
        reading_method="table",
        source=other_source,
        source_locator="Table 9",
        repeats=evaluations[4],
    )
    record_save(record=repeat, actor=None)
    record_save(
        record=Result(
            stable_id="renderings-result-30",
            evaluation=repeat,
            value=Decimal("54.1"),
            unit="percent",
            printed_value="54.1",
        ),
        actor=None,
    )
    evaluations.append(repeat)
    for index, evaluation in enumerate(evaluations):
        if index % 2 == 0 or index == 29:
            review_transition_apply(
                record=evaluation, transition="check_source", actor=None, reason="Checked.", automatic=True
            )
    review_transition_apply(
        record=evaluations[4], transition="exclude", actor=None, reason="A conflicting figure.", automatic=True
    )
    edited = Evaluation.objects.get(pk=evaluations[4].pk)
    edited.quote = "Model 4 reaches 54, as corrected."
    record_save(record=edited, actor=None)  # an excluded record edited: excluded, re-check pending


@pytest.fixture
def renderings_data(db, demo_snapshot):
    demo_snapshot.restore()  # the seed and every example document, as `import_seed` and `load_examples` write them
    mixed_protocol()


def normalised(content: bytes) -> str:
    text = content.decode()
    text = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', 'name="csrfmiddlewaretoken" value="CSRF"', text)
    text = re.sub(r'name="started" value="[^"]+"', 'name="started" value="STARTED"', text)
    text = text.replace(timezone.now().date().isoformat(), "TODAY")
    return re.sub(r"TODAY([T ])\d{2}:\d{2}", r"TODAY\1HH:MM", text)  # review log times, to the minute


def test_it_renders_every_page_as_before(client, renderings_data):
    failures = []
    for name, url in sorted(PAGES.items()):
        path = RENDERINGS / f"{name}.html.gz"
        cache.clear()
        cold = client.get(url)
        assert cold.status_code == 200, url
        if WRITE:
            RENDERINGS.mkdir(exist_ok=True)
            path.write_bytes(gzip.compress(normalised(cold.content).encode(), mtime=0))
        expected = gzip.decompress(path.read_bytes()).decode()
        if connection.vendor != "sqlite":
            # The renderings were stored from SQLite, which orders text by its bytes; PostgreSQL orders
            # by its collation, so lists ordered by name may differ: here the cache must keep the bytes.
            expected = normalised(cold.content)
        for kind, response in (("cold", cold), ("cached", client.get(url))):
            got = normalised(response.content)
            if got != expected:
                diff = difflib.unified_diff(
                    expected.splitlines(), got.splitlines(), "expected", "got", lineterm="", n=1
                )
                failures.append(
                    f"{name} ({kind}) differs from its rendering on the base commit:\n" + "\n".join(list(diff)[:40])
                )
    assert not failures, "\n\n".join(failures)
