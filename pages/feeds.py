"""Atom feeds (django.contrib.syndication): `/releases/feed/`, the published releases, and `/feed/`,
the catalogue's records as they are source-checked or excluded; each newest first and at most
FEED_ENTRIES long. Every public page names both (<link rel="alternate"> in base.html)."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, replace

from django.conf import settings
from django.contrib.contenttypes.models import ContentType
from django.contrib.syndication.views import Feed
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.feedgenerator import Atom1Feed

from common.links import absolute_url
from records.models import BaselineRole, CuratedModel, Evaluation, EvidenceRow, Protocol
from releases import selectors as release_selectors
from releases.models import Release
from reviews.models import ReviewEvent, ReviewState

FEED_ENTRIES = 50


class ReleasesFeed(Feed):
    """The published releases, newest release date first, each linking to its page."""

    feed_type = Atom1Feed

    def title(self) -> str:
        return f"{settings.PORTAL_SITE_NAME}: releases"

    def subtitle(self) -> str:
        return "Published releases of the catalogue: checksummed, reproducible bundles, newest first."

    def author_name(self) -> str:
        return settings.PORTAL_SITE_NAME

    def link(self) -> str:
        return reverse("releases:list")

    def feed_url(self) -> str:
        return reverse("releases-feed")

    def items(self) -> QuerySet[Release]:
        return release_selectors.published_releases()[:FEED_ENTRIES]

    def item_title(self, item: Release) -> str:
        return f"Release {item.release_id}"

    def item_description(self, item: Release) -> str:
        made = "recorded from elsewhere" if item.is_external else "built and published here"
        note = f" {item.note}" if item.note else ""
        return f"Release {item.release_id} of {item.release_date.isoformat()}, {made}.{note}"

    def item_link(self, item: Release) -> str:
        return reverse("releases:detail", args=[item.release_id])

    def item_pubdate(self, item: Release) -> datetime.datetime:
        return item.published_at or item.created_at

    def item_updateddate(self, item: Release) -> datetime.datetime:
        return item.published_at or item.created_at


# The record types whose review the feed tells: those with a page, and those a protocol page shows.
FEED_MODELS: tuple[type[CuratedModel], ...] = (Protocol, Evaluation, EvidenceRow, BaselineRole)
FEED_STATES: dict[str, str] = {ReviewState.SOURCE_CHECKED: "source-checked", ReviewState.EXCLUDED: "excluded"}


@dataclass(frozen=True)
class ReviewEntry:
    """One review of the feed: the event, its record, and the record whose page shows it."""

    event: ReviewEvent
    record: CuratedModel
    page: CuratedModel  # the record's own, or its protocol's
    guid: str = ""  # the entry's id: its page's absolute address and the event


def review_entries(*, limit: int | None = None) -> list[ReviewEntry]:
    """The latest `limit` (FEED_ENTRIES) reviews that source-checked or excluded a record of
    FEED_MODELS, newest first (one query, and one per record type); a deleted record's are left out."""
    types = ContentType.objects.get_for_models(*FEED_MODELS)
    models_by_type = {types[model].pk: model for model in FEED_MODELS}
    events = list(
        ReviewEvent.objects.filter(content_type__in=list(types.values()), to_state__in=list(FEED_STATES)).order_by(
            "-created_at", "-id"
        )[: limit or FEED_ENTRIES]
    )
    by_type: dict[int, list[ReviewEvent]] = {}
    for event in events:
        by_type.setdefault(event.content_type_id, []).append(event)
    records: dict[tuple[int, int], CuratedModel] = {}
    for type_id, group in by_type.items():
        for pk, loaded in _records(models_by_type[type_id], [event.object_id for event in group]).items():
            records[(type_id, pk)] = loaded
    entries = []
    for event in events:
        record = records.get((event.content_type_id, event.object_id))
        if record is not None:
            page = record if record.page_url_name else record.protocol  # type: ignore[attr-defined]
            entries.append(ReviewEntry(event=event, record=record, page=page))
    return entries


def _records(model: type[CuratedModel], pks: list[int]) -> dict[int, CuratedModel]:
    """Records of one type by primary key; an evidence row's or baseline role's with its protocol,
    whose page shows it."""
    if model is EvidenceRow:
        return dict(EvidenceRow.objects.select_related("protocol").in_bulk(pks))
    if model is BaselineRole:
        return dict(BaselineRole.objects.select_related("protocol").in_bulk(pks))
    return dict(model._default_manager.in_bulk(pks))


class ReviewsFeed(Feed):
    """The catalogue's records as they are source-checked or excluded, newest first."""

    feed_type = Atom1Feed

    def title(self) -> str:
        return f"{settings.PORTAL_SITE_NAME}: records checked against their sources or excluded"

    def subtitle(self) -> str:
        return (
            "Protocols, evaluations, evidence rows and baseline roles as curators check them against "
            "their sources, word for word, or exclude them from comparison (with the reason), newest first."
        )

    def author_name(self) -> str:
        return settings.PORTAL_SITE_NAME

    def link(self) -> str:
        return reverse("pages:home")

    def feed_url(self) -> str:
        return reverse("feed")

    def get_object(self, request: HttpRequest, *args: object, **kwargs: object) -> HttpRequest:
        return request  # the entries' ids are absolute addresses: the request's host

    def items(self, obj: HttpRequest) -> list[ReviewEntry]:
        return [
            replace(entry, guid=absolute_url(f"{entry.page.get_absolute_url()}#review-{entry.event.pk}", request=obj))
            for entry in review_entries()
        ]

    def item_title(self, item: ReviewEntry) -> str:
        kind = str(item.record._meta.verbose_name).capitalize()
        return f"{kind} “{item.record}” {FEED_STATES[item.event.to_state]}"

    def item_description(self, item: ReviewEntry) -> str:
        kind = str(item.record._meta.verbose_name).capitalize()
        said = f"{kind} {item.record.stable_id} {FEED_STATES[item.event.to_state]}"
        return f"{said}: {item.event.reason}" if item.event.reason else f"{said}."

    def item_link(self, item: ReviewEntry) -> str:
        return item.page.get_absolute_url()

    def item_guid(self, item: ReviewEntry) -> str:
        return item.guid

    item_guid_is_permalink = False

    def item_pubdate(self, item: ReviewEntry) -> datetime.datetime:
        return item.event.created_at

    def item_updateddate(self, item: ReviewEntry) -> datetime.datetime:
        return item.event.created_at
