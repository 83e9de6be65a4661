"""One status vocabulary: what a run's journal can say it is, and which of those are over."""

from __future__ import annotations

from typing import get_args

import pytest

from runtime import status, views
from runtime.events import (
    DeadLettered,
    DeadLetterRetried,
    RunInterrupted,
    RunResumed,
    TeamFinished,
    TeamStarted,
)
from runtime.journal import Recorded

R = {"run_id": "r-1"}


def summary_status(*events) -> str:
    started = TeamStarted(**R, team="repo-fix", scenario="s", task="t")
    records = [Recorded("run-r-1", i + 1, i + 1, e) for i, e in enumerate([started, *events])]
    return views.status(records)


def test_the_harness_verdicts_are_exactly_the_terminal_statuses():
    verdicts = get_args(TeamFinished.model_fields["status"].annotation)
    assert set(verdicts) == set(status.VERDICTS) == status.TERMINAL
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
    }
    assert reached == set(status.STATUSES)
    assert len(status.STATUSES) == len(set(status.STATUSES))


@pytest.mark.parametrize("never", ["discarded", status.STALLED])
def test_a_status_no_journal_holds_is_not_offered(never):
    # "discarded" is a dead letter's fate, not a run's; "stalled" is worked out when shown.
    assert never not in status.STATUSES and not status.is_terminal(never)


def test_only_a_running_run_is_active():
    assert [s for s in status.STATUSES if status.is_active(s)] == [status.RUNNING]
