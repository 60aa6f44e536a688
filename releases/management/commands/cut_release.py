"""manage.py cut_release --user USERNAME [--note TEXT]: cut a release as a named release manager."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from releases.services import BuildInProgress, NothingChanged, ReleaseError, release_cut


class Command(BaseCommand):
    help = (
        "Cut a release as the named user (a release manager); a worker on the releases queue builds it. "
        "Exits 0 when cut or when nothing changed since the last published release (and then creates nothing); "
        "1 when refused."
    )

    def add_arguments(self, parser):
        parser.add_argument("--user", required=True, help="Username of the release manager cutting the release.")
        parser.add_argument("--note", default="", help="A note shown with the release.")

    def handle(self, *args, user: str, note: str, **options):
        actor = get_user_model().objects.filter(username=user).first()
        if actor is None:
            raise CommandError(f"no user {user!r}")
        try:
            release = release_cut(actor=actor, note=note)
        except NothingChanged as exc:
            self.stdout.write(f"{exc.message}.")
            return
        except BuildInProgress as exc:
            raise CommandError(exc.message) from None
        except ReleaseError as exc:
            raise CommandError(f"{user}: {exc.message}") from None
        self.stdout.write(
            f"release #{release.pk} cut by {user} for {release.release_date.isoformat()}; a worker on the releases queue builds it"
        )
