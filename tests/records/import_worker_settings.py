"""The portal's settings for a worker the import-job tests watch: a heartbeat (and progress) every
fifth of a second, and write batches small enough that the job's progress is seen between them
(on SQLite the heartbeat's own connection can write only between two batches' transactions)."""

from portal.settings import *  # noqa: F403

IMPORT_JOB_HEARTBEAT_SECONDS = 0.2
IMPORT_WRITE_BATCH_RECORDS = 100
