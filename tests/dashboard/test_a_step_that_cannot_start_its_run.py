"""A step that cannot start its run parks it in a dead letter naming what is wrong, and writes
nothing else.

Its settings (TeamStarted's config) that do not validate: the step logged "not driven" and
answered "refused", so the work vanished (no letter, nothing on the queue page) and the
stall sweep sent it again at every beat to be refused the same way. A row of the run's
control stream no event model reads: the step's look for an open letter read the stream
whole and raised out of the task (Celery retries only database trouble), and the sweep's own
look raised out of its round, so no run after it in that round was revived either. The
control stream says whether to drive the run at all (a stop, a letter and its decision), so
the step does not read past the row: it parks the run for a person, naming the row."""

from __future__ import annotations

import json
import time

import pytest

from journal_store import projection
from journal_store.models import StoredEvent
from runtime import streams
from runtime.events import DeadLettered
from services import letters, runs, steps
from services.control import Control

pytestmark = pytest.mark.django_db


def started() -> str:
    """A repo-fix run one step in, parked nowhere (a cold step next)."""
    run_id = runs.start_run("repo-fix", "first-flight", by="owner")
    assert steps.drive_step(run_id, "test") == "stepped"
    steps.WARM.take(run_id, 2**40)  # what the next step finds parked: nothing
    return run_id


def written(run_id: str) -> list[tuple[str, int, str]]:
    rows = StoredEvent.objects.filter(run_id=run_id).exclude(stream__startswith="lease-")
    return sorted(rows.values_list("stream", "version", "kind"))


def new_rows(before: list, after: list) -> list[tuple[str, int, str]]:
    return [w for w in after if w not in before]


def letter_of(run_id: str) -> dict:
    rows = StoredEvent.objects.filter(stream=streams.control(run_id), kind="DeadLettered")
    return json.loads(rows.order_by("-version").first().data)


def with_bad_settings() -> str:
    run_id = started()
    row = StoredEvent.objects.get(stream=streams.journal(run_id), version=1)
    data = json.loads(row.data)
    data["config"] = {**data["config"], "max_turns": "many"}
    row.data = json.dumps(data)
    row.save()
    return run_id


def with_bad_control_row() -> tuple[str, StoredEvent]:
    run_id = started()
    Control(run_id).request_resume("owner", "carry on")  # a row of its control stream
    projection.catch_up()  # folded as it was written; rewritten since, behind the journal
    row = StoredEvent.objects.get(stream=streams.control(run_id), kind="ResumeRequested")
    row.data = json.dumps({**json.loads(row.data), "by": {"<b>x</b>": 1}})
    row.save()
    return run_id, row


def test_settings_that_do_not_validate_park_the_run_naming_them(as_owner):
    run_id = with_bad_settings()
    before = written(run_id)
    assert steps.drive_step(run_id, "test") == "dead-lettered"
    control = streams.control(run_id)
    assert new_rows(before, written(run_id)) == [(control, 1, "DeadLettered")]
    letter = letter_of(run_id)
    assert run_id in letter["reason"] and "max_turns" in letter["reason"]

    # Delivered again, or swept: parked on the one letter.
    after = written(run_id)
    assert steps.drive_step(run_id, "test") == "dead-lettered"
    assert steps.revive_stalled() == []
    assert written(run_id) == after
    page = as_owner.get("/review/dead-letters").content.decode()
    assert run_id in page and "max_turns" in page

    # A retry with the settings still wrong parks it again; a discard ends it.
    letters.decide_letter(letter["letter_id"], "retry", "owner", "try again")
    assert steps.drive_step(run_id, "test") == "dead-lettered"
    second = Control(run_id).open_letter()
    assert second is not None and second.letter_id != letter["letter_id"]
    letters.decide_letter(second.letter_id, "discard", "owner", "the settings are lost")
    assert steps.drive_step(run_id, "test") == "escalated"


def test_a_control_row_no_event_model_reads_parks_the_run_naming_it(as_owner):
    run_id, row = with_bad_control_row()
    before = written(run_id)
    assert steps.drive_step(run_id, "test") == "dead-lettered"
    control = streams.control(run_id)
    assert new_rows(before, written(run_id)) == [(control, row.version + 1, "DeadLettered")]
    letter = letter_of(run_id)
    assert f"position {row.position}" in letter["reason"]
    assert f"version {row.version} of {control}" in letter["reason"]
    assert "ResumeRequested" in letter["reason"]

    after = written(run_id)
    assert steps.drive_step(run_id, "test") == "dead-lettered"
    assert written(run_id) == after
    page = as_owner.get("/review/dead-letters").content.decode()
    assert run_id in page and f"position {row.position}" in page
    assert "<b>x</b>" not in page

    letters.decide_letter(letter["letter_id"], "retry", "owner", "try again")
    assert steps.drive_step(run_id, "test") == "dead-lettered"
    second = Control(run_id).open_letter()
    assert isinstance(second, DeadLettered) and second.letter_id != letter["letter_id"]
    letters.decide_letter(second.letter_id, "discard", "owner", "the row is lost")
    assert steps.drive_step(run_id, "test") == "escalated"


def test_the_sweep_goes_past_a_run_whose_control_row_does_not_read(settings):
    """Two runs nobody drives, one with such a row: both are sent (the step parks that one),
    and the sweep passes over it once parked."""
    spoiled, _ = with_bad_control_row()
    other = started()
    settings.STALL_SECONDS = 0
    time.sleep(0.01)
    assert sorted(steps.revive_stalled()) == sorted([spoiled, other])
    assert steps.drive_step(spoiled, "test") == "dead-lettered"
    time.sleep(0.01)
    assert steps.revive_stalled() == [other]


def test_a_lease_row_no_event_model_reads_parks_the_run_and_the_sweep_goes_on(settings):
    """The latest row of the run's lease stream rewritten so no event model reads it: the
    sweep's look at who drives its runs raised out of its round (no run was revived at any
    beat), and a step's look raised out of the task. The run is sent once, parked naming the
    row, and passed over after; the other run is revived at every beat."""
    spoiled = started()
    other = started()
    lease = streams.driver_lease(spoiled)
    row = StoredEvent.objects.filter(stream=lease).order_by("-version").first()
    row.data = json.dumps({**json.loads(row.data), "holder": {"<b>x</b>": 1}})
    row.save()
    settings.STALL_SECONDS = 0
    time.sleep(0.01)
    assert sorted(steps.revive_stalled()) == sorted([spoiled, other])
    before = written(spoiled)
    assert steps.drive_step(spoiled, "test") == "dead-lettered"
    control = streams.control(spoiled)
    [(stream, _, kind)] = new_rows(before, written(spoiled))
    assert (stream, kind) == (control, "DeadLettered")
    reason = letter_of(spoiled)["reason"]
    assert f"position {row.position}" in reason and f"of {lease}" in reason
    time.sleep(0.01)
    assert steps.revive_stalled() == [other]


def test_the_runs_page_answers_before_a_step_has_parked_it(as_owner, token):
    """Between the row going bad and the next step parking the run, its page, trace tab and
    API answered a server error: the header's look for a pending stop read the control stream
    whole. They answer, the header saying nothing of a stop it cannot read."""
    from django.test import Client

    run_id, _ = with_bad_control_row()
    for url in (f"/runs/{run_id}/", f"/runs/{run_id}/?tab=trace", f"/runs/{run_id}/header"):
        assert as_owner.get(url).status_code == 200, url
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert api.get(f"/api/runs/{run_id}").status_code == 200
