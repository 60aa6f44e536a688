"""What an import's dry run says of comparison across papers: how each protocol's values will be
compared (the scale they are put on, the protocols they join), and a warning where a protocol's
metric short name, the join key, is new while a similar one is catalogued.

Cross-paper comparison joins protocols on `metric_short_name` and the scale key
(records.rules.units.scale_key): "mcc" printed x 100 and "mcc" printed as a fraction are one table;
"mcc" and "MCC_x100" are two, with no verdict between them. The import cannot know which spelling
the curator meant, so it says so and imports as written.
"""

from __future__ import annotations

import difflib
import re
from collections import defaultdict
from typing import TYPE_CHECKING

from records.models import Protocol, Result
from records.rules.units import Scale, scale_key
from records.values import exact_text

if TYPE_CHECKING:
    from records.imports.planned import ImportPlan

SIMILAR_RATIO = 0.8  # difflib's ratio above which two short names read as one spelled twice


def _folded(short_name: str) -> str:
    """A short name without separators or a scale word ("MCC_x100" -> "mcc")."""
    text = re.sub(r"[^a-z0-9]", "", short_name.lower())
    return re.sub(r"(x100|x1000|pct|percent|permille|fraction)$", "", text) or text


def _similar(short_name: str, name: str, known: dict[str, str]) -> list[str]:
    """The catalogued short names (short name -> metric name) a new one may be another spelling of."""
    found = []
    for other, other_name in known.items():
        if other == short_name:
            continue
        if (
            _folded(other) == _folded(short_name)
            or (name and other_name.casefold() == name.casefold())
            or difflib.SequenceMatcher(None, other, short_name).ratio() >= SIMILAR_RATIO
        ):
            found.append(other)
    return sorted(found)


def comparisons_reported(*, plan: ImportPlan) -> None:
    """Fill the plan's report with how each protocol's values compare, and the join-key warnings."""
    protocols = [(item.entry, item.record) for item in plan.records if isinstance(item.record, Protocol)]
    if not protocols:
        return
    catalogued = list(
        Protocol.objects.values_list("stable_id", "metric_short_name", "metric_name", "metric_unit", "metric_scale")
    )
    known = {short: name for _, short, name, _, _ in catalogued}
    by_key: dict[tuple[str, str], list[str]] = defaultdict(list)
    for stable_id, short, name, unit, scale in catalogued:
        by_key[scale_key(metric=short, scale=scale, unit=unit, metric_names=(name, short))].append(stable_id)
    values: dict[str, dict[str, str]] = defaultdict(dict)
    for item in plan.records:
        record = item.record
        if isinstance(record, Result):
            protocol = getattr(getattr(record, "evaluation", None), "protocol", None)
            if isinstance(protocol, Protocol) and record.value is not None:  # its scale: the document's or its unit's
                values[protocol.stable_id][record.stable_id] = (
                    f"{exact_text(record.value)} {record.unit} -> {exact_text(record.value / protocol.scale_factor)}"
                )
    for entry, record in protocols:
        key = record.comparison_key
        raw = record.metric_scale == Scale.RAW
        plan.report.comparisons[record.stable_id] = {
            "metric": record.metric_short_name,
            "unit": record.metric_unit,
            "scale": record.metric_scale,
            "divided_by": exact_text(record.scale_factor),
            "compared_as": (
                f"{record.metric_short_name} in {record.metric_unit!r}, with the same unit only"
                if raw
                else f"{record.metric_short_name} on the plain scale"
            ),
            "compared_with": sorted(
                {*by_key.get(key, []), *(r.stable_id for _, r in protocols if r.comparison_key == key)}
                - {record.stable_id}
            ),
            "values": values.get(record.stable_id, {}),
        }
        if record.metric_short_name not in known:
            similar = _similar(record.metric_short_name, record.metric_name, known)
            if similar:
                plan.report.warnings.append(
                    {
                        "path": f"{entry.path}.metric.short_name",
                        "message": (
                            f"the metric short name {record.metric_short_name!r} is new, while the catalogue has "
                            f"{', '.join(repr(s) for s in similar)}: protocols are compared across papers only "
                            "where their short names are equal; use one of those if it is the same metric"
                        ),
                    }
                )
