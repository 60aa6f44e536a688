"""Every surface that shows cross-paper evidence, read for the same rows: the protocol page, the task
page, the model page, the agreements API and the release's agreement tables. Each reader returns
what its surface says, in one shape, so that tests can assert they say the same."""

from __future__ import annotations

from dataclasses import dataclass

from django.http import QueryDict

from pages import identity_pages, model_page, protocol_page
from records.models import Dataset, GenomicModel, Protocol
from releases import identity_rows


@dataclass(frozen=True)
class Mark:
    """What a ranked surface says of the printing it compares for one measurement."""

    rank: int | None
    best: bool
    tied: bool


@dataclass(frozen=True)
class Said:
    """What an agreement surface says of one model on the task and metric."""

    verdict: str
    compared: frozenset[str]  # the evaluations whose printing is compared, one a measurement
    counted_as: frozenset[tuple[str, str]]  # (evaluation, how it counts) of every other printing


def protocol_marks(protocol: Protocol, task: Dataset) -> dict[str, Mark]:
    """Evaluation stable id -> its mark, for the printings the protocol page compares on the task."""
    marks = {}
    for group in protocol_page.protocol_groups(protocol=protocol, include_excluded=False):
        if group.dataset is None or group.dataset.pk != task.pk:
            continue
        for row in group.rows:
            if row.in_comparison:
                marks[row.evaluation.stable_id] = Mark(row.rank, row.is_best, row.tied_with_best or row.best_tied)
    return marks


def protocol_counted_once(protocol: Protocol, task: Dataset) -> dict[str, str]:
    """Evaluation stable id -> how it counts, for the printings another one stands for on the protocol page."""
    found = {}
    for group in protocol_page.protocol_groups(protocol=protocol, include_excluded=False):
        if group.dataset is not None and group.dataset.pk == task.pk:
            for row in group.rows:
                if row.same_as is not None:
                    found[row.evaluation.stable_id] = row.disagreement or "copy"
    return found


def task_marks(task: Dataset, metric: str) -> dict[str, Mark]:
    page = identity_pages.task_page(stable_id=task.stable_id, params=QueryDict())
    marks = {}
    for view in page.tables:
        if view.table.metric == metric:
            for row in view.table.rows:
                evaluation = row.measurement.shown.evaluation
                marks[evaluation.stable_id] = Mark(row.rank, row.is_best, row.tied_with_best or row.best_tied)
    return marks


def task_tables(task: Dataset) -> list[tuple[str, str]]:
    page = identity_pages.task_page(stable_id=task.stable_id, params=QueryDict())
    return [(view.table.metric, view.table.unit) for view in page.tables]


def _said(measurements) -> Said:
    counted = set()
    for measurement in measurements:
        for other in measurement.others:
            kind = next((d.kind for d in measurement.disagreements if d.printing is other.printing), "copy")
            counted.add((other.printing.evaluation.stable_id, kind))
    return Said(
        verdict="",
        compared=frozenset(m.shown.evaluation.stable_id for m in measurements),
        counted_as=frozenset(counted),
    )


def task_agreements(task: Dataset, metric: str) -> dict[str, Said]:
    page = identity_pages.task_page(stable_id=task.stable_id, params=QueryDict())
    found = {}
    for view in page.agreements.items:
        item = view.item
        if item.metric == metric and item.subject_is_model:
            said = _said(item.measurements)
            found[item.subject.stable_id] = Said(item.verdict, said.compared, said.counted_as)
    return found


def model_agreements(model: GenomicModel, metric: str) -> Said | None:
    page = model_page.model_page(stable_id=model.stable_id, params=QueryDict())
    for task in page.tasks.items:
        item = task.agreement
        if item.metric == metric:
            said = _said(item.measurements)
            return Said(item.verdict, said.compared, said.counted_as)
    return None


def api_agreements(client, task: Dataset, metric: str) -> dict[str, Said]:
    response = client.get("/api/v1/agreements/", {"task_id": task.stable_id, "page_size": 200})
    assert response.status_code == 200, response.content
    found = {}
    for row in response.json()["results"]:
        if row["metric"] == metric and row["subject_kind"] == "model":
            kinds = {d["evaluation_id"]: d["kind"] for d in row["disagreements"]}
            counted = {
                (copy, kinds.get(copy, "copy"))
                for measurement in row["measurements"]
                for copy in measurement["copy_evaluation_ids"]
            }
            found[row["subject_id"]] = Said(
                row["verdict"],
                frozenset(m["evaluation_id"] for m in row["measurements"]),
                frozenset(counted),
            )
    return found


def release_agreements(task: Dataset, metric: str) -> dict[str, Said]:
    verdicts = {
        row["agreement_id"]: row
        for row in identity_rows.agreement_rows(chunk_size=50)
        if row["metric"] == metric and row["subject_kind"] == "model"
    }
    compared: dict[str, set[str]] = {key: set() for key in verdicts}
    counted: dict[str, set[tuple[str, str]]] = {key: set() for key in verdicts}
    for row in identity_rows.agreement_measurement_rows(chunk_size=50):
        key = str(row["agreement_id"])
        if key not in verdicts:
            continue
        if row["counted_as"] == "compared":
            compared[key].add(str(row["evaluation_id"]))
        else:
            counted[key].add((str(row["evaluation_id"]), str(row["counted_as"])))
    return {
        str(row["model_id"]): Said(str(row["verdict"]), frozenset(compared[key]), frozenset(counted[key]))
        for key, row in verdicts.items()
        if task.stable_id in str(row["family_task_ids"]).split()
    }


def every_agreement(client, task: Dataset, metric: str, models: list[GenomicModel]) -> dict[str, dict[str, Said]]:
    """Surface -> model stable id -> what it says of the model on the task and metric."""
    by_model = {}
    for model in models:
        said = model_agreements(model, metric)
        if said is not None:
            by_model[model.stable_id] = said
    return {
        "task page": task_agreements(task, metric),
        "model page": by_model,
        "api": api_agreements(client, task, metric),
        "release": release_agreements(task, metric),
    }
