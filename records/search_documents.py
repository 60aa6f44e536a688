"""What the search index holds for each kind of record: the hit it shows and the text it is found by.

Each builder reads the rows of some records of one kind (as values, a few queries whatever their
number) and returns their unsaved `SearchEntry` rows. A record is found by its own names (weight
A), where it belongs (B: an evaluation's protocol, task and suite), what it tests (C: its
configuration, model and the model's aliases) and the rest of its text (D). What each kind's entry
reads from other records is what records.search_index refreshes when those change (DEPENDENTS there).

Results are found by their value (a number searched, 0.41 finds 0.410) and their printed text
("300B"), not by the words of their evaluation: the evaluation is the hit for those, once.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal
from typing import Any, cast

from django.urls import reverse

from records.models import (
    Configuration,
    Dataset,
    Decision,
    Evaluation,
    GenomicModel,
    ModelAlias,
    Protocol,
    Result,
    Source,
    Work,
    alias_key,
)
from records.models.search import SearchEntry, SearchKind
from records.search_text import indexed, name_keys
from records.values import display, exact_text

SHOWN_VALUES = 4  # an evaluation hit shows its first few values


@functools.cache
def _url_parts(url_name: str) -> tuple[str, str]:
    placeholder = "stable-id-placeholder"
    prefix, suffix = reverse(url_name, args=[placeholder]).split(placeholder, 1)
    return prefix, suffix


def _url(url_name: str, stable_id: str | None) -> str:
    if not stable_id:
        return ""
    prefix, suffix = _url_parts(url_name)
    return f"{prefix}{stable_id}{suffix}"


def _cut(text: str, length: int) -> str:
    return text if len(text) <= length else text[: length - 1] + "…"


def _models(model_ids: Iterable[int | None]) -> dict[int, dict[str, Any]]:
    """Models by id with their aliases (`aliases`: printed names, in order)."""
    ids = sorted({pk for pk in model_ids if pk is not None})
    if not ids:
        return {}
    models: dict[int, dict[str, Any]] = {
        row["id"]: {**row, "aliases": []} for row in GenomicModel.objects.filter(id__in=ids).values()
    }
    for model_id, alias in (
        ModelAlias.objects.filter(model_id__in=ids).order_by("alias").values_list("model_id", "alias")
    ):
        models[model_id]["aliases"].append(alias)
    return models


def _model_text(model: dict[str, Any] | None) -> list[str]:
    return [model["name"], *model["aliases"]] if model else []


def model_entries(ids: Sequence[int]) -> list[SearchEntry]:
    """Models by name, every alias a paper prints, family, public id; a model merged into another has
    no entry (it is found through that one, which its aliases moved to)."""
    models = _models(ids)
    entries = []
    for model in models.values():
        if model["merged_into_id"] is not None:
            continue
        names = [model["name"], *model["aliases"]]
        entries.append(
            SearchEntry(
                kind=SearchKind.MODEL,
                record_id=model["id"],
                stable_id=model["stable_id"],
                title=model["name"],
                url=_url("pages:model", model["stable_id"]),
                detail=_cut(f"also printed as {', '.join(model['aliases'])}", 500) if model["aliases"] else "",
                name_text=indexed(*names, model["stable_id"], whole=True),
                subject_text=indexed(model["family"], model["public_id"]),
                body_text=indexed(model["description"]),
                name_keys=name_keys(*names),
                title_key=_cut(alias_key(model["name"]), 500),
            )
        )
    return entries


def configuration_entries(ids: Sequence[int]) -> list[SearchEntry]:
    rows = list(Configuration.objects.filter(id__in=ids).values())
    models = _models(row["model_id"] for row in rows)
    entries = []
    for row in rows:
        model = models.get(row["model_id"])
        entries.append(
            SearchEntry(
                kind=SearchKind.CONFIGURATION,
                record_id=row["id"],
                stable_id=row["stable_id"],
                title=row["name"],
                url=_url("pages:configuration", row["stable_id"]),
                model_name=model["name"] if model else "",
                model_url=_url("pages:model", model["stable_id"] if model else None),
                name_text=indexed(row["name"], row["short_name"], row["stable_id"], whole=True),
                subject_text=indexed(*_model_text(model), row["family"], row["method"], whole=True),
                body_text=indexed(row["description"]),
                name_keys=name_keys(row["name"], row["short_name"]),
                title_key=_cut(alias_key(row["short_name"] or row["name"]), 500),
            )
        )
    return entries


def dataset_entries(ids: Sequence[int]) -> list[SearchEntry]:
    """Datasets and tasks; a task is found by its name, its key in its suite and the suite's name."""
    rows = list(
        Dataset.objects.filter(id__in=ids).values(
            "id", "stable_id", "name", "description", "task_key", "metric", "suite__name", "suite__stable_id"
        )
    )
    entries = []
    for row in rows:
        suite = row["suite__name"] or ""
        is_task = bool(row["task_key"] and suite)
        entries.append(
            SearchEntry(
                kind=SearchKind.DATASET,
                record_id=row["id"],
                stable_id=row["stable_id"],
                title=row["name"],
                url=_url("pages:dataset", row["stable_id"]),
                detail=f"task {row['task_key']} of {suite}" if is_task else "",
                task_name=row["name"] if is_task else "",
                name_text=indexed(row["name"], row["task_key"], row["stable_id"], whole=True),
                place_text=indexed(suite),
                body_text=indexed(row["description"], row["metric"]),
                name_keys=name_keys(row["name"], row["task_key"]),
                title_key=_cut(alias_key(row["name"]), 500),
            )
        )
    return entries


def protocol_entries(ids: Sequence[int]) -> list[SearchEntry]:
    rows = Protocol.objects.filter(id__in=ids).values(
        "id",
        "stable_id",
        "title",
        "summary",
        "procedure",
        "version_label",
        "metric_name",
        "metric_short_name",
        "metric_description",
        "metric_unit",
        "source__authors_short",
    )
    return [
        SearchEntry(
            kind=SearchKind.PROTOCOL,
            record_id=row["id"],
            stable_id=row["stable_id"],
            title=row["title"],
            url=_url("pages:protocol", row["stable_id"]),
            detail=_cut(f"{row['metric_name']} ({row['metric_unit']})", 500),
            name_text=indexed(row["title"], row["stable_id"]),
            place_text=indexed(row["metric_name"], row["metric_short_name"], row["metric_unit"]),
            body_text=indexed(
                row["summary"],
                row["procedure"],
                row["version_label"],
                row["metric_description"],
                row["source__authors_short"] or "",
            ),
            name_keys=name_keys(row["title"]),
            title_key=_cut(alias_key(row["title"]), 500),
        )
        for row in rows
    ]


def source_entries(ids: Sequence[int]) -> list[SearchEntry]:
    rows = Source.objects.filter(id__in=ids).values(
        "id",
        "stable_id",
        "title",
        "venue",
        "authors_short",
        "citation",
        "published_date",
        "doi",
        "pmcid",
        "arxiv_id",
        "copy_consulted",
    )
    return [
        SearchEntry(
            kind=SearchKind.SOURCE,
            record_id=row["id"],
            stable_id=row["stable_id"],
            title=row["title"],
            url=_url("pages:source", row["stable_id"]),
            detail=" · ".join(part for part in (row["authors_short"], row["venue"], row["published_date"]) if part),
            name_text=indexed(row["title"], row["stable_id"], row["doi"], row["pmcid"], row["arxiv_id"]),
            place_text=indexed(row["authors_short"], row["venue"]),
            body_text=indexed(row["citation"], row["copy_consulted"]),
            name_keys=name_keys(row["title"]),
            title_key=_cut(alias_key(row["title"]), 500),
        )
        for row in rows
    ]


def work_entries(ids: Sequence[int]) -> list[SearchEntry]:
    rows = Work.objects.filter(id__in=ids).values("id", "stable_id", "title", "authors_short", "description")
    return [
        SearchEntry(
            kind=SearchKind.WORK,
            record_id=row["id"],
            stable_id=row["stable_id"],
            title=row["title"],
            url=_url("pages:work", row["stable_id"]),
            detail=row["authors_short"],
            name_text=indexed(row["title"], row["stable_id"]),
            place_text=indexed(row["authors_short"]),
            body_text=indexed(row["description"]),
            name_keys=name_keys(row["title"]),
            title_key=_cut(alias_key(row["title"]), 500),
        )
        for row in rows
    ]


def decision_entries(ids: Sequence[int]) -> list[SearchEntry]:
    rows = Decision.objects.filter(id__in=ids).values("id", "stable_id", "title", "description")
    return [
        SearchEntry(
            kind=SearchKind.DECISION,
            record_id=row["id"],
            stable_id=row["stable_id"],
            title=row["title"],
            url=_url("pages:decision", row["stable_id"]),
            name_text=indexed(row["title"], row["stable_id"]),
            body_text=indexed(row["description"]),
            name_keys=name_keys(row["title"]),
        )
        for row in rows
    ]


_EVALUATION_FIELDS = (
    "id",
    "stable_id",
    "title",
    "setup",
    "measured_by_name",
    "different_measurement",
    "protocol__title",
    "protocol__stable_id",
    "protocol__metric_unit",
    "dataset__name",
    "dataset__stable_id",
    "dataset__task_key",
    "dataset__suite__name",
    "configuration__name",
    "configuration__short_name",
    "configuration__model_id",
    "source__authors_short",
)


def _evaluation_rows(ids: Iterable[int]) -> tuple[list[dict[str, Any]], dict[int, dict[str, Any]]]:
    rows = list(Evaluation.objects.filter(id__in=ids).values(*_EVALUATION_FIELDS))
    return rows, _models(row["configuration__model_id"] for row in rows)


def _shown(row: dict[str, Any], model: dict[str, Any] | None) -> dict[str, str]:
    """Where an evaluation (or its result) belongs, as its hit shows it."""
    return {
        "protocol_title": row["protocol__title"],
        "protocol_url": _url("pages:protocol", row["protocol__stable_id"]),
        "task_name": row["dataset__name"],
        "task_url": _url("pages:dataset", row["dataset__stable_id"]),
        "model_name": model["name"] if model else "",
        "model_url": _url("pages:model", model["stable_id"] if model else None),
    }


def evaluation_entries(ids: Sequence[int]) -> list[SearchEntry]:
    """Evaluations by title, protocol, task (name, key, suite), configuration, model and its
    aliases, setup and who measured; the hit shows its first values."""
    rows, models = _evaluation_rows(ids)
    values: dict[int, list[str]] = defaultdict(list)
    for evaluation_id, value, unit in (
        Result.objects.filter(evaluation_id__in=[row["id"] for row in rows])
        .order_by("evaluation_id", "stable_id")
        .values_list("evaluation_id", "value", "unit")
    ):
        values[evaluation_id].append(f"{display(cast(Decimal, value))} {unit}")  # an exact decimal, read as one
    entries = []
    for row in rows:
        model = models.get(row["configuration__model_id"])
        shown = values.get(row["id"], [])
        detail = "; ".join(shown[:SHOWN_VALUES]) + (
            f"; {len(shown) - SHOWN_VALUES} more" if len(shown) > SHOWN_VALUES else ""
        )
        entries.append(
            SearchEntry(
                kind=SearchKind.EVALUATION,
                record_id=row["id"],
                stable_id=row["stable_id"],
                title=row["title"],
                url=_url("pages:evaluation", row["stable_id"]),
                detail=_cut(detail, 500),
                evaluation_id=row["id"],
                **_shown(row, model),
                name_text=indexed(row["title"], row["stable_id"]),
                place_text=indexed(
                    row["protocol__title"],
                    row["dataset__name"],
                    row["dataset__task_key"],
                    row["dataset__suite__name"] or "",
                ),
                subject_text=indexed(
                    row["configuration__name"], row["configuration__short_name"], *_model_text(model), whole=True
                ),
                body_text=indexed(
                    row["setup"],
                    row["measured_by_name"],
                    row["different_measurement"],
                    row["source__authors_short"] or "",
                ),
                name_keys=name_keys(row["title"]),
            )
        )
    return entries


def result_entries(ids: Sequence[int]) -> list[SearchEntry]:
    """Results by value (`number`, `exact_value`) and printed text; the hit shows the value with its
    printed digits, unit and task, and (read with the hit) its evaluation's review state."""
    results = list(
        Result.objects.filter(id__in=ids).values("id", "stable_id", "value", "unit", "printed_value", "evaluation_id")
    )
    rows, models = _evaluation_rows({result["evaluation_id"] for result in results})
    evaluations = {row["id"]: row for row in rows}
    entries = []
    for result in results:
        row = evaluations[result["evaluation_id"]]
        value = cast(Decimal, result["value"])  # an exact decimal, read as one
        entries.append(
            SearchEntry(
                kind=SearchKind.RESULT,
                record_id=result["id"],
                stable_id=result["stable_id"],
                title=row["title"],
                url=f"{_url('pages:evaluation', row['stable_id'])}#result-{result['stable_id']}",
                detail=_cut(
                    f"{display(value)} {result['unit']} (printed {result['printed_value']}) · {row['dataset__name']}",
                    500,
                ),
                evaluation_id=row["id"],
                **_shown(row, models.get(row["configuration__model_id"])),
                name_text=indexed(result["printed_value"]),
                number=float(value),
                exact_value=exact_text(value),
            )
        )
    return entries


BUILDERS: dict[str, Callable[[Sequence[int]], list[SearchEntry]]] = {
    SearchKind.MODEL: model_entries,
    SearchKind.CONFIGURATION: configuration_entries,
    SearchKind.DATASET: dataset_entries,
    SearchKind.PROTOCOL: protocol_entries,
    SearchKind.SOURCE: source_entries,
    SearchKind.WORK: work_entries,
    SearchKind.DECISION: decision_entries,
    SearchKind.EVALUATION: evaluation_entries,
    SearchKind.RESULT: result_entries,
}
