"""The one base of every refused domain operation.

A service raises a subclass of `DomainError`; whoever called it (an API view, a form, an admin
action, a command) turns it into its own answer without knowing which app raised it:
- `code`: a stable machine name ("invalid", "permission_denied", "conflict", ...),
- `message`: one sentence for a person,
- `field`: the input it is about ("non_field_errors" when it is about the whole request),
- `status`: the HTTP status an API answers with.
"""

from __future__ import annotations

NON_FIELD = "non_field_errors"


class DomainError(Exception):
    status: int = 400
    code: str = "invalid"
    default_field: str = NON_FIELD

    def __init__(self, message: str, *, field: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field or self.default_field
        if code is not None:
            self.code = code

    def as_dict(self) -> dict[str, str]:
        """The JSON body an API answers with: the reason under `detail` and under the field it names."""
        body = {"detail": self.message, "code": self.code}
        if self.field != NON_FIELD:
            body[self.field] = self.message
        return body


class Invalid(DomainError):
    status = 400
    code = "invalid"


class Forbidden(DomainError):
    status = 403
    code = "permission_denied"


class Conflict(DomainError):
    status = 409
    code = "conflict"
