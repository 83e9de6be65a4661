"""A worker killed during a git command leaves its lock file; the run's next step clears it
and goes on, where every step after failed on it through retries and a dead letter."""

from __future__ import annotations

import os
import time

import pytest
from django.conf import settings

from journal_store.journal import DjangoJournal
from runtime import flight
from services import runs, steps

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow,
    pytest.mark.usefixtures("nowhere"),  # tests/conftest.py: the test drives each step
]


def test_a_lock_left_before_every_step_is_cleared_and_the_run_finishes():
    run_id = runs.start_run("repo-fix", "first-flight")
    dot = settings.WORKSPACES / f"{run_id}.workspace" / ".git"
    outcomes: list[str] = []
    while not outcomes or outcomes[-1] == "stepped":
        if dot.is_dir():  # as a git killed with the last step's worker left it
            (dot / "index.lock").write_bytes(b"")
            then = time.time() - 3600
            os.utime(dot / "index.lock", (then, then))
        outcomes.append(steps.drive_step(run_id, "test"))
        assert len(outcomes) < 200
    assert outcomes[-1] == "done" and "failed-step" not in outcomes
    assert flight.replay(DjangoJournal(), run_id).identical
