"""Build the catalogue's bundle in a process of its own and print what it wrote, as JSON.

    python -m tests.releases.build_in_subprocess OUTPUT_DIR YYYY-MM-DD

The test that runs it sets TZ, DJANGO_SETTINGS_MODULE and DATABASE_URL (the test database).
"""

import datetime
import json
import sys
import time
from pathlib import Path

import django


def main() -> None:
    django.setup()
    from django.conf import settings

    from releases.catalogue_rows import bundle_write

    output_dir, release_date = Path(sys.argv[1]), datetime.date.fromisoformat(sys.argv[2])
    result = bundle_write(output_dir=output_dir, release_date=release_date, chunk_size=2)
    json.dump(
        {
            "release_id": result.release_id,
            "bag_dir": str(result.bag_dir),
            "tarball": str(result.tarball),
            "time_zone": settings.TIME_ZONE,
            "local_offset_seconds": -time.timezone,
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
