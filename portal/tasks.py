from celery import shared_task


@shared_task(name="portal.tasks.ping")
def ping(token: str) -> str:
    """Answers with its argument: proves a worker consumes the queue it was sent to."""
    return f"pong:{token}"
