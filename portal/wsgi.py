import os
import sys

from django.core.exceptions import ImproperlyConfigured
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")

try:
    application = get_wsgi_application()
except ImproperlyConfigured as exc:
    print(f"configuration error: {exc}", file=sys.stderr)
    sys.exit(2)
