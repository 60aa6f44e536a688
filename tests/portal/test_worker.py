"""The configured broker carries a task to a real worker process and its result back."""

import uuid

import pytest

from portal.tasks import ping

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_it_runs_a_queued_task_in_a_real_worker_process(start_worker):
    start_worker()
    token = uuid.uuid4().hex
    assert ping.delay(token).get(timeout=90) == f"pong:{token}"
