"""Read queries other apps reach through settings (they never import benchmarks)."""

from __future__ import annotations

from collections.abc import Collection

from benchmarks.models import Recipe
from reviews.models import ReviewState


def reviewed_recipe_protocols(protocol_stable_ids: Collection[str]) -> set[str]:
    """Of the given protocols, those with a reviewed (source-checked) recipe: settings.RECIPE_LOOKUP."""
    return set(
        Recipe.objects.filter(protocol__stable_id__in=list(protocol_stable_ids), review_state=ReviewState.SOURCE_CHECKED)
        .values_list("protocol__stable_id", flat=True)
        .distinct()
    )
