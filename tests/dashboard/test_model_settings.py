"""A malformed model setting stops the server at start, naming the setting and the value,
rather than failing the first run that asks a model."""

from __future__ import annotations

import pytest

from tests.startup import refused


@pytest.mark.parametrize(
    ("name", "value", "said"),
    [
        ("MINUTES_MODEL_MAX_TOKENS", "plenty", "a positive whole number of tokens, not 'plenty'"),
        ("MINUTES_MODEL_MAX_TOKENS", "-1", "a positive whole number of tokens, not '-1'"),
        ("MINUTES_MODEL_TIMEOUT", "soon", "a number of seconds, not 'soon'"),
    ],
)
def test_a_bad_model_setting_stops_the_server_naming_it(name, value, said):
    assert f"ImproperlyConfigured: {name} must be {said}" in refused(**{name: value})
