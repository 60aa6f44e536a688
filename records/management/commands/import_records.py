import json
import sys
from decimal import Decimal

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from common.parsers import DuplicateKey, json_load_strict
from records.api import IMPORT_PERMISSIONS
from records.imports import ImportConflict, ImportInvalid, ImportStale, records_import


class Command(BaseCommand):
    help = "Import one paper's records from a JSON document (the docs' import format). All or nothing."

    def add_arguments(self, parser):
        parser.add_argument("file", help="the JSON document, or - for standard input")
        parser.add_argument("--user", required=True, help="the curator the import is recorded under")
        parser.add_argument(
            "--dry-run", action="store_true", help="report what would change, and every conflict; write nothing"
        )
        parser.add_argument(
            "--overwrite",
            action="append",
            default=[],
            metavar="SECTION/STABLE_ID",
            help="take the document's values for this record where it and the portal both changed a field since the last import (repeatable)",
        )

    def handle(self, *args, **options):
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"no user {options['user']!r}")
        if not user.has_perms(IMPORT_PERMISSIONS):
            raise CommandError(f"{user.username} may not import: it needs the curators' add and change permissions")
        try:
            # Numbers with a fraction or exponent as decimals: 0.410 keeps its trailing zero.
            # An object naming a key twice is refused (json would keep the last value).
            if options["file"] == "-":
                document = json_load_strict(sys.stdin, parse_float=Decimal)
            else:
                with open(options["file"], encoding="utf-8") as handle:
                    document = json_load_strict(handle, parse_float=Decimal)
        except OSError as exc:
            raise CommandError(f"cannot read {options['file']}: {exc.strerror}") from None
        except DuplicateKey as exc:
            raise CommandError(f"{options['file']} is refused: {exc}") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise CommandError(f"{options['file']} is not valid JSON: {exc}") from None
        try:
            report = records_import(
                document=document, actor=user, dry_run=options["dry_run"], overwrite=options["overwrite"]
            )
        except ImportStale as stale:
            raise CommandError(stale.errors[0]["message"]) from None
        except ImportConflict as conflict:
            for error in conflict.errors:
                self.stderr.write(f"{error['path']}: {error['message']}")
            raise CommandError(
                f"{len(conflict.errors)} field(s) changed both here and in the document since its last import; {conflict.outcome} "
                "(see --dry-run, and --overwrite SECTION/STABLE_ID to take the document's values)"
            ) from None
        except ImportInvalid as invalid:
            for error in invalid.errors:
                self.stderr.write(f"{error['path']}: {error['message']}")
            raise CommandError(
                f"the document is invalid ({len(invalid.errors)} problem(s)); {invalid.outcome}"
            ) from None
        self.stdout.write(json.dumps(report.as_dict(), indent=2, sort_keys=True, default=str))
