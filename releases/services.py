"""Services of the releases app."""

from __future__ import annotations

import datetime

from django.db import transaction
from django.utils import timezone

from releases.models import Release, ReleaseRecord, ReleaseStatus


@transaction.atomic
def release_record_external(
    *, release_id: str, release_date: datetime.date, note: str, records: list[tuple[str, str]]
) -> tuple[Release, bool]:
    """Record a release published elsewhere (the seed page's), whose files this portal does not hold.

    Idempotent by release id; returns the release and whether it was created.
    """
    release, created = Release.objects.get_or_create(
        release_id=release_id,
        defaults={
            "release_date": release_date,
            "status": ReleaseStatus.PUBLISHED,
            "is_external": True,
            "note": note,
            "published_at": timezone.now(),
        },
    )
    if created:
        ReleaseRecord.objects.bulk_create(
            ReleaseRecord(release=release, record_type=record_type, stable_id=stable_id) for record_type, stable_id in records
        )
    return release, created
