"""On a flaky test runner, the loop's retry (after a journalled backoff) spares the coder the
model call it makes when it is shown the error: the bill says so."""

from __future__ import annotations

import pytest

from runtime import flight, views
from runtime.diagnose import diagnose
from runtime.jsonl import JsonlJournal

pytestmark = pytest.mark.slow


def test_the_retry_saves_the_coder_a_model_call_and_replays_its_recorded_delay(fly_team):
    retried = fly_team("flaky-tool")  # the scenario retries once
    shown = fly_team("flaky-tool", retries=0)
    assert retried.outcome.status == shown.outcome.status == "done"
    with_retry = views.bill(retried.records)["agents"]["coder"]
    without = views.bill(shown.records)["agents"]["coder"]
    assert (without["calls"] - with_retry["calls"], without["tokens"] - with_retry["tokens"]) == (
        1,
        120,
    )

    # The coder's first run in the workspace, and the tester's first in its worktree (a fresh
    # checkout too), each retried by the loop.
    [scheduled, tester] = [e for e in retried.events if e.kind == "ToolRetryScheduled"]
    assert (scheduled.tool, scheduled.attempt, scheduled.agent) == ("run_tests", 2, "coder")
    assert (tester.tool, tester.attempt, tester.agent) == ("run_tests", 2, "tester")
    assert 0 < scheduled.delay <= 0.2
    returned = [e for e in retried.events if e.kind == "ToolReturned" and e.tool == "run_tests"]
    placed = retried.events.index(scheduled)
    assert retried.events.index(returned[0]) < placed < retried.events.index(returned[1])
    assert not [e for e in shown.events if e.kind == "ToolRetryScheduled"]
    # without the retry, the coder saw the dead runner and ran the tests again itself
    runs = [e for e in shown.events if e.kind == "ToolDispatched" and e.tool == "run_tests"]
    assert len({e.call_id for e in runs[:2]}) == 2

    for flown in (retried, shown):
        assert {f["kind"] for f in diagnose(flown.records)} == {"transient_error_absorbed"}
        assert flight.replay(JsonlJournal(flown.path), flown.run_id).identical
