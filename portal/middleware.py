"""Request-level guards that run before any view reads the body."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpResponse, JsonResponse


class RequestSizeLimitMiddleware:
    """Refuse a body larger than its path's limit with 413, from the Content-Length header alone.

    Limits are prefixes in settings.REQUEST_BODY_LIMITS (the longest matching prefix wins). A body
    without Content-Length is bounded by DATA_UPLOAD_MAX_MEMORY_SIZE when read.
    """

    def __init__(self, get_response):
        self.get_response = get_response
        self.limits = sorted(settings.REQUEST_BODY_LIMITS.items(), key=lambda item: len(item[0]), reverse=True)

    def __call__(self, request):
        length = request.META.get("CONTENT_LENGTH") or "0"
        try:
            size = int(length)
        except ValueError:
            return self._refuse(request, "Content-Length is not a number", status=400)
        limit = next(limit for prefix, limit in self.limits if request.path.startswith(prefix))
        if size > limit:
            return self._refuse(request, f"request body too large: {size} bytes, the limit here is {limit}", status=413)
        return self.get_response(request)

    @staticmethod
    def _refuse(request, message: str, *, status: int) -> HttpResponse:
        if request.path.startswith("/api/"):
            return JsonResponse({"detail": message}, status=status)
        return HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")
