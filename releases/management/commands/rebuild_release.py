"""manage.py rebuild_release ID: rebuild a published release's lost or damaged files from the database."""

from django.core.management.base import BaseCommand, CommandError

from releases.models import Release
from releases.rebuild import DIFFERS, RebuildRefused, release_rebuild


class Command(BaseCommand):
    help = (
        "Rebuild a published release's files from the database into a staging folder, compare every file "
        "with the release's recorded checksums, and reinstate them only if every byte matches. Exits 0 "
        "when reinstated or already intact; 1 with a line per differing file (the catalogue changed since "
        "the release: nothing is installed), or for a release that cannot be rebuilt."
    )

    def add_arguments(self, parser):
        parser.add_argument("release_id", help="The release id, e.g. 2026-10-22-1b7cf027e4f6.")

    def handle(self, *args, release_id: str, **options):
        release = Release.objects.filter(release_id=release_id).first()
        if release is None:
            raise CommandError(f"no release {release_id!r}")
        try:
            report = release_rebuild(release=release)
        except RebuildRefused as exc:
            raise CommandError(str(exc)) from None
        if report.outcome == DIFFERS:
            for line in report.lines:
                self.stderr.write(f"{release.release_id}: {line}")
            raise SystemExit(1)
        for line in report.lines:
            self.stdout.write(line)
