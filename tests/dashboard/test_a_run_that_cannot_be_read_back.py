"""A step that cannot read its run back (a row of the run's journal no event model reads:
rewritten in the table) raised out of the task: before it took the run's lease when the row
was the run's first or latest (the step's first look), or from the cold flight's read of the
history just after it, where the lease was never given back and no step ever reached the
dead-letter count. Celery retries only database trouble, so the work vanished; the stall
sweep sent it again at every beat while the run's summary said running, to fail the same
way. Now the step ends in a dead letter on the queue page naming the run and the row (its
position, stream version and kind), and writes nothing else of the run."""

from __future__ import annotations

import json
import time

import pytest

from journal_store import projection
from journal_store.models import StoppedView, StoredEvent
from runtime import streams
from runtime.events import DeadLettered
from services import letters, runs, steps
from services.control import Control

pytestmark = pytest.mark.django_db


def spoiled(where: str) -> tuple[str, StoredEvent]:
    """A repo-fix run two steps in, parked nowhere (a cold step next), one of its journal's
    rows rewritten so no event model reads it: its first, one in the middle, or its latest."""
    run_id = runs.start_run("repo-fix", "first-flight", by="owner")
    assert steps.drive_step(run_id, "test") == "stepped"
    assert steps.drive_step(run_id, "test") == "stepped"
    steps.WARM.take(run_id, 2**40)  # what the next step finds parked: nothing, as on another node
    rows = list(StoredEvent.objects.filter(stream=streams.journal(run_id)).order_by("version"))
    row = {"first": rows[0], "middle": rows[len(rows) // 2], "latest": rows[-1]}[where]
    row.data = json.dumps({**json.loads(row.data), "run_id": {"<b>x</b>": 1}})
    row.save()
    return run_id, row


def written(run_id: str) -> list[tuple[str, int, str]]:
    rows = StoredEvent.objects.filter(run_id=run_id).exclude(stream__startswith="lease-")
    return sorted(rows.values_list("stream", "version", "kind"))


@pytest.mark.parametrize("where", ["first", "middle", "latest"])
def test_the_step_is_dead_lettered_naming_the_row(where, as_owner):
    run_id, row = spoiled(where)
    before = written(run_id)
    assert steps.drive_step(run_id, "test") == "dead-lettered"
    after = written(run_id)
    control = streams.control(run_id)
    assert [w for w in after if w not in before] == [
        (control, len([b for b in before if b[0] == control]) + 1, "DeadLettered")
    ]
    letter = json.loads(StoredEvent.objects.get(stream=control, kind="DeadLettered").data)
    reason = letter["reason"]
    assert run_id in reason
    assert f"position {row.position}" in reason and f"version {row.version}" in reason
    assert row.kind in reason
    assert "unreadable" in letter["last_error"]

    # Delivered again (or swept): it stays parked on the one letter, writing nothing.
    assert steps.drive_step(run_id, "test") == "dead-lettered"
    assert written(run_id) == after
    assert steps.revive_stalled() == []

    page = as_owner.get("/review/dead-letters").content.decode()
    assert run_id in page and f"position {row.position}" in page
    assert "<b>x</b>" not in page


def test_a_run_set_aside_at_the_row_is_swept_once_into_its_letter(settings):
    """The runs' fold set the run aside at the row, and nobody drives it (its lease let go):
    the sweep, which left it out, sends a step, which parks it; then the sweep passes over it."""
    run_id, row = spoiled("middle")
    projection.rebuild()  # the summaries' fold meets the row: the run is set aside there
    assert StoppedView.objects.get(projector="runs").position == row.position
    settings.STALL_SECONDS = 0
    time.sleep(0.01)
    assert steps.revive_stalled() == [run_id]
    assert steps.drive_step(run_id, "test") == "dead-lettered"
    assert steps.revive_stalled() == []


@pytest.mark.parametrize("where", ["middle", "latest"])
def test_its_letter_is_retried_to_the_same_letter_or_discarded_to_an_end(where, settings):
    """What the letter offers a person works: a retry with the row still there parks the run
    again (a new letter, naming the row); a discard ends it (escalated) without reading it."""
    run_id, row = spoiled(where)
    assert steps.drive_step(run_id, "test") == "dead-lettered"
    first = Control(run_id).open_letter()
    assert isinstance(first, DeadLettered)
    letters.decide_letter(first.letter_id, "retry", "owner", "try again")
    assert steps.drive_step(run_id, "test") == "dead-lettered"
    second = Control(run_id).open_letter()
    assert second is not None and second.letter_id != first.letter_id
    assert f"position {row.position}" in second.reason
    letters.decide_letter(second.letter_id, "discard", "owner", "the row is lost")
    assert steps.drive_step(run_id, "test") == "escalated"
