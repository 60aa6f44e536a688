"""manage.py search_index_rebuild: the search index built afresh from the catalogue."""

import time

from django.core.management.base import BaseCommand

from records.search_index import search_index_rebuild


class Command(BaseCommand):
    help = (
        "Build the search index afresh from the catalogue, in one transaction (searches meanwhile read the "
        "index as it was). Writes keep the index current themselves; run this after restoring a database "
        "from a dump made without it, or after a change to what the index holds."
    )

    def handle(self, *args, **options):
        started = time.perf_counter()
        entries = search_index_rebuild()
        self.stdout.write(f"search index: {entries} entries in {time.perf_counter() - started:.1f} s")
