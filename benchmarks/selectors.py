"""Read queries of benchmarks' data, for its own pages and parts and for the apps above it (releases)."""

from __future__ import annotations

from collections.abc import Collection

from benchmarks.models import BenchmarkJob, Recipe
from records.models import Evaluation, MeasuredBy, Protocol
from reviews.models import ReviewState

_CACHE_ATTRIBUTE = "_benchmark_recipes"


def reviewed_recipe_protocols(protocol_stable_ids: Collection[str]) -> set[str]:
    """Of the given protocols, those with a reviewed (source-checked) recipe (the coverage page's and the
    release's "has a reviewed recipe" column)."""
    return set(
        Recipe.objects.filter(
            protocol__stable_id__in=list(protocol_stable_ids), review_state=ReviewState.SOURCE_CHECKED
        )
        .values_list("protocol__stable_id", flat=True)
        .distinct()
    )


def recipes_for(protocol: Protocol) -> list[Recipe]:
    """The protocol's recipes, reviewed first; one query per protocol object however often a page asks."""
    recipes = getattr(protocol, _CACHE_ATTRIBUTE, None)
    if recipes is None:
        recipes = sorted(
            Recipe.objects.filter(protocol=protocol).order_by("stable_id"),
            key=lambda recipe: recipe.review_state != ReviewState.SOURCE_CHECKED,
        )
        setattr(protocol, _CACHE_ATTRIBUTE, recipes)
    return recipes


def job_for(evaluation: Evaluation | None) -> BenchmarkJob | None:
    """The benchmark job that measured an evaluation, if one did."""
    if evaluation is None or evaluation.measured_by != MeasuredBy.PORTAL:
        return None
    return BenchmarkJob.objects.filter(evaluation=evaluation).first()
