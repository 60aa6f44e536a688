"""The record pages: one RecordPage class a public record kind, each at its kind's address."""

from __future__ import annotations

import pytest

from pages.record_pages import RecordPage
from records.models import public_record_kinds
from tests.factories import GenomicModelFactory, WorkFactory


def test_every_public_record_kind_has_one_record_page_and_every_page_one_kind():
    pages = {page.model: page for page in RecordPage.__subclasses__()}
    assert len(pages) == len(RecordPage.__subclasses__())
    assert set(pages) == set(public_record_kinds())


@pytest.mark.django_db
def test_a_record_page_answers_get_and_head_and_refuses_other_methods(client):
    for record in (GenomicModelFactory(), WorkFactory()):
        url = record.get_absolute_url()
        assert client.get(url).status_code == 200
        head = client.head(url)
        assert head.status_code == 200 and head.content == b""
        assert client.post(url).status_code == 405
        assert client.options(url).status_code == 405


@pytest.mark.django_db
def test_a_record_page_of_an_unknown_record_is_404(client):
    assert client.get("/models/no-such-model/").status_code == 404
