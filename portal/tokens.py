"""API tokens, stored hashed: made and shown once, checked by their SHA-256.

A key is 40 random hexadecimal characters (160 bits, as Django REST framework's own tokens), so a
plain SHA-256 of it is as good as a slow password hash: nobody can guess a key from its digest, and
checking a request costs one indexed lookup. `HashedTokenAuthentication` reads the same header as
DRF's `TokenAuthentication` (`Authorization: Token <key>`); the OpenAPI schema names it the same way.
"""

from __future__ import annotations

import hashlib
import logging
import secrets

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed

from common.errors import DomainError
from portal.models import ApiToken

logger = logging.getLogger(__name__)


class TokenExists(DomainError):
    status = 409
    code = "token_exists"


def token_digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def api_token_create(*, user: User, replace: bool = False) -> str:
    """Make `user`'s API token and return its key, the only time it is ever seen. A user has one
    token: with `replace`, a new one replaces it (the old key stops working at once); without, a user
    who has one is refused (TokenExists)."""
    with transaction.atomic():
        locked = User.objects.select_for_update().get(pk=user.pk)
        existing = ApiToken.objects.filter(user=locked).first()
        if existing is not None and not replace:
            raise TokenExists(
                f"{user.username} has a token already (made {existing.created:%Y-%m-%d}, starting "
                f"{existing.prefix}); a key is shown only when it is made: replace it to get a new one",
                field="user",
            )
        if existing is not None:
            existing.delete()
        key = secrets.token_hex(20)
        ApiToken.objects.create(user=locked, digest=token_digest(key), prefix=key[:8], created=timezone.now())
    logger.info("API token %s… made for %s%s", key[:8], user.username, " (replacing the old one)" if existing else "")
    return key


def api_token_revoke(*, user: User) -> bool:
    """Delete `user`'s API token; whether there was one."""
    deleted, _ = ApiToken.objects.filter(user=user).delete()
    if deleted:
        logger.info("API token of %s revoked", user.username)
    return bool(deleted)


class HashedTokenAuthentication(TokenAuthentication):
    """`Authorization: Token <key>`, the key looked up by its digest."""

    def authenticate_credentials(self, key: str):
        token = ApiToken.objects.select_related("user").filter(digest=token_digest(key)).first()
        if token is None:
            raise AuthenticationFailed("Invalid token.")
        if not token.user.is_active:
            raise AuthenticationFailed("User inactive or deleted.")
        return token.user, token
