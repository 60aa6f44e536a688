"""Template tags through which record pages name their release without importing this app."""

from django import template

from releases.models import Release, ReleaseStatus

register = template.Library()


@register.simple_tag
def current_release() -> Release | None:
    """The newest published release: the one public pages are derived from."""
    return Release.objects.filter(status=ReleaseStatus.PUBLISHED).order_by("-release_date", "-id").first()


@register.simple_tag
def releases_containing(record_type: str, stable_id: str) -> list[Release]:
    return list(
        Release.objects.filter(status=ReleaseStatus.PUBLISHED, records__record_type=record_type, records__stable_id=stable_id)
        .order_by("-release_date", "-id")
        .distinct()
    )
