"""The portal's URLs plus a bare Django view that returns fixed bytes (bench/api_throughput.py)."""

import os

from django.http import HttpResponse
from django.urls import include, path

BODY = open(os.environ["BENCH_BODY_FILE"], "rb").read() if os.environ.get("BENCH_BODY_FILE") else b""


def bare(request):
    return HttpResponse(BODY, content_type="application/json")


urlpatterns = [path("bench/bare/", bare), path("", include("portal.urls"))]
