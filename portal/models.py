from django.db import models


class WorkerHeartbeat(models.Model):
    """The last time each Celery worker ran the heartbeat task: /readyz wants a recent one."""

    worker = models.CharField(max_length=255, unique=True)
    seen_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.worker} at {self.seen_at:%Y-%m-%d %H:%M:%S}"
