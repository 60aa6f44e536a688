"""Types every app's services share."""

from __future__ import annotations

from typing import TypeAlias

from django.contrib.auth.models import AnonymousUser, User

# Who does something: a signed-in user, the anonymous public, or None for the portal itself (a
# worker, a migration, a command run without --user). Services that need a permission check it.
Actor: TypeAlias = User | AnonymousUser | None


def acting_user(actor: Actor) -> User | None:
    """The user to record as having done something: None for the portal and for the anonymous public
    (whom services refuse before they write anything)."""
    return actor if isinstance(actor, User) else None
