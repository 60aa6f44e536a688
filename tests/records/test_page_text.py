"""The protocol page's fast paths write what the framework's slow ones write: a value escaped as a
template escapes it, and a facet's query pair as QueryDict.urlencode encodes it."""

from __future__ import annotations

from django.http import QueryDict
from django.utils.html import escape
from django.utils.safestring import mark_safe
from hypothesis import given
from hypothesis import strategies as st

from records.page_html import e
from records.selectors import _encode_pair

TEXT = st.one_of(
    st.text(), st.from_regex(r"[A-Za-z0-9_.~-]*", fullmatch=True), st.sampled_from(["a b", "&", "é", "<x>"])
)


@given(TEXT)
def test_a_value_is_escaped_as_a_template_escapes_it(text):
    assert e(text) == escape(text)
    assert e(len(text)) == escape(len(text))


def test_safe_text_is_written_as_it_is():
    assert e(mark_safe("<b>ok</b>")) == "<b>ok</b>"


@given(key=TEXT.filter(bool), value=TEXT)
def test_a_facet_pair_is_encoded_as_querydict_encodes_it(key, value):
    params = QueryDict(mutable=True)
    params[key] = value
    assert _encode_pair(key, value) == params.urlencode()
