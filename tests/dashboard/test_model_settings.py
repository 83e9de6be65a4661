"""A malformed model setting stops the server at start, naming the setting and the value,
rather than failing the first run that asks a model."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    ("name", "value", "said"),
    [
        ("MINUTES_MODEL_MAX_TOKENS", "plenty", "a positive whole number of tokens, not 'plenty'"),
        ("MINUTES_MODEL_MAX_TOKENS", "-1", "a positive whole number of tokens, not '-1'"),
        ("MINUTES_MODEL_TIMEOUT", "soon", "a number of seconds, not 'soon'"),
    ],
)
def test_a_bad_model_setting_stops_the_server_naming_it(name, value, said):
    env = {**os.environ, name: value, "DJANGO_SETTINGS_MODULE": "config.settings"}
    proc = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode != 0
    assert f"ImproperlyConfigured: {name} must be {said}" in proc.stderr
