"""The OpenAPI schema as clients read it: every operation documents the errors every endpoint can
answer, says whether it needs credentials, has a summary of its own, and the schema names the
portal's address, contact and data licence (so generated clients type and document it correctly)."""

from __future__ import annotations

import inspect
from typing import Any

from drf_spectacular.openapi import AutoSchema
from rest_framework import serializers

from common.api import QUERY_BOOLEANS

ERROR_SCHEMA = {
    "type": "object",
    "description": "An error: `detail` gives the reason; a validation error names each field instead.",
    "properties": {"detail": {"type": "string"}},
    "additionalProperties": True,
}
COMMON = {
    "400": "Invalid input or query parameter: the body names each one and what is wrong.",
    "429": "Too many requests: see the Retry-After header.",
}
WRITE = {
    "401": "Not authenticated (send `Authorization: Token <key>`).",
    "403": "Authenticated, but not allowed to do this.",
    "413": "The request body is too large.",
}
DETAIL = {"404": "No record with this stable id."}


def _error(description: str) -> dict:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


#: Query parameters whose empty value is an error, not "no filter".
NOT_EMPTY = frozenset({"cursor", "page_size"})


def _default_beside_one_of(schema: Any) -> None:
    """drf-spectacular writes a blank-allowed field with a pattern as `oneOf: [{pattern, default: ""},
    {maxLength: 0}]`: the default "" sits in the branch it does not match, which a strict validator
    refuses (Source's arxiv_version and commit). The default belongs beside the oneOf."""
    if isinstance(schema, dict):
        for branch in schema.get("oneOf", []):
            if isinstance(branch, dict) and "default" in branch and "pattern" in branch:
                schema.setdefault("default", branch.pop("default"))
        for value in schema.values():
            _default_beside_one_of(value)
    elif isinstance(schema, list):
        for value in schema:
            _default_beside_one_of(value)


def add_error_responses(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    _default_beside_one_of(result.get("components", {}).get("schemas", {}))
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            operation.setdefault("security", [])  # none: anyone may call it (PortalAutoSchema.get_auth)
            for parameter in operation.get("parameters", []):
                if parameter["in"] == "query" and parameter["name"] not in NOT_EMPTY:
                    parameter["allowEmptyValue"] = True  # a list filter left empty filters nothing

            responses = operation.setdefault("responses", {})
            extra = dict(COMMON)
            if method in {"post", "put", "patch", "delete"}:
                extra.update(WRITE)
            if "{" in path:
                extra.update(DETAIL)
            if method == "get" and operation.get("security"):
                extra.update({code: WRITE[code] for code in ("401", "403")})  # a read that needs permission
            if method == "get":
                responses.setdefault(
                    "304", {"description": "Not modified: your copy (If-None-Match / If-Modified-Since) is current."}
                )
            for code, description in extra.items():
                responses.setdefault(code, _error(description))
    return result


def add_client_aids(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """The portal's address (`servers`, from PORTAL_SITE_URL when set), who to ask (`contact`) and the
    data licence (`info.license`); every boolean query parameter's spellings named for generators."""
    from django.conf import settings

    from common.licences import data_licence

    licence = data_licence()
    info = result.setdefault("info", {})
    info["license"] = {"name": f"{licence.name} ({licence.spdx_id})", "url": licence.url}
    contact: dict[str, str] = {"name": settings.PORTAL_SITE_NAME}
    if settings.PORTAL_SITE_URL_SET:
        contact["url"] = settings.PORTAL_SITE_URL
        result["servers"] = [{"url": settings.PORTAL_SITE_URL, "description": settings.PORTAL_SITE_NAME}]
    if settings.PORTAL_CONTACT_EMAIL:
        contact["email"] = settings.PORTAL_CONTACT_EMAIL
    info["contact"] = contact
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                schema = parameter.get("schema", {})
                if sorted(schema.get("enum", [])) == sorted(QUERY_BOOLEANS):
                    schema["x-enum-varnames"] = [QUERY_BOOLEAN_NAMES[value] for value in schema["enum"]]
    return result


#: Names for the boolean spellings (QUERY_BOOLEANS) where a generator makes an enum of them: without
#: them "true" and "True" both become TRUE.
QUERY_BOOLEAN_NAMES = {
    "true": "TRUE",
    "false": "FALSE",
    "True": "TRUE_CAPITALISED",
    "False": "FALSE_CAPITALISED",
    "1": "ONE",
    "0": "ZERO",
}


#: The summary of each action of a record's endpoint, from its model's names.
ACTION_SUMMARIES = {
    ("list", "GET"): "List {plural}",
    ("retrieve", "GET"): "Read one {noun}",
    ("create", "POST"): "Create {a} {noun}",
    ("update", "PUT"): "Replace {a} {noun}",
    ("partial_update", "PATCH"): "Change some fields of {a} {noun}",
    ("transitions", "GET"): "List the review transitions you may apply to {a} {noun}",
    ("transitions", "POST"): "Apply a review transition to {a} {noun}",
    ("events", "GET"): "Read {a} {noun}'s review log",
}


class PortalAutoSchema(AutoSchema):
    """drf-spectacular's schema, with what generated clients need: an operation anyone may call says so
    with `security: []` (openapi-python-client reads any entry there, even `{}`, as "credentials
    required"), and each operation has a summary of its own and a description of its own view."""

    def get_auth(self) -> list[dict[str, list[str]]]:
        auths = super().get_auth()
        if {} in auths or (self.method == "GET" and self._anonymous_may_read()):
            return []  # drf-spectacular writes no security; add_error_responses writes `[]`
        return auths

    def _map_basic_serializer(self, serializer: Any, direction: str) -> dict[str, Any]:
        """A record's answer sends every field (null where empty): its schema requires them all, so a
        generated client types them as sent, not as "maybe unset". A serializer that leaves a field out
        for some readers names it in `omitted_sometimes`."""
        schema = super()._map_basic_serializer(serializer, direction)
        if direction == "response" and isinstance(serializer, serializers.ModelSerializer):
            omitted = set(getattr(serializer, "omitted_sometimes", ()))
            required = [name for name in schema.get("properties", {}) if name not in omitted]
            if required:
                schema["required"] = required
        return schema

    def get_summary(self) -> str | None:
        action = getattr(self.view, "action", None)
        model = getattr(getattr(self.view, "queryset", None), "model", None)
        template = ACTION_SUMMARIES.get((action or "", self.method))
        if template is None or model is None:
            return None  # the view's own extend_schema(summary=...) says it
        noun = str(model._meta.verbose_name)
        return template.format(
            noun=noun, plural=str(model._meta.verbose_name_plural), a="an" if noun[0] in "aeiou" else "a"
        )

    def get_description(self) -> str:  # type: ignore[override]  # drf-spectacular's signature, not DRF's
        """The action's own docstring, or the view's: its class's or a base's, never a mixin's (which
        describes the mixin, and had put the review actions' text on every operation of a record)."""
        action = getattr(self.view, getattr(self.view, "action", None) or self.method.lower(), None)
        own = inspect.getdoc(action) if action is not None and action.__doc__ else ""
        if own:
            return own
        for cls in type(self.view).__mro__:
            if cls.__module__.split(".")[0] in ("rest_framework", "django", "builtins"):
                break
            if cls.__doc__ and not cls.__name__.endswith("Mixin"):
                return inspect.cleandoc(cls.__doc__)
        return ""

    def _anonymous_may_read(self) -> bool:
        from django.contrib.auth.models import AnonymousUser
        from rest_framework.request import Request
        from rest_framework.test import APIRequestFactory

        request = Request(APIRequestFactory().get("/"))
        request.user = AnonymousUser()
        return all(permission.has_permission(request, self.view) for permission in self.view.get_permissions())
