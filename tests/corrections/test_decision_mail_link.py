"""The decision mail's link, followed: a real worker mails the decision once it commits, its link
made from PORTAL_SITE_URL (here the live test server's address, as bin/serve sets it from
PORTAL_BIND), and the link opens the correction's status page, which shows the decision."""

from __future__ import annotations

import re
import time
from email import message_from_string
from pathlib import Path

import pytest
import requests

from corrections.services import correction_decide, correction_submit
from records.models import Protocol

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def default_queue_empty():
    from portal.celery import app

    with app.connection_for_write() as connection:
        connection.default_channel.queue_purge("default")  # messages an earlier test may have left


def mails_to(folder: Path, addresses: set[str], *, worker, timeout: float = 90) -> dict[str, str]:
    """address -> the body of the mail sent to it, once every address has one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = {}
        for path in folder.glob("*.log") if folder.exists() else []:
            for chunk in path.read_text().split("-" * 79):
                if chunk.strip():
                    message = message_from_string(chunk.strip())
                    found[message["To"]] = message.get_payload(decode=True).decode()
        if addresses <= set(found):
            return found
        time.sleep(0.2)
    raise AssertionError(f"no mail to {addresses} within {timeout} s\n{worker.log()[-4000:]}")


def suggest(protocol: Protocol, *, explanation: str, email: str, ip: str):
    return correction_submit(
        target=protocol,
        field_name="",
        proposed_value="",
        explanation=explanation,
        supporting_source="",
        supporting_locator="",
        contact_email=email,
        ip=ip,
    )


def test_the_decision_mail_links_to_the_status_page_on_the_portals_own_address(
    live_server, seeded, curator, start_worker, default_queue_empty, settings, tmp_path
):
    settings.CORRECTIONS_DIGEST_INTERVAL_SECONDS = 0  # the curators' digest goes now, not in 15 minutes
    folder = tmp_path / "mail"
    worker = start_worker(
        "default",
        env={
            "PORTAL_SITE_URL": live_server.url,  # e.g. http://localhost:41873: not port 8000
            "EMAIL_BACKEND": "tests.corrections.folder_mail.FolderEmailBackend",
            "PORTAL_TEST_MAIL_DIR": str(folder),
        },
    )
    protocol = Protocol.objects.get()
    accepted = suggest(protocol, explanation="The title names the wrong model.", email="a@example.org", ip="192.0.2.1")
    rejected = suggest(protocol, explanation="The run took 30 minutes.", email="r@example.org", ip="192.0.2.2")
    correction_decide(correction=accepted, actor=curator, decision="accept", response="Corrected, thank you.")
    correction_decide(correction=rejected, actor=curator, decision="reject", response="The paper prints 20 minutes.")

    bodies = mails_to(folder, {"a@example.org", "r@example.org"}, worker=worker)
    for address, correction, status, response in [
        ("a@example.org", accepted, "Accepted", "Corrected, thank you."),
        ("r@example.org", rejected, "Rejected", "The paper prints 20 minutes."),
    ]:
        links = re.findall(r"https?://\S+", bodies[address])
        assert links == [f"{live_server.url}/corrections/{correction.token}/"], bodies[address]
        page = requests.get(links[0], timeout=30)
        assert page.status_code == 200
        shown = re.search(r'class="correction-status">([^<]+)<', page.text)
        assert shown is not None and shown.group(1) == status
        assert response in page.text
