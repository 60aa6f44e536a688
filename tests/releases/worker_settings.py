"""The portal's settings for a worker that a test kills mid-build: a slow build with tiny chunks."""

from portal.settings import *  # noqa: F403

RELEASE_BUILD_CHUNK_ROWS = 4
RELEASE_BUILD_CHUNK_DELAY = 0.2
RELEASE_STALE_AFTER_SECONDS = 3
RELEASE_MAX_ATTEMPTS = 3
