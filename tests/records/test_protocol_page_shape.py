"""A suite's protocol page on the demo content opens with what the paper shows (the results and
their matrix before the overview's notes), states nothing its content contradicts, and lists its
evaluations once, in the paged table, not again in full further down."""

from __future__ import annotations

import re

import pytest
from django.core.cache import cache
from django.core.management import call_command

pytestmark = pytest.mark.django_db

GUE = "/protocols/gue-mcc-x100-zhou-2024/"


@pytest.fixture
def demo(seeded):
    call_command("load_examples", stdout=open("/dev/null", "w"))
    cache.clear()


def test_it_opens_a_suite_page_with_the_matrix_before_the_overview(client, demo):
    body = client.get(GUE).content.decode()
    assert body.index('<table class="results matrix">') < body.index('<h2 id="overview">')
    assert "no reviewed comparison panel" not in body  # the matrix below marks the best per task


def test_it_lists_a_large_protocols_evaluations_once_outside_the_paged_table(client, demo):
    body = client.get(GUE).content.decode()
    methods = body[
        body.index('<section aria-labelledby="methods">') : body.index('<section aria-labelledby="limitations">')
    ]
    related = body[body.index('<h3 id="related">') :]
    assert len(re.findall(r'<li><a href="/evaluations/', methods)) == 20
    assert "The first 20 of 270 evaluations" in methods
    assert len(re.findall(r"<li>assessment: ", related)) == 20
    assert "and 250 more evaluations" in related
