"""Driven one turn per session (as the workers drive runs), a run takes the same coordination
decisions as in one flight: a reacting script resumes on the path it took, a recorded backoff
is read back, an overdue reply is decided once."""

from __future__ import annotations

import pytest

from runtime import flight
from runtime.journal import MemoryJournal
from runtime.session import Session

pytestmark = pytest.mark.slow


def stepped(config, run_id, root):
    journal = MemoryJournal()
    for _ in range(200):
        outcome = flight.drive(Session(journal, run_id, steps=1), config, root)
        if outcome.status != "stepped":
            return outcome, [r.event for r in journal.read(f"run-{run_id}")]
    raise AssertionError("the run never finished")


@pytest.mark.parametrize(
    ("scenario", "overrides"),
    [("flaky-tool", {}), ("flaky-tool", {"retries": 0}), ("silent-reviewer", {})],
)
def test_a_stepped_run_writes_the_journal_of_a_single_flight(
    tmp_path, fly_team, scenario, overrides
):
    reference = fly_team(scenario, **overrides)
    config = flight.plan("repo-fix", scenario, reference.run_id, **overrides)
    outcome, events = stepped(config, reference.run_id, tmp_path)
    assert outcome.status == reference.outcome.status

    def shape(evs):
        return [(e.kind, e.agent, e.task_id, getattr(e, "call_id", None)) for e in evs]

    assert shape(events) == shape(reference.events)
    assert flight.replay(_journal_of(events, reference.run_id), reference.run_id).identical


def _journal_of(events, run_id):
    journal = MemoryJournal()
    journal.append(f"run-{run_id}", events, 0)
    return journal
