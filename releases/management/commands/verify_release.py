"""manage.py verify_release ID | --all: re-hash every file of published releases and report differences."""

from django.core.management.base import BaseCommand, CommandError

from releases.fixity import release_fixity_check
from releases.models import Release


class Command(BaseCommand):
    help = (
        "Re-hash every file of a published release (or of all of them) against its file table, its bag "
        "manifests and its id. Prints one line per problem; exits 0 when intact, 1 otherwise. An external "
        "release holds no files here: it is reported as such and counts as intact."
    )

    def add_arguments(self, parser):
        parser.add_argument("release_id", nargs="?", help="The release id, e.g. 2026-10-22-1b7cf027e4f6.")
        parser.add_argument("--all", action="store_true", help="Verify every published release.")

    def handle(self, *args, release_id: str | None, all: bool, **options):
        if bool(release_id) == bool(all):
            raise CommandError("name one release id, or --all")
        if all:
            releases = list(Release.objects.published().order_by("release_date", "id"))
        else:
            release = Release.objects.filter(release_id=release_id).first()
            if release is None:
                raise CommandError(f"no release {release_id!r}")
            releases = [release]
        problems = 0
        for release in releases:
            if release.is_external:
                self.stdout.write(
                    f"{release.release_id}: external release; this portal holds none of its files, nothing to verify"
                )
                continue
            if not release.is_published:
                self.stderr.write(f"{release.release_id}: {release.status}, not published")
                problems += 1
                continue
            check = release_fixity_check(release=release)
            if check.intact:
                self.stdout.write(f"{release.release_id}: intact ({check.files_checked} files)")
            else:
                for line in check.problems.splitlines():
                    self.stderr.write(f"{release.release_id}: {line}")
                    problems += 1
        if problems:
            raise SystemExit(1)
