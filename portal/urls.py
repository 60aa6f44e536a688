from django.conf import settings
from django.contrib import admin
from django.contrib.sitemaps.views import sitemap
from django.http import HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.urls import include, path

from pages.feeds import ReleasesFeed, ReviewsFeed
from pages.views import robots_txt
from portal.sitemaps import SITEMAPS
from reviews.admin import review_queue_view

# The admin is the portal's curation desk: it carries the portal's name, not "Django administration".
admin.site.site_header = f"{settings.PORTAL_SITE_NAME} curation"
admin.site.site_title = f"{settings.PORTAL_SITE_NAME} curation"
admin.site.index_title = "Catalogue, reviews, releases and benchmark jobs"
# No app list beside every page: the breadcrumbs lead back, and lists and forms get the width.
admin.site.enable_nav_sidebar = False

urlpatterns = [
    path("admin/review-queue/", admin.site.admin_view(review_queue_view), name="review-queue"),
    path("admin/", admin.site.urls),
    # Browsers ask for /favicon.ico on pages that name no icon (the admin's): the same icon as the public pages'.
    # (resolved per request: with the manifest storage the hashed name is known only after collectstatic)
    path("favicon.ico", lambda request: HttpResponsePermanentRedirect(static("favicon.svg"))),
    path("sitemap.xml", sitemap, {"sitemaps": SITEMAPS}, name="sitemap"),
    path("robots.txt", robots_txt, name="robots"),
    path("feed/", ReviewsFeed(), name="feed"),
    path("releases/feed/", ReleasesFeed(), name="releases-feed"),  # before releases' own /releases/<id>/
    path("", include("django_prometheus.urls")),
    path("api/v1/", include("portal.api_urls")),
    path("benchmarks/", include("benchmarks.urls")),
    path("", include("releases.urls")),
    path("", include("corrections.urls")),
    path("", include("pages.urls")),
]


def handler404(request, exception):
    """JSON under /api/, the site's page elsewhere."""
    from django.views.defaults import page_not_found

    from common.api import json_not_found

    return json_not_found(request) if request.path.startswith("/api/") else page_not_found(request, exception)


def handler500(request):
    """A 503 with Retry-After when the exception is a passing fault (raised by a middleware, outside
    `DatabaseUnavailableMiddleware`'s reach); JSON under /api/, the site's page elsewhere."""
    import sys

    from django.views.defaults import server_error

    from common.api import json_server_error
    from portal.middleware import unavailable_response

    unavailable = unavailable_response(request, sys.exc_info()[1])  # Django calls this inside its `except`
    if unavailable is not None:
        return unavailable
    return json_server_error(request) if request.path.startswith("/api/") else server_error(request)
