"""gunicorn entry for bench/api_throughput.py: the portal with one extra bare view (bench/api_bench_urls.py)."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")

from django.conf import settings  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402

settings.ROOT_URLCONF = "bench.api_bench_urls"
application = get_wsgi_application()
