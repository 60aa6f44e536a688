"""/sitemap.xml: every public record page and the site's fixed pages."""

from django.contrib.sitemaps import Sitemap
from django.urls import reverse

from records.models import Configuration, Dataset, Decision, Evaluation, Protocol, Source


class RecordSitemap(Sitemap):
    changefreq = "weekly"

    def __init__(self, model, priority: float):
        self.model, self.priority = model, priority

    def items(self):
        return self.model.objects.order_by("stable_id").only("stable_id", "updated_at")

    def lastmod(self, item):
        return item.updated_at


class PagesSitemap(Sitemap):
    changefreq = "daily"
    priority = 0.6

    def items(self):
        return ["pages:home", "pages:coverage", "pages:search"]

    def location(self, item):
        return reverse(item)


SITEMAPS = {
    "pages": PagesSitemap(),
    "protocols": RecordSitemap(Protocol, 0.9),
    "evaluations": RecordSitemap(Evaluation, 0.5),
    "configurations": RecordSitemap(Configuration, 0.5),
    "datasets": RecordSitemap(Dataset, 0.4),
    "sources": RecordSitemap(Source, 0.4),
    "decisions": RecordSitemap(Decision, 0.4),
}
