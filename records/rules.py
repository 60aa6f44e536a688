"""The unit rule, in Python once: a result's unit is the metric unit of its evaluation's protocol.

`unit_problem` is the only Python check of it; the models' clean() (and so the admin, the API and
every service write), the import's whole-document validation and its batches (`count_off_unit`)
all ask it. The database triggers (records.db_triggers) stay the last line, whichever of the three
rows changes and however it is written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db.models import Count

if TYPE_CHECKING:
    from django.db.models import QuerySet

    from records.models import Result


def unit_problem(*, unit: str | None, metric_unit: str | None, protocol: str | None = None) -> str:
    """Why a result in `unit` cannot be a result of a protocol measured in `metric_unit`, or ""
    when it can (or when the protocol's unit is not known: None). `protocol` names the protocol in
    the message (its stable id, as the import does); without it the message speaks of the
    evaluation's protocol (as a form does)."""
    if metric_unit is None or unit == metric_unit:
        return ""
    whose = "the evaluation's protocol" if protocol is None else f"protocol {protocol!r}"
    return f"must be {metric_unit!r}, the metric unit of {whose}"


def count_off_unit(results: QuerySet[Result], *, metric_unit: str) -> int:
    """How many of `results` break the unit rule against `metric_unit`: one query, grouped by unit,
    each unit judged by `unit_problem` (for a protocol whose unit changes, or an evaluation moved
    to another protocol)."""
    per_unit = results.order_by().values_list("unit").annotate(count=Count("pk"))
    return sum(count for unit, count in per_unit if unit_problem(unit=unit, metric_unit=metric_unit))
