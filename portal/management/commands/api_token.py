"""`manage.py api_token USERNAME [--rotate | --revoke]`: make a user's API token and print its key.

Curators, release managers and benchmark operators have no admin page for tokens, so whoever runs
the portal hands them out with this command: the token authenticates as that user, with that user's
permissions. Tokens are stored hashed (`portal.tokens`): the key is printed once, when it is made. A
user who has a token is refused (with when it was made and how its key starts); `--rotate` makes a
new one (the old one stops working at once); `--revoke` deletes it.
"""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from portal.tokens import TokenExists, api_token_create, api_token_revoke


class Command(BaseCommand):
    help = "Make a user's API token (Authorization: Token <key>) and print its key, shown only this once."

    def add_arguments(self, parser):
        parser.add_argument("username")
        action = parser.add_mutually_exclusive_group()
        action.add_argument("--rotate", action="store_true", help="replace the token; the old one stops working")
        action.add_argument("--revoke", action="store_true", help="delete the token")

    def handle(self, *args, username: str, rotate: bool, revoke: bool, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no user named {username!r}")
        if revoke:
            revoked = api_token_revoke(user=user)
            self.stdout.write(f"token of {username}: {'revoked' if revoked else 'there was none'}")
            return
        if not user.is_active:
            raise CommandError(f"user {username!r} is inactive: no token for it")
        try:
            key = api_token_create(user=user, replace=rotate)
        except TokenExists as exists:
            raise CommandError(f"{exists.message} (--rotate)") from None
        self.stderr.write(
            f"new token of {username}, shown only now: send it as the header `Authorization: Token <key>`"
        )
        self.stdout.write(key)
