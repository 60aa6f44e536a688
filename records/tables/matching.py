"""A pasted table's row and column labels matched to the catalogue's models and tasks.

A label matches where its key (records.models.identity.alias_key: case, spacing and punctuation
do not count) is a model's alias or name, or a task's name or task key: that match is taken and
shown with score 100. Any other label is matched by nobody until the curator chooses: the closest
names, scored by rapidfuzz (`fuzz.WRatio` of the names, lower-cased, punctuation as spaces; 0 to 100), are offered, never merged
silently. An excluded alias matches nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rapidfuzz import fuzz, process, utils

from records.models import Dataset, GenomicModel, ModelAlias, alias_key
from reviews.models import EXCLUDED_STATES

CANDIDATES = 5  # names offered for a label nothing matches exactly
SCORE_CUTOFF = 60


@dataclass(frozen=True)
class Candidate:
    stable_id: str
    name: str  # the name or alias that matched, as catalogued
    score: int


@dataclass
class Match:
    """A label's exact match (or None) and the closest names for a curator to choose from."""

    chosen: Candidate | None = None
    candidates: list[Candidate] = field(default_factory=list)


@dataclass
class Names:
    """Catalogued names by key: key -> [(stable id, name as catalogued)]."""

    by_key: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)  # stable id -> the record's own name
    suites: dict[str, str] = field(default_factory=dict)  # a task's stable id -> its suite's

    def add(self, stable_id: str, name: str) -> None:
        key = alias_key(name)
        if key and (stable_id, name) not in self.by_key.setdefault(key, []):
            self.by_key[key].append((stable_id, name))

    def match(self, label: str) -> Match:
        key = alias_key(label)
        exact = {stable_id: name for stable_id, name in self.by_key.get(key, [])}
        if len(exact) == 1:
            stable_id, name = next(iter(exact.items()))
            return Match(chosen=Candidate(stable_id, name, 100), candidates=[Candidate(stable_id, name, 100)])
        scored: dict[str, Candidate] = {}
        texts = [(stable_id, name) for pairs in self.by_key.values() for stable_id, name in pairs]
        found = process.extract(
            label,
            [name for _, name in texts],
            scorer=fuzz.WRatio,
            processor=utils.default_process,
            limit=CANDIDATES * 3,
        )
        for _, score, index in found:
            stable_id, name = texts[index]
            if score >= SCORE_CUTOFF and stable_id not in scored:
                scored[stable_id] = Candidate(stable_id, name, round(score))
        return Match(candidates=sorted(scored.values(), key=lambda c: (-c.score, c.stable_id))[:CANDIDATES])


def model_names() -> Names:
    """Every catalogued model by its name and its aliases (excluded aliases left out)."""
    names = Names()
    for stable_id, name in GenomicModel.objects.filter(merged_into=None).values_list("stable_id", "name"):
        names.add(stable_id, name)
        names.titles[stable_id] = name
    aliases = ModelAlias.objects.exclude(review_state__in=EXCLUDED_STATES).filter(model__merged_into=None)
    for stable_id, alias in aliases.values_list("model__stable_id", "alias"):
        names.add(stable_id, alias)
    return names


def alias_owners(keys: set[str]) -> dict[str, str]:
    """Which model holds each of these alias keys (excluded aliases name nothing)."""
    rows = ModelAlias.objects.filter(key__in=sorted(keys)).exclude(review_state__in=EXCLUDED_STATES)
    return dict(rows.values_list("key", "model__stable_id"))


def task_names(*, suite: str = "") -> Names:
    """Every catalogued task (a dataset of a suite) by its name and task key; only `suite`'s where given."""
    names = Names()
    tasks = Dataset.objects.exclude(suite=None)
    if suite:
        tasks = tasks.filter(suite__stable_id=suite)
    for stable_id, name, key, suite_id in tasks.values_list("stable_id", "name", "task_key", "suite__stable_id"):
        names.titles[stable_id] = name
        names.suites[stable_id] = suite_id
        names.add(stable_id, name)
        if key:
            names.add(stable_id, key)
    return names
