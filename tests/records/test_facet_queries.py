"""A facet's query pair is written as QueryDict.urlencode encodes it (the facets write thousands)."""

from __future__ import annotations

from django.http import QueryDict
from hypothesis import given
from hypothesis import strategies as st

from records.selectors import _encode_pair

TEXT = st.one_of(
    st.text(), st.from_regex(r"[A-Za-z0-9_.~-]*", fullmatch=True), st.sampled_from(["a b", "&", "é", "<x>"])
)


@given(key=TEXT.filter(bool), value=TEXT)
def test_a_facet_pair_is_encoded_as_querydict_encodes_it(key, value):
    params = QueryDict(mutable=True)
    params[key] = value
    assert _encode_pair(key, value) == params.urlencode()
