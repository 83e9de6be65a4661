"""A pattern that repeats for the whole of a long run (the same call, the same refusal) is one
finding citing its first positions and its latest, with the count in its summary: the row,
the fold's stored state and the findings tab stay the same size at event 20,000 as at 100."""

from __future__ import annotations

import json

from runtime import folds
from runtime.diagnose import Diagnosis, diagnose
from runtime.events import MutationRefused, ToolDispatched, ToolReturned
from runtime.journal import Recorded
from runtime.signatures.base import EVIDENCE

R = {"run_id": "r-1", "agent": "coder"}


def looping(calls: int) -> list[Recorded]:
    events = []
    for i in range(calls):
        ids = {"tool": "read_file", "call_id": f"c{i}"}
        events.append(ToolDispatched(**R, **ids, args={"path": "a.py"}))
        events.append(ToolReturned(**R, **ids, result="text"))
    return [Recorded("run-r-1", i + 1, i + 1, e) for i, e in enumerate(events)]


def test_a_loop_of_two_thousand_calls_cites_its_first_calls_and_its_latest():
    records = looping(2_000)
    [found] = diagnose(records)
    assert found["kind"] == "looping_agent"
    assert "2000 times in a row" in found["summary"]
    dispatches = [r.position for r in records if r.event.kind == "ToolDispatched"]
    assert found["positions"] == [*dispatches[:EVIDENCE], dispatches[-1]]


def test_the_stored_state_of_a_long_loop_is_the_size_of_a_short_ones():
    def stored(calls: int) -> tuple[int, int]:
        fold, rows = Diagnosis(), folds.Rows()
        state = fold.start()
        folds.feed(fold, state, looping(calls), rows)
        return len(json.dumps(state)), len(json.dumps(fold.result(state, rows)))

    # The same shape, and positions with more digits: not the calls' number.
    (state, row), (short_state, short_row) = stored(2_000), stored(30)
    assert state < short_state + 200 and row < short_row + 200


def test_refusals_repeated_are_counted_though_only_some_are_cited():
    refusal = {
        "actor": "coder",
        "capability": "write",
        "check": "lease",
        "what": "src/a.py",
        "reason": "no lease",
    }
    records = [
        Recorded("run-r-1", i + 1, i + 1, MutationRefused(**R, **refusal)) for i in range(50)
    ]
    [found] = diagnose(records)
    assert "(50 times)" in found["summary"]
    assert found["positions"] == [*range(1, EVIDENCE + 1), 50]
