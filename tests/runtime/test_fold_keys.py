"""The keys folds make: `folds.key` builds the text of a key made of strings by hand, and it
must be exactly what json.dumps with compact separators gives for any parts (a key stored in a
fold's state is compared with keys made later, by either path)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from runtime import folds

dumps = json.JSONEncoder(separators=(",", ":")).encode

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text()
    | st.sampled_from([math.inf, -math.inf, 1e-7, 2.0**60, -0.0])
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(st.lists(values, min_size=1, max_size=4))
def test_a_key_is_the_json_list_of_its_parts(parts):
    assert folds.key(*parts) == dumps(parts)
    assert folds.unkey(folds.key(*parts)) == json.loads(dumps(parts))


@given(st.lists(st.text(), min_size=1, max_size=4))
def test_a_key_of_strings_is_built_by_hand_as_json_dumps_writes_it(parts):
    assert folds.key(*parts) == dumps(parts)


def test_a_part_json_cannot_hold_is_refused():
    with pytest.raises(TypeError, match="not JSON serializable"):
        folds.key("agent", object())
