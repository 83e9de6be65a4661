"""A run with two dead letters open waits for a person until neither is: a retry (or discard) of
one used to turn its status back to "running" while the other still held it, so the list and
the API said running where the stage said waiting, the reconciler took it for a run nobody
drives (noting a stall and sending it steps that stopped at the other letter again), and a
person's stop or resume was taken as for a driven run.

The case: a repo-fix run whose reviewer keeps rejecting parks its task in the dead-letter queue
(the harness's letter, in the run's stream), and the driver dead-letters its step as well (the
control stream's letter, as services/steps.py writes it for a step that kept dying). A parked
run's step delivered again used to make that second letter itself (tests/tasks/test_driving.py);
stores and imported journals hold runs it made. Every place that shows the run is read at each
moment: the runs read model (as caught up, and rebuilt), the pure views over the journal, the
API, the list, the header, and the dead-letter queue."""

from __future__ import annotations

import pytest
from django.urls import reverse

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import DeadLetter, RunSummary
from runtime import views
from services import letters, runs, steps
from services.control import Control
from tests.dashboard.conftest import api_time, drive, stage_waiting

pytestmark = pytest.mark.django_db


def said(client, run_id: str) -> dict:
    """Status, stage and what is waited for, as each place says them; the runs read model as
    caught up must be what a rebuild gives and what the views of the journal say."""
    projection.catch_up()
    row = RunSummary.objects.get(run_id=run_id)
    column = (row.status, row.stage, row.waiting_for)
    records = DjangoJournal().read_run(run_id)
    point = views.resume_point(records)
    asked = {w["what"] for w in point["waiting_for"]}
    view = (views.status(records), point["stage"], ", ".join(sorted(asked)))
    projection.rebuild(["runs"])
    row = RunSummary.objects.get(run_id=run_id)
    assert (row.status, row.stage, row.waiting_for) == column == view
    api = client.get(f"/api/runs/{run_id}").json()
    listed = [r for r in client.get("/api/runs").json()["items"] if r["run_id"] == run_id]
    api_point = client.get(f"/api/runs/{run_id}/resume-point").json()
    return {
        "column": column,
        "api": (api["status"], api["stage"], api["waiting_for"]),
        "listed": (listed[0]["status"], listed[0]["stage"], listed[0]["waiting_for"]),
        "point": [w["id"] for w in api_point["waiting_for"]],
        "header": client.get(f"/runs/{run_id}/header").content.decode(),
    }


@pytest.fixture
def two_letters(owner, settings) -> tuple[str, str, str]:
    """A run with the harness's letter and the driver's letter open: its id and theirs."""
    run_id = runs.start_run("repo-fix", "reject-loop", by="owner")
    assert drive(run_id) == "dead-lettered"
    harness = f"{run_id}:1"
    starts = settings.MAX_STEP_ATTEMPTS
    control = Control(run_id).dead_letter("the step kept dying", starts, "").letter_id
    assert control == f"{run_id}:control:1"
    open_ = {w["id"] for w in views.resume_point(DjangoJournal().read_run(run_id))["waiting_for"]}
    assert open_ == {harness, control}
    return run_id, harness, control


def test_a_retry_of_one_letter_leaves_the_run_waiting_on_the_other(
    as_reviewer, two_letters, settings
):
    run_id, harness, control = two_letters
    waiting = ("dead-lettered", "waiting", "dead letter")
    found = said(as_reviewer, run_id)
    assert found["column"] == found["api"] == found["listed"] == waiting

    letters.decide_letter(control, "retry", "reviewer", "the worker is fine now")
    found = said(as_reviewer, run_id)
    assert found["column"] == found["api"] == found["listed"] == waiting
    assert found["point"] == [harness]
    assert "dead-lettered: waiting for a person" in found["header"]
    # Since the letter it still waits on was opened, not the decided one.
    opened = DeadLetter.objects.get(pk=harness).created_at
    assert stage_waiting("dead letter", opened) in found["header"]
    assert as_reviewer.get(f"/api/runs/{run_id}").json()["waiting_since"] == api_time(opened)
    # Its reason is the open letter's, not the decided one's.
    assert "rejected" in RunSummary.objects.get(run_id=run_id).reason

    # The open letter can still be decided from the queue, and the header links to it.
    queue = as_reviewer.get(f"/review/dead-letters?run={run_id}").content.decode()
    assert reverse("decide_letter", args=[harness, "retry"]) in queue
    assert reverse("decide_letter", args=[control, "retry"]) not in queue
    assert f"#{harness}" in found["header"]

    # Nobody is meant to drive it: the reconciler leaves it alone, even with no grace at all,
    # and a stop or resume is refused as for any run waiting on its letter.
    settings.STALL_SECONDS = 0
    assert steps.revive_stalled() == []
    with pytest.raises(runs.NothingToChange, match="dead letter"):
        runs.resume(run_id, "owner")
    # The step the retry sent stops at the other letter again; nothing changes.
    assert drive(run_id) == "dead-lettered"
    assert said(as_reviewer, run_id)["column"] == waiting

    # Deciding the last one lets the run go on, from the stage its work stood at.
    letters.decide_letter(harness, "retry", "reviewer", "one more round")
    found = said(as_reviewer, run_id)
    assert found["column"] == found["api"] == found["listed"] == ("running", "fix", "")
    assert found["point"] == []


def test_a_discarded_task_takes_the_run_on_to_its_end_and_it_says_so(as_reviewer, owner, settings):
    """After a person discards the harness's letter the run is driven on to its end without
    that task: it read dead-lettered with nothing left to decide, at the stage the discarded
    work had reached, and the reconciler never looked at it (a lost step left it so)."""
    run_id = runs.start_run("repo-fix", "reject-loop", by="owner")
    assert drive(run_id) == "dead-lettered"
    letters.decide_letter(f"{run_id}:1", "discard", "reviewer", "not worth it")
    found = said(as_reviewer, run_id)
    finishing = ("running", "finishing", "")
    assert found["column"] == found["api"] == found["listed"] == finishing
    assert found["point"] == []
    assert "<dd>finishing without the work a person discarded</dd>" in found["header"]
    row = RunSummary.objects.get(run_id=run_id)
    assert "discarded by reviewer" in row.reason and row.finished_at is None
    # A step is on its way (the discard queued it); should it be lost, the reconciler sends
    # another, as for any run being driven.
    settings.STALL_SECONDS = 0
    assert steps.revive_stalled() == [run_id]
    assert drive(run_id) == "escalated"
    ended = said(as_reviewer, run_id)
    assert ended["column"] == ended["api"] == ended["listed"] == ("discarded", "complete", "")


def test_a_discard_while_another_letter_is_open_waits_on_that_one_then_finishes(
    as_reviewer, two_letters
):
    run_id, harness, control = two_letters
    letters.decide_letter(harness, "discard", "reviewer", "not worth it")
    found = said(as_reviewer, run_id)
    assert found["column"] == ("dead-lettered", "waiting", "dead letter")
    assert found["point"] == [control]
    letters.decide_letter(control, "retry", "reviewer", "the worker is fine now")
    assert said(as_reviewer, run_id)["column"] == ("running", "finishing", "")
    assert drive(run_id) == "escalated"
    assert said(as_reviewer, run_id)["column"] == ("discarded", "complete", "")
