"""/sitemap.xml: every public record page (records.models.public_record_kinds: each kind with a
page), the published releases and the site's fixed pages. The search page is left out: its pages are
answers to queries, not documents."""

from django.contrib.sitemaps import Sitemap
from django.urls import reverse

from records.models import CuratedModel, public_record_kinds
from releases.models import Release


class RecordSitemap(Sitemap):
    changefreq = "weekly"

    def __init__(self, model: type[CuratedModel]):
        self.model, self.priority = model, model.page_priority

    def items(self):
        return self.model.objects.order_by("stable_id").only("stable_id", "updated_at")

    def lastmod(self, item):
        return item.updated_at


class ReleaseSitemap(Sitemap):
    """The published releases: a release never changes once published."""

    changefreq = "never"
    priority = 0.8

    def items(self):
        return Release.objects.published().order_by("published_at").only("release_id", "published_at")

    def location(self, item):
        return reverse("releases:detail", args=[item.release_id])

    def lastmod(self, item):
        return item.published_at


class PagesSitemap(Sitemap):
    changefreq = "daily"
    priority = 0.6

    def items(self):
        return ["pages:home", "pages:coverage", "releases:list"]

    def location(self, item):
        return reverse(item)


SITEMAPS = {
    "pages": PagesSitemap(),
    **{model._meta.verbose_name_plural.replace(" ", "-"): RecordSitemap(model) for model in public_record_kinds()},
    "releases": ReleaseSitemap(),
}
