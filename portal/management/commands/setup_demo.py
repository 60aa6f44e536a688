import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand
from django.db import transaction

from reviews.roles import BENCHMARK_OPERATORS, CURATORS, RELEASE_MANAGERS
from reviews.services import roles_ensure

# (username, role group or None for a superuser). Two curators, so the four-eyes rule can be tried.
DEMO_ACCOUNTS = (
    ("curator", CURATORS.group),
    ("curator2", CURATORS.group),
    ("release-manager", RELEASE_MANAGERS.group),
    ("benchmark-operator", BENCHMARK_OPERATORS.group),
    ("admin", None),
)


class Command(BaseCommand):
    help = "Create the role groups and one demo account per role. New passwords are printed once."

    @transaction.atomic
    def handle(self, *args, **options):
        for line in roles_ensure():
            self.stdout.write(f"role {line}")
        User = get_user_model()
        for username, group in DEMO_ACCOUNTS:
            if User.objects.filter(username=username).exists():
                self.stdout.write(f"account {username}: exists, password unchanged")
                continue
            password = secrets.token_urlsafe(12)
            user = User(username=username, is_staff=True, is_superuser=group is None)
            user.set_password(password)
            user.save()
            if group:
                user.groups.add(Group.objects.get(name=group))
            self.stdout.write(
                f"account {username} ({group or 'superuser'}): password {password}  <- shown once, note it now"
            )
