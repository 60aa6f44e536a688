from django.db import models


class WorkerHeartbeat(models.Model):
    """The last time each Celery worker ran the heartbeat task: /readyz wants a recent one."""

    worker = models.CharField(max_length=255, unique=True)
    seen_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.worker} at {self.seen_at:%Y-%m-%d %H:%M:%S}"


class ApiToken(models.Model):
    """A user's API token (`Authorization: Token <key>`), stored as the SHA-256 of its key: a database
    dump or backup hands out nobody's access. The key is shown once, when it is made
    (`manage.py api_token`); `prefix` (its first characters) tells tokens apart in the admin and logs."""

    user = models.OneToOneField("auth.User", on_delete=models.CASCADE, related_name="api_token")
    digest = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=8)
    created = models.DateTimeField()

    def __str__(self) -> str:
        return f"token {self.prefix}… of {self.user}"
