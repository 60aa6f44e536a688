"""Filters of the benchmarks app's own templates (the job page, the recipe lines and run instructions).
They format what a view or a page part already read; none of them queries."""

from __future__ import annotations

from datetime import timedelta

from django import template

from benchmarks.models import Recipe
from benchmarks.parameters import run_command
from reviews.models import ReviewState

register = template.Library()


@register.filter
def reviewed_recipes(recipes: list[Recipe]) -> list[Recipe]:
    return [recipe for recipe in recipes if recipe.review_state == ReviewState.SOURCE_CHECKED]


@register.filter
def recipe_command(recipe: Recipe) -> str:
    """The `python -m benchmarks.ia3 ...` line that runs the recipe without the portal."""
    return run_command({**recipe.run_parameters(), "device": "auto"})


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
