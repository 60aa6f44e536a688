"""The catalogue version moves with every change a page or API answer can show, and only with a
committed one: caches keyed by it are never stale."""

from __future__ import annotations

import pytest
from django.db import transaction

from common.versions import CATALOGUE, version_bump, version_current
from records.models import Protocol
from records.services import record_save
from reviews.services import review_transition_apply
from tests.factories import ProtocolFactory

pytestmark = pytest.mark.django_db


def test_a_record_edit_moves_the_catalogue_version(curator):
    protocol = ProtocolFactory()
    before = version_current()
    protocol.title = "A clearer title"
    record_save(record=protocol, actor=curator, changed_fields=["title"])
    after = version_current()
    assert after.number == before.number + 1 and after.changed_at >= before.changed_at
    assert after.key != before.key


def test_a_review_transition_moves_it(curator):
    protocol = ProtocolFactory()
    before = version_current().number
    review_transition_apply(record=protocol, transition="check_source", actor=curator)
    assert version_current().number == before + 1


def test_an_edit_that_is_rolled_back_leaves_it(curator):
    protocol = ProtocolFactory()
    before = version_current().number
    with pytest.raises(RuntimeError), transaction.atomic():
        protocol.title = "Never committed"
        record_save(record=protocol, actor=curator, changed_fields=["title"])
        raise RuntimeError("the caller gives up")
    assert version_current().number == before
    assert Protocol.objects.get(pk=protocol.pk).title != "Never committed"


def test_an_unchanged_save_leaves_it(curator):
    protocol = ProtocolFactory()
    before = version_current().number
    assert record_save(record=protocol, actor=curator, changed_fields=[]) is False
    assert version_current().number == before


@pytest.mark.django_db(transaction=True)  # no test-wide transaction around it
def test_it_refuses_a_bump_outside_the_changes_transaction():
    with pytest.raises(RuntimeError, match="inside the transaction"):
        version_bump(name=CATALOGUE)
