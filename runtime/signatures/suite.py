"""suite_not_run: the harness's own run of the whole suite did not run at all (no test passed
or failed, and it says why): the sandbox could not start, pytest could not be started, the run
timed out before any result. The run's verdict read "the suite is not green (0 failing)",
which sent people looking for a failing test; the finding names the cause the harness
recorded (`SuiteChecked.trace`). A later check of the same stream that ran drops it.
"""

from __future__ import annotations

from typing import ClassVar

from runtime.events import SuiteChecked
from runtime.folds import Fold, Out, Rows, State
from runtime.journal import Recorded
from runtime.signatures.base import Finding, finding

SAID = 400  # characters of the harness's reason, in the finding


class SuiteNotRun(Fold):
    """One finding per stream whose last suite check ran no test and said why."""

    name: ClassVar[str] = "suite_not_run"
    kinds: ClassVar[frozenset[str] | None] = frozenset(("SuiteChecked",))

    def start(self) -> State:
        return {"open": []}  # the streams with a finding

    def step(self, state: State, rec: Recorded, out: Out) -> None:
        e = rec.event
        if not isinstance(e, SuiteChecked):
            return
        ran = e.ok or e.passed or e.failed or not e.trace.strip()
        if ran:
            if rec.stream in state["open"]:
                state["open"].remove(rec.stream)
                out.drop(rec.stream)
            return
        said = " ".join(e.trace.split())
        said = said if len(said) <= SAID else said[: SAID - 1] + "…"
        row = finding(
            "suite_not_run",
            f"the harness could not run the suite, so no test passed or failed: {said}",
            [rec.position],
        )
        (out.put if rec.stream in state["open"] else out.add)(rec.stream, row)
        if rec.stream not in state["open"]:
            state["open"].append(rec.stream)

    def result(self, state: State, rows: Rows) -> list[Finding]:
        return list(rows.rows.values())
