"""A step whose database went away after it took the run's lease is retried by Celery, and the
retry drives the run. The retry carried the message's first `sent` (the lease stream's version
when the step was asked for); the step had taken the lease since, so the retry found the run
taken since it was sent and did nothing ("moved"): the run waited for the stall sweep, a
minute by default, and was noted stalled. It carries the lease's version as it stands at the
retry now, as a next step's message does."""

from __future__ import annotations

import pytest
from django.db import OperationalError

from runtime.warm import WarmFlight
from services import runs
from services.control import Control
from tasks.runs import advance

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_retry_drives_the_step(monkeypatch):
    run_id = runs.start_run("repo-fix", "first-flight", by="owner")
    sent = Control(run_id).sent_at()
    step = WarmFlight.step
    tries: list[int] = []

    def database_gone_once(self, *args, **kwargs):
        # The database goes away once the step holds the lease (its trouble, not the run's).
        tries.append(1)
        if len(tries) == 1:
            raise OperationalError("database is locked")
        return step(self, *args, **kwargs)

    monkeypatch.setattr(WarmFlight, "step", database_gone_once)
    result = advance.apply(args=(run_id, sent))  # Celery's retry runs here, at once
    assert result.get() == "stepped"
    assert len(tries) == 2
