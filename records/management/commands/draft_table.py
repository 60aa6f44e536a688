import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from common.parsers import DuplicateKey, json_load_strict
from records.tables import DraftRequestInvalid, request_read, table_draft


class Command(BaseCommand):
    help = (
        "Draft an import document from a table pasted into FILE (tab- or comma-separated, Markdown, LaTeX or "
        "whitespace-aligned): every value with its locator and quote, dry-run against the catalogue. Prints the "
        "answer the API gives (the document under 'document'); exits non-zero while any problem is left."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="the table's text, or - for standard input")
        parser.add_argument("--source", help="the source: a catalogued stable id, DOI, arXiv id or URL")
        parser.add_argument("--table", help='the table\'s name as a locator, e.g. "Table 2"')
        parser.add_argument(
            "--request",
            metavar="JSON",
            help="a table draft request (docs: the table draft request) with the metric and the choices per column and row",
        )
        parser.add_argument("--document-only", action="store_true", help="print the import document alone")

    def handle(self, *args, **options):
        try:
            text = sys.stdin.read() if options["file"] == "-" else Path(options["file"]).read_text(encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"cannot read {options['file']}: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise CommandError(f"{options['file']} is not UTF-8 text") from None
        data = {}
        if options["request"]:
            try:
                with open(options["request"], encoding="utf-8") as handle:
                    data = json_load_strict(handle)
            except OSError as exc:
                raise CommandError(f"cannot read {options['request']}: {exc.strerror}") from None
            except (DuplicateKey, json.JSONDecodeError) as exc:
                raise CommandError(f"{options['request']} is not a valid request: {exc}") from None
            if not isinstance(data, dict):
                raise CommandError(f"{options['request']} is not a JSON object")
        for name in ("source", "table"):
            if options[name]:
                data[name] = options[name]
        try:
            request = request_read(data, text=text)
        except DraftRequestInvalid as invalid:
            for error in invalid.errors:
                self.stderr.write(f"{error['path']}: {error['message']}")
            raise CommandError(f"the request is invalid ({len(invalid.errors)} problem(s))") from None
        draft = table_draft(request=request, actor=None)
        answer = draft.document if options["document_only"] else draft.as_dict()
        self.stdout.write(json.dumps(answer, indent=2, ensure_ascii=False))
        if draft.problems:
            for problem in draft.problems:
                where = problem.pin.where
                at = (
                    f"row {problem.pin.row}"
                    if where == "row"
                    else f"column {problem.pin.column}"
                    if where == "column"
                    else ""
                )
                at = f"row {problem.pin.row}, column {problem.pin.column}" if where == "cell" else at or "table"
                self.stderr.write(f"{at}: {problem.message}")
            raise CommandError(f"the draft has {len(draft.problems)} problem(s); nothing was imported")
