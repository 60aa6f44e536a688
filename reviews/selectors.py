"""Read queries of the review workflow."""

from __future__ import annotations

from django.contrib.contenttypes.models import ContentType
from django.db.models import Model, QuerySet

from reviews.models import ReviewEvent


def review_events(*, record: Model, newest_first: bool = False) -> QuerySet[ReviewEvent]:
    """A record's review log: every transition applied to it (one query)."""
    content_type = ContentType.objects.get_for_model(type(record))
    order = ("-created_at", "-id") if newest_first else ("created_at", "id")
    return (
        ReviewEvent.objects.filter(content_type=content_type, object_id=record.pk)
        .select_related("content_type")
        .order_by(*order)
    )
