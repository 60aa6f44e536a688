"""/sitemap.xml: every public record page and the site's fixed pages."""

from django.contrib.sitemaps import Sitemap
from django.urls import reverse

from records import models as m


class RecordSitemap(Sitemap):
    changefreq = "weekly"

    def __init__(self, model, url_name: str, priority: float):
        self.model, self.url_name, self.priority = model, url_name, priority

    def items(self):
        return self.model.objects.order_by("stable_id").only("stable_id", "updated_at")

    def location(self, item):
        return reverse(self.url_name, args=[item.stable_id])

    def lastmod(self, item):
        return item.updated_at


class PagesSitemap(Sitemap):
    changefreq = "daily"
    priority = 0.6

    def items(self):
        return ["records:home", "records:coverage", "records:search"]

    def location(self, item):
        return reverse(item)


SITEMAPS = {
    "pages": PagesSitemap(),
    "protocols": RecordSitemap(m.Protocol, "records:protocol", 0.9),
    "evaluations": RecordSitemap(m.Evaluation, "records:evaluation", 0.5),
    "configurations": RecordSitemap(m.Configuration, "records:configuration", 0.5),
    "datasets": RecordSitemap(m.Dataset, "records:dataset", 0.4),
    "sources": RecordSitemap(m.Source, "records:source", 0.4),
    "decisions": RecordSitemap(m.Decision, "records:decision", 0.4),
}
