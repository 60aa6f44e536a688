"""`{{ value|json_ld }}`: a JSON-LD block for the page's head, as a template writes it.

The JSON is escaped for a <script> element (<, > and & as \\u escapes, as Django's json_script does),
so no text in the data can close the element; the browser does not run it (a data block)."""

from __future__ import annotations

import json

from django import template
from django.core.serializers.json import DjangoJSONEncoder
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

_SCRIPT_ESCAPES = {ord(">"): "\\u003E", ord("<"): "\\u003C", ord("&"): "\\u0026"}


@register.filter
def json_ld(value: object) -> SafeString:
    text = json.dumps(value, cls=DjangoJSONEncoder, ensure_ascii=False, sort_keys=True).translate(_SCRIPT_ESCAPES)
    return format_html('<script type="application/ld+json">{}</script>', mark_safe(text))  # noqa: S308
