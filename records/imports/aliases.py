"""Configurations matched to models by the names papers print for them.

A configuration the document gives no `model` is matched by its short name, then its name, to a
model alias (records.models.identity.alias_key: case, spacing and punctuation do not count) of the
document's own models or of the catalogue's. The match is the document's reference from then on
(it is planned, merged and written like a written one) and the report lists it under `matched`,
so a dry run shows which model each configuration will name.
"""

from __future__ import annotations

from records.imports.document import Entry, ImportReport
from records.models import ModelAlias, alias_key
from reviews.models import EXCLUDED_STATES


def configurations_matched(*, entries: list[Entry], report: ImportReport) -> None:
    """Set the `model` of each configuration entry that names none and whose printed name is an alias."""
    unmatched = [e for e in entries if e.section.key == "configurations" and not e.references.get("model")]
    if not unmatched:
        return
    names = {
        e.stable_id: [text for text in (e.values.get("short_name"), e.values.get("name")) if text] for e in unmatched
    }
    keys = {alias_key(text) for texts in names.values() for text in texts} - {""}
    known: dict[str, str] = dict(
        ModelAlias.objects.filter(key__in=sorted(keys))
        .exclude(review_state__in=EXCLUDED_STATES)  # an excluded alias names nothing
        .values_list("key", "model__stable_id")
    )
    for entry in entries:  # the document's own aliases win over the catalogue's
        if entry.section.key == "model_aliases" and entry.references.get("model"):
            known[alias_key(entry.values.get("alias") or "")] = entry.references["model"]
    for entry in unmatched:
        for text in names[entry.stable_id]:
            model = known.get(alias_key(text))
            if model:
                entry.references["model"] = model
                report.matched[entry.stable_id] = {"model": model, "alias": text}
                break
