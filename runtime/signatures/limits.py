"""limit_not_enforced: a limit of the sandbox that agent code ran without on this host.

run_tests answers, beside its counts, what limit the sandbox could not enforce where it ran
(`not_enforced`, runtime/pytest_runs.py): today the process limit, on a worker that runs as
root with no pids cgroup it can make. It is said in every such answer, where an agent reads it
and an operator does not; the finding says it once per run, on the run page and in
`python -m runtime diagnose`, with what to do about it. It cites the first answers that said it
and the latest (base.EVIDENCE), and stays: what ran unbounded ran so.
"""

from __future__ import annotations

from typing import ClassVar

from runtime.events import ToolReturned
from runtime.folds import Fold, Out, Rows, State
from runtime.journal import Recorded
from runtime.signatures.base import Finding, cite, finding

SAID = 400  # characters of the note, in the finding's detail
PROCESSES = (
    "the process limit was not enforced on this host (no pids cgroup; the worker runs as "
    "root): agent code could start processes until the host had none left. Run the worker as "
    "a user other than root (RLIMIT_NPROC binds it then), or give it a delegated cgroup it can "
    "write (cgroup v1's /sys/fs/cgroup/pids, or v2's with the pids controller)"
)


class LimitNotEnforced(Fold):
    """One finding per run and note: the tool answers that said a limit was not enforced."""

    name: ClassVar[str] = "limit_not_enforced"
    kinds: ClassVar[frozenset[str] | None] = frozenset(("ToolReturned",))

    def start(self) -> State:
        return {"said": {}}  # note -> the positions cited

    def step(self, state: State, rec: Recorded, out: Out) -> None:
        e = rec.event
        if not isinstance(e, ToolReturned) or not isinstance(e.result, dict):
            return
        note = e.result.get("not_enforced")
        if not isinstance(note, str) or not note.strip():
            return
        note = " ".join(note.split())[:SAID]
        cited = state["said"].get(note)
        if cited is None:
            cited = state["said"][note] = []
        cite(cited, rec.position)
        row = finding(self.name, _summary(note), cited, said=note)
        (out.put if len(cited) > 1 else out.add)(note, row)

    def result(self, state: State, rows: Rows) -> list[Finding]:
        return list(rows.rows.values())


def _summary(note: str) -> str:
    if note.startswith("the process limit"):
        return PROCESSES
    return f"a limit of the sandbox was not enforced on this host: {note}"
