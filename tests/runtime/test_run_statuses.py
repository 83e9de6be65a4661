"""One status vocabulary: what a run's journal can say it is, and which of those are over."""

from __future__ import annotations

from typing import get_args

import pytest

from runtime import status, views
from runtime.events import (
    ConflictParked,
    ConflictResolved,
    DeadLetterDiscarded,
    DeadLettered,
    DeadLetterRetried,
    JournalImported,
    RunInterrupted,
    RunResumed,
    RunStarted,
    SagaSettled,
    TeamFinished,
    TeamStarted,
)
from runtime.journal import Recorded

R = {"run_id": "r-1"}
PARKED = ConflictParked(
    **R, conflict_id="c-1", subject="order-1", predicate="status", conflict_type="value", claims=[]
)
ESCALATED = TeamFinished(**R, status="escalated", reason="conflict c-1 waits for a person")
RESOLVED = ConflictResolved(
    **R, conflict_id="c-1", by="ann", reason="", choice="a", value="shipped"
)
DISCARDED = DeadLetterDiscarded(**R, letter_id="r-1:1", by="ann", reason="not worth it")
UNDONE = SagaSettled(
    **R,
    saga_id="refund-r-1",
    completed=["label", "credit"],
    compensated=["credit", "label"],
    failed_step="record",
    error="RuntimeError: the policy service is down",
)


def imported_status(*events) -> str:
    """A run read from a file with no TeamStarted and no verdict, then noted as imported."""
    run = [RunStarted(**R, agent="coder", task="t"), *events]
    records = [Recorded("run-r-1", i + 1, i + 1, e) for i, e in enumerate(run)]
    noted = JournalImported(**R, file="old.jsonl", by="ann")
    return views.status([*records, Recorded("import-r-1", 1, len(records) + 1, noted)])


def summary_status(*events) -> str:
    started = TeamStarted(**R, team="repo-fix", scenario="s", task="t")
    records = [Recorded("run-r-1", i + 1, i + 1, e) for i, e in enumerate([started, *events])]
    return views.status(records)


def test_the_harness_verdicts_and_what_the_journal_makes_of_them_are_the_terminal_statuses():
    verdicts = get_args(TeamFinished.model_fields["status"].annotation)
    assert set(verdicts) == set(status.VERDICTS)
    assert set(verdicts) | set(status.ENDINGS) == status.TERMINAL
    for verdict in verdicts:
        assert summary_status(TeamFinished(**R, status=verdict)) == verdict
        assert status.is_terminal(verdict) and not status.is_active(verdict)


def test_every_status_the_summary_can_reach_is_in_the_vocabulary_and_nothing_else():
    letter = DeadLettered(**R, letter_id="r-1:1", reason="stuck")
    reached = {
        summary_status(),
        summary_status(RunInterrupted(**R, by="ann")),
        summary_status(RunInterrupted(**R, by="ann"), RunResumed(**R, by="ann")),
        summary_status(letter),
        summary_status(letter, DeadLetterRetried(**R, letter_id="r-1:1", by="ann", reason="x")),
        *(summary_status(TeamFinished(**R, status=v)) for v in status.VERDICTS),
        summary_status(PARKED, ESCALATED),
        summary_status(PARKED, ESCALATED, RESOLVED),
        summary_status(letter, DISCARDED, ESCALATED),
        summary_status(UNDONE, TeamFinished(**R, status="done")),
        imported_status(),
    }
    assert reached == set(status.STATUSES)
    assert len(status.STATUSES) == len(set(status.STATUSES))


@pytest.mark.parametrize("never", [status.STALLED])
def test_a_status_no_journal_holds_is_not_offered(never):
    # "stalled" is worked out when shown, by the clock.
    assert never not in status.STATUSES and not status.is_terminal(never)


def test_only_a_running_run_is_active():
    assert [s for s in status.STATUSES if status.is_active(s)] == [status.RUNNING]
