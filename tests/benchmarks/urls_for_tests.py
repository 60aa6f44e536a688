"""The project's urls plus the benchmarks' pages and API, mounted as portal/urls.py is to mount them
(only what portal.urls does not mount yet, so this keeps working once it does)."""

from django.urls import get_resolver, include, path

from portal.urls import urlpatterns as portal_urlpatterns

mounted = set(get_resolver("portal.urls").namespace_dict)
for pattern in get_resolver("portal.urls").url_patterns:
    mounted |= set(getattr(pattern, "namespace_dict", {}))

urlpatterns = [
    *([] if "benchmarks-api" in mounted else [path("api/v1/", include("benchmarks.api_urls"))]),
    *([] if "benchmarks" in mounted else [path("benchmarks/", include("benchmarks.urls"))]),
    *portal_urlpatterns,
]
