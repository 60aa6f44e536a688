"""The project's urls plus the releases' pages and API, as portal/urls.py will mount them."""

from django.urls import include, path

from portal.urls import urlpatterns as portal_urlpatterns

urlpatterns = [
    path("api/v1/", include("releases.api_urls")),
    path("", include("releases.urls")),
    *portal_urlpatterns,
]
