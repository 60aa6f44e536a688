"""OpenAPI post-processing: every operation documents the errors every endpoint can answer."""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema

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
            for parameter in operation.get("parameters", []):
                if parameter["in"] == "query" and parameter["name"] not in NOT_EMPTY:
                    parameter["allowEmptyValue"] = True  # a list filter left empty filters nothing

            responses = operation.setdefault("responses", {})
            extra = dict(COMMON)
            if method in {"post", "put", "patch", "delete"}:
                extra.update(WRITE)
            if "{" in path:
                extra.update(DETAIL)
            if method == "get" and {} not in operation.get("security", [{}]):
                extra.update({code: WRITE[code] for code in ("401", "403")})  # a read that needs permission
            if method == "get":
                responses.setdefault(
                    "304", {"description": "Not modified: your copy (If-None-Match / If-Modified-Since) is current."}
                )
            for code, description in extra.items():
                responses.setdefault(code, _error(description))
    return result


class PortalAutoSchema(AutoSchema):
    """drf-spectacular's schema, saying which reads need no credentials (the security entry `{}`)."""

    def get_auth(self) -> list[dict[str, list[str]]]:
        auths = super().get_auth()
        if self.method == "GET" and {} not in auths and self._anonymous_may_read():
            auths.append({})
        return auths

    def _anonymous_may_read(self) -> bool:
        from django.contrib.auth.models import AnonymousUser
        from rest_framework.request import Request
        from rest_framework.test import APIRequestFactory

        request = Request(APIRequestFactory().get("/"))
        request.user = AnonymousUser()
        return all(permission.has_permission(request, self.view) for permission in self.view.get_permissions())
