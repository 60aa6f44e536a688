from django.core.management.base import BaseCommand, CommandError

from records.examples import example_paths, examples_load
from records.imports import ImportInvalid


class Command(BaseCommand):
    help = (
        "Load the demo content: real papers' benchmark tables curated in data/examples/ (imported in file-name order "
        "after the seed, source checked, with their documents' reasoned exclusions). Idempotent."
    )

    def handle(self, *args, **options):
        try:
            report = examples_load()
        except ImportInvalid as invalid:
            for error in invalid.errors:
                self.stderr.write(f"{error['path']}: {error['message']}")
            raise CommandError(
                f"an example document could not be imported ({len(invalid.errors)} problem(s)); nothing was written"
            ) from None
        for name, document in report.documents.items():
            created = sum(len(ids) for ids in document.created.values())
            updated = len([i for ids in document.updated.values() for i in ids])
            kept = len([i for ids in document.kept.values() for i in ids])
            self.stdout.write(
                f"{name}: {created} created, {updated} updated, {kept} kept as curated here, {sum(document.unchanged.values())} unchanged"
            )
        self.stdout.write(f"{len(example_paths())} documents; {report.transitions} review transitions")
