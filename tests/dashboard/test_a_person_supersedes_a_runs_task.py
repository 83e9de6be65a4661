"""Every team's run serves an intent a person can supersede through the API: the run's task,
`task-<run>`. Superseded while the coder works, solo's delivery is refused at the gate."""

from __future__ import annotations

import pytest

from journal_store.journal import DjangoJournal
from runtime.events import IntentCarried, MutationRefused
from services import runs, steps
from tests.dashboard.conftest import drive

pytestmark = pytest.mark.django_db


def test_a_reviewer_supersedes_a_solo_runs_task_and_its_delivery_is_refused(api):
    run_id = runs.start_run("solo", "solo-fix")
    journal = DjangoJournal()
    while not any(isinstance(r.event, IntentCarried) for r in journal.read(f"run-{run_id}")):
        assert steps.drive_step(run_id, "test") == "stepped"

    intent = api.get(f"/api/intents/task-{run_id}").json()
    assert intent["version"] == 1 and intent["history"][0]["by"] == "harness"
    change = {"statement": "leave the parser alone", "reason": "release freeze", "version": 1}
    done = api.post(f"/api/intents/task-{run_id}", change, content_type="application/json")
    assert done.status_code == 200, done.content
    assert done.json()["version"] == 2

    assert drive(run_id) == "escalated"
    refused = [
        r.event for r in journal.read(f"run-{run_id}") if isinstance(r.event, MutationRefused)
    ]
    assert [(e.check, e.held, e.current) for e in refused] == [("intent", 1, 2)]
