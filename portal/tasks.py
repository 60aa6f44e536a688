from celery import shared_task
from django.utils import timezone


@shared_task(name="portal.tasks.ping")
def ping(token: str) -> str:
    """Answers with its argument: proves a worker consumes the queue it was sent to."""
    return f"pong:{token}"


@shared_task(name="portal.tasks.worker_heartbeat", ignore_result=True)
def worker_heartbeat() -> None:
    """Sent by beat every half minute; whichever worker runs it proves the queue is being consumed."""
    from portal.models import WorkerHeartbeat

    WorkerHeartbeat.objects.update_or_create(
        worker=worker_heartbeat.request.hostname or "unknown", defaults={"seen_at": timezone.now()}
    )
