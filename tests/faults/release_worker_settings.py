"""The portal's settings for a releases worker whose database connections a test kills mid-build: a
slow build with tiny chunks, and the sweeper's staleness left at its default, so that only the
build itself can bring the release out of "building" within the test's bound."""

from portal.settings import *  # noqa: F403

RELEASE_BUILD_CHUNK_ROWS = 4
RELEASE_BUILD_CHUNK_DELAY = 0.2
RELEASE_STALE_AFTER_SECONDS = 300
RELEASE_MAX_ATTEMPTS = 3
