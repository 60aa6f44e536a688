import datetime

from django.core.management.base import BaseCommand

from benchmarks.seed import seed_recipes
from records.seed import PROTOCOL_ID, SEED_RELEASE_ID, seed_import, seed_record_keys
from releases.services import release_record_external


class Command(BaseCommand):
    help = "Load the seed record page (its records, reviews and release line). Idempotent."

    def handle(self, *args, **options):
        report, transitions = seed_import(actor=None)
        recipes = seed_recipes()
        release, created = release_record_external(
            release_id=SEED_RELEASE_ID,
            release_date=datetime.date.fromisoformat(SEED_RELEASE_ID[:10]),
            # a reader's sentence: the seed's internal page name stays out of public pages
            note=f"The release the published page of protocol {PROTOCOL_ID} was derived from.",
            records=seed_record_keys(),
        )
        created_count = sum(len(ids) for ids in report.created.values())
        updated_count = len([i for ids in report.updated.values() for i in ids])
        self.stdout.write(
            f"seed record: {created_count} created, {updated_count} updated, "
            f"{sum(report.unchanged.values())} unchanged; {transitions} review transitions; "
            f"{sum(created for _recipe, created in recipes)} recipes created; "
            f"release {release.release_id} {'recorded' if created else 'already recorded'}"
        )
