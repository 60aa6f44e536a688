"""The admin's lists on the demo content (the seed and every example paper: 1,067 evaluations
and results, 149 datasets and tasks, 75 configurations) read a page of 100 rows in the statements of
a page of 1, for every list a curator, a benchmark operator or a release manager uses; each list's
first column is its identifying one, the link. (Their layout in a browser: tests/browser/test_admin_lists.py.)"""

from __future__ import annotations

import re
from unittest import mock

import pytest
from django.contrib import admin
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from benchmarks.models import BenchmarkJob, Recipe
from corrections.models import Correction
from records.models import (
    Area,
    BaselineRole,
    Configuration,
    Context,
    Dataset,
    Decision,
    Evaluation,
    EvidenceRow,
    GenomicModel,
    Limitation,
    ModelAlias,
    Protocol,
    Result,
    Source,
    TaskEquivalence,
    Work,
)
from releases.models import Release
from tests.helpers import load_for_module

pytestmark = pytest.mark.django_db

LISTS = [
    Evaluation,
    Result,
    Protocol,
    Source,
    Dataset,
    Configuration,
    GenomicModel,
    Work,
    EvidenceRow,
    BaselineRole,
    Decision,
    ModelAlias,
    TaskEquivalence,
    Limitation,
    Area,
    Context,
    Correction,
    Recipe,
    BenchmarkJob,
    Release,
]


def list_extras() -> None:
    """What the demo content lacks for the lists to show: evidence rows quoting 60 of its evaluations'
    sources, two task equivalences, a second decision, area, context and recipe, benchmark jobs (one
    cancelled), suggestions on a result and a protocol, and releases cut (and cancelled). Written
    through the services, by the demo's roles."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from benchmarks.services import benchmark_job_cancel, benchmark_job_enqueue, recipe_save
    from benchmarks.tasks import benchmark_job_run
    from corrections.services import correction_submit
    from records.services import record_save
    from releases.services import release_cancel, release_cut
    from reviews.roles import BENCHMARK_OPERATORS, CURATORS, RELEASE_MANAGERS
    from reviews.services import roles_ensure

    roles_ensure()
    users = {}
    for name, role in (("lists-curator", CURATORS), ("lists-operator", BENCHMARK_OPERATORS)):
        users[name] = get_user_model().objects.create_user(name, f"{name}@example.org", "x", is_staff=True)
        users[name].groups.add(Group.objects.get(name=role.group))
    manager = get_user_model().objects.create_user("lists-manager", "lists-manager@example.org", "x", is_staff=True)
    manager.groups.add(Group.objects.get(name=RELEASE_MANAGERS.group))

    quoted = Evaluation.objects.exclude(quote="").filter(source__isnull=False).order_by("stable_id")
    for evaluation in quoted[:60]:
        row = EvidenceRow(
            stable_id=f"{evaluation.stable_id}-value-evidence"[:150],
            protocol_id=evaluation.protocol_id,
            evaluation=evaluation,
            property_name="value",
            statement=f"The source prints the value of {evaluation.title}.",
            source_id=evaluation.source_id,
            locator=evaluation.source_locator or "the table",
            quote=evaluation.quote,
        )
        record_save(record=row, actor=users["lists-curator"])
    for task, same_as in (
        ("hyena-gb-human-enhancers-cohn", "dnafm-enhancer-cohn"),
        ("hyena-gb-human-enhancers-ensembl", "dnafm-enhancer-ensembl"),
    ):
        same = Dataset.objects.get(stable_id=same_as)
        equivalence = TaskEquivalence(
            stable_id=f"{task}-same-as-{same_as}",
            task=Dataset.objects.get(stable_id=task),
            same_as=same,
            source=same.suite.source or Source.objects.order_by("stable_id").first(),
            locator="the suite's datasets table",
            quote=f"{same.name}: the Genomic Benchmarks dataset.",
        )
        record_save(record=equivalence, actor=users["lists-curator"])

    second = [
        Decision(stable_id="select-a-model-for-a-long-range-task", title="Select a model for a long-range task"),
        Area(stable_id="regulatory-genomics", label="Regulatory genomics"),
        Context(stable_id="fine-tuning-on-one-gpu", label="Fine-tuning on one GPU"),
    ]
    for record in second:
        record_save(record=record, actor=users["lists-curator"])
    recipe = Recipe.objects.order_by("pk").first()
    recipe.pk, recipe.stable_id, recipe.title = None, f"{recipe.stable_id}-tiny", f"{recipe.title}, tiny preset"
    recipe.preset, recipe.steps, recipe.warmup_steps = "tiny", 30, 0
    recipe_save(recipe=recipe, actor=users["lists-operator"])

    with mock.patch.object(benchmark_job_run, "apply_async", lambda *args, **kwargs: None):  # no worker here
        recipe = Recipe.objects.order_by("pk").first()
        operator = users["lists-operator"]
        benchmark_job_enqueue(recipe=recipe, requested_by=operator, overrides={"preset": "tiny", "steps": 30})
        cancelled = benchmark_job_enqueue(recipe=recipe, requested_by=operator)
        benchmark_job_cancel(job=cancelled, actor=operator, reason="cancelled to try the tiny preset first")
        benchmark_job_enqueue(recipe=recipe, requested_by=operator, overrides={"preset": "tiny", "batch_size": 2})

    result = Result.objects.select_related("evaluation").order_by("stable_id").first()
    protocol = Protocol.objects.order_by("stable_id").first()
    for number, (target, field, value) in enumerate(
        ((result, "value", "15"), (protocol, "title", f"{protocol.title} (corrected)"), (result, "unit", "hour"))
    ):
        correction_submit(
            target=target,
            field_name=field,
            proposed_value=value,
            explanation="The paper's Discussion gives another figure than the table it is read from.",
            supporting_source="",
            supporting_locator="Discussion",
            contact_email="",
            ip=f"192.0.2.{number + 1}",
        )

    for _ in range(2):  # each build sent to the releases queue, which no worker reads here
        release_cancel(actor=manager, release_pk=release_cut(actor=manager, note="A build cancelled.").pk)


@pytest.fixture(scope="module")
def demo(demo_snapshot, module_transaction):
    load_for_module(module_transaction, demo=demo_snapshot)
    with module_transaction.unblock():
        list_extras()


# A page of 2 suggestions (on a result and a protocol): the records they are about are read once per type.
SMALL_PAGE = {Correction: 2}


def changelist(model) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")


def statements(client, model, per_page: int) -> tuple[int, str]:
    site_admin = admin.site._registry[model]
    site_admin.list_per_page, saved = per_page, site_admin.list_per_page
    try:
        with CaptureQueriesContext(connection) as captured:
            response = client.get(changelist(model))
    finally:
        site_admin.list_per_page = saved
    assert response.status_code == 200
    return len(captured), response.content.decode()


@pytest.mark.parametrize("model", LISTS, ids=lambda model: model.__name__)
def test_each_list_reads_100_rows_in_the_statements_of_1_and_starts_with_its_link(admin_client, demo, model):
    assert model._default_manager.count() > SMALL_PAGE.get(model, 1)  # more rows than the small page shows
    few, _ = statements(admin_client, model, SMALL_PAGE.get(model, 1))
    many, body = statements(admin_client, model, 100)
    assert many == few
    table = body.split('id="result_list"', 1)[1].split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    rows = re.findall(r"<tr>(.*?)</tr>", table, re.S)
    assert len(rows) == min(100, model._default_manager.count())
    # the identifying column first (after the action checkbox): a header cell holding the link
    first = re.sub(r'<td class="action-checkbox">.*?</td>', "", rows[0], flags=re.S).strip()
    assert first.startswith("<th") and "<a href=" in first.split("</th>", 1)[0], first[:300]


def test_the_evaluation_list_shows_its_key_facts(admin_client, demo):
    evaluation = (
        Evaluation.objects.filter(results__isnull=False)
        .select_related("protocol", "dataset", "configuration")
        .order_by("configuration__name", "stable_id")
        .first()
    )
    _, body = statements(admin_client, Evaluation, 50)
    headers = re.findall(r'<th scope="col" class="[^"]*column-([a-z_]+)', body)
    assert headers == [
        "evaluation_title",
        "protocol_title",
        "task_name",
        "configuration_name",
        "value_text",
        "review",
        "changed",
    ]
    row = body.split(f'title="{evaluation.title} ({evaluation.stable_id})"', 1)[1].split("</tr>", 1)[0]
    result = evaluation.results.order_by("stable_id").first()
    assert f">{result.display_value} {result.unit}" in row
    assert evaluation.configuration.short_name or evaluation.configuration.name in row
    assert ">Source checked<" in row or ">Proposed<" in row or ">Excluded" in row
