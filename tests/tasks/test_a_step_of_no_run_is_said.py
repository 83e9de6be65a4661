"""A step asked of a run with no journal (a message naming no run, or a worker pointed at
another database than the server that started the run) does nothing and says so in the
worker's log, naming the run and the database it looked in; it answered "missing" and said
nothing, so a worker on the wrong database left every run waiting without a word."""

from __future__ import annotations

import logging

import pytest

from services import steps

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("run_id", ["r-0123456789ab", "r-\x1b[31mred"])
def test_the_step_does_nothing_and_says_so(run_id, caplog):
    with caplog.at_level(logging.WARNING, logger="services.steps"):
        assert steps.drive_step(run_id, "test") == "missing"
    [said] = [r.getMessage() for r in caplog.records if r.name == "services.steps"]
    assert repr(run_id) in said and "no journal" in said
    assert "\x1b" not in said
