"""Template tags for benchmark recipes and jobs, usable from any app's templates (records' pages
include `benchmarks/_protocol_recipes.html`; records itself never imports benchmarks)."""

from __future__ import annotations

from datetime import timedelta

from django import template

from benchmarks.models import BenchmarkJob, Recipe
from benchmarks.parameters import run_command
from reviews.models import ReviewState

register = template.Library()

GPU_WORKER_COMMAND = "celery -A portal worker -Q gpu -c 1 --prefetch-multiplier 1"
_CACHE_ATTRIBUTE = "_benchmark_recipes"


@register.simple_tag
def recipes_for(protocol) -> list[Recipe]:
    """`{% recipes_for protocol as recipes %}`: the protocol's recipes, reviewed first; one query per
    protocol object however often a page asks."""
    recipes = getattr(protocol, _CACHE_ATTRIBUTE, None)
    if recipes is None:
        recipes = sorted(
            Recipe.objects.filter(protocol=protocol).order_by("stable_id"),
            key=lambda recipe: recipe.review_state != ReviewState.SOURCE_CHECKED,
        )
        setattr(protocol, _CACHE_ATTRIBUTE, recipes)
    return recipes


@register.simple_tag
def job_for(evaluation) -> BenchmarkJob | None:
    """`{% job_for evaluation as job %}`: the benchmark job that measured an evaluation, if one did."""
    if evaluation is None or evaluation.measured_by != "portal":
        return None
    return BenchmarkJob.objects.filter(evaluation=evaluation).first()


@register.filter
def reviewed_recipes(recipes: list[Recipe]) -> list[Recipe]:
    return [recipe for recipe in recipes if recipe.review_state == ReviewState.SOURCE_CHECKED]


@register.filter
def recipe_command(recipe: Recipe) -> str:
    """The `python -m benchmarks.ia3 ...` line that runs the recipe without the portal."""
    return run_command({**recipe.run_parameters(), "device": "auto"})


@register.simple_tag
def gpu_worker_command() -> str:
    return GPU_WORKER_COMMAND


@register.filter
def review_state_label(state: str) -> str:
    try:
        return ReviewState(state).label.lower()
    except ValueError:
        return "unknown"


@register.filter
def percent(fraction: float | None) -> str:
    return "" if fraction is None else f"{fraction:.0%}"


@register.filter
def seconds_ago(age: timedelta | None) -> str:
    if age is None:
        return ""
    seconds = max(0, int(age.total_seconds()))
    if seconds < 120:
        return f"{seconds} s ago"
    if seconds < 7200:
        return f"{seconds // 60} min ago"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min ago"


@register.filter
def duration(seconds: int | None) -> str:
    if seconds is None:
        return ""
    hours, rest = divmod(int(seconds), 3600)
    minutes = rest // 60
    if hours and minutes:
        return f"{hours} h {minutes} min"
    return f"{hours} h" if hours else f"{minutes} min"
