"""`manage.py api_token USERNAME [--rotate]`: print a user's API token, creating it if there is none.

Curators, release managers and benchmark operators cannot see the admin's "Auth Token" pages (only a
superuser can, and there any token of anyone can be made), so whoever runs the portal hands out
tokens with this command: the token authenticates as that user, with that user's permissions.
`--rotate` replaces the token (the old one stops working at once); `--revoke` deletes it.
"""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from rest_framework.authtoken.models import Token


class Command(BaseCommand):
    help = "Print a user's API token (Authorization: Token <key>), creating it if needed."

    def add_arguments(self, parser):
        parser.add_argument("username")
        action = parser.add_mutually_exclusive_group()
        action.add_argument("--rotate", action="store_true", help="replace the token; the old one stops working")
        action.add_argument("--revoke", action="store_true", help="delete the token")

    @transaction.atomic
    def handle(self, *args, username: str, rotate: bool, revoke: bool, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no user named {username!r}")
        if not user.is_active:
            raise CommandError(f"user {username!r} is inactive: no token for it")
        if revoke or rotate:
            deleted, _ = Token.objects.filter(user=user).delete()
            if revoke:
                self.stdout.write(f"token of {username}: {'revoked' if deleted else 'there was none'}")
                return
        token, created = Token.objects.get_or_create(user=user)
        state = "new" if created else "existing"
        self.stderr.write(f"{state} token of {username}; send it as the header `Authorization: Token <key>`")
        self.stdout.write(token.key)
