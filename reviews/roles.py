"""The roles: groups with the permissions each may use. Nobody outside them writes."""

from __future__ import annotations

from dataclasses import dataclass

from common.types import Actor

CATALOGUE_MODELS = (
    "source",
    "dataset",
    "area",
    "context",
    "protocol",
    "limitation",
    "configuration",
    "evaluation",
    "result",
    "evidencerow",
    "baselinerole",
    "decision",
    "work",
    "genomicmodel",
    "modelalias",
    "taskequivalence",
)


def _catalogue(*actions: str) -> tuple[str, ...]:
    return tuple(f"records.{action}_{model}" for model in CATALOGUE_MODELS for action in actions)


@dataclass(frozen=True)
class Role:
    group: str
    label: str  # how public pages name the actor instead of a person's name
    permissions: tuple[str, ...]


CURATORS = Role(
    group="Curators",
    label="curator",
    permissions=_catalogue("view", "add", "change")
    + (
        "reviews.check_source",
        "reviews.exclude_record",
        "reviews.reinstate_record",
        "reviews.reopen_record",
        "reviews.view_reviewevent",
        "corrections.view_correction",
        "corrections.moderate_correction",
        # Recipes are reviewed like catalogue records ("source checked": parameters checked against the source).
        "benchmarks.view_recipe",
        "benchmarks.change_recipe",
        "benchmarks.view_benchmarkjob",
    ),
)
RELEASE_MANAGERS = Role(
    group="Release managers",
    label="release manager",
    permissions=_catalogue("view")
    + (
        "releases.view_release",
        "releases.view_releasefile",
        "releases.view_releaseevent",
        "releases.view_releasefixitycheck",
        "releases.cut_release",
    ),
)
BENCHMARK_OPERATORS = Role(
    group="Benchmark operators",
    label="benchmark operator",
    permissions=_catalogue("view")
    + (
        "benchmarks.view_recipe",
        "benchmarks.add_recipe",
        "benchmarks.change_recipe",
        "benchmarks.view_benchmarkjob",
        "benchmarks.view_jobevent",
        "benchmarks.queue_job",
        "benchmarks.cancel_job",
    ),
)

ROLES: tuple[Role, ...] = (CURATORS, RELEASE_MANAGERS, BENCHMARK_OPERATORS)
SYSTEM_LABEL = "portal"
ADMINISTRATOR_LABEL = "administrator"


def role_label_for(user: Actor) -> str:
    """The public name of the role a user acts in: never the person's name."""
    if user is None:
        return SYSTEM_LABEL
    if user.is_superuser:
        return ADMINISTRATOR_LABEL
    names = set(user.groups.values_list("name", flat=True))
    for role in ROLES:
        if role.group in names:
            return role.label
    return "user"
