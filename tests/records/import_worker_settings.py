"""The portal's settings for a worker the import-job tests watch: a heartbeat (and progress) every fifth of a second."""

from portal.settings import *  # noqa: F403

IMPORT_JOB_HEARTBEAT_SECONDS = 0.2
