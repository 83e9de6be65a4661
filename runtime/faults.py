"""Crash-test seams: SIGKILL this process at a chosen point, and log every real tool execution.

Set `MINUTES_FAULT` to one or more comma-separated points:

    after:ToolDispatched#2          die right after the stream's 2nd ToolDispatched is durable
    after:ModelCalled@reviewer#1    the same, counting only the reviewer's events
    exec:edit_file#1                die right after the 1st edit_file ran, before its ToolReturned
    poison:r-123                    die at the start of every step of run r-123 (a poison step)
    fail:S2#1                       a specialist for sub-task S2 raises at its 1st start (a crash
                                    its supervisor sees: the lease is released, the work undone)

`after` ordinals count events of the stream (replayed ones included), so a point names the same
place in a run whichever process gets there; `exec` ordinals count this process's executions.

Set `MINUTES_EXEC_LOG` to a file to have every real (not replayed) tool execution appended to it
as `<run> <tool> <dispatch ordinal>`: the side channel a test uses to prove that no call that
already returned ran again. Unset, this module does nothing.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass, field

ENV = "MINUTES_FAULT"
LOG_ENV = "MINUTES_EXEC_LOG"


@dataclass
class Faults:
    after: dict[str, int] = field(default_factory=dict)
    exec: dict[str, int] = field(default_factory=dict)
    poisoned: set[str] = field(default_factory=set)
    fail: dict[str, set[int]] = field(default_factory=dict)
    log: str | None = None

    @classmethod
    def from_env(cls) -> Faults:
        spec = os.environ.get(ENV, "").strip()
        faults = cls(log=os.environ.get(LOG_ENV) or None)
        for point in filter(None, (p.strip() for p in spec.split(","))):
            where, _, rest = point.partition(":")
            if where == "poison" and rest:
                faults.poisoned.add(rest)
                continue
            name, _, nth = rest.partition("#")
            if where == "fail" and name and nth.isdigit():
                faults.fail.setdefault(name, set()).add(int(nth))
                continue
            if where not in ("after", "exec") or not name or not nth.isdigit():
                raise ValueError(f"{ENV}: cannot read {point!r} (want after:Kind#n or exec:tool#n)")
            getattr(faults, where)[name] = int(nth)
        return faults

    @property
    def armed(self) -> bool:
        return bool(self.after or self.exec or self.log)

    def specialist_started(self, sub_id: str, start: int) -> None:
        if start in self.fail.get(sub_id, ()):
            raise InjectedFailure(f"{ENV}: specialist {sub_id} fails at start {start}")

    def step_started(self, run_id: str) -> None:
        if run_id in self.poisoned:
            die()

    def appended(self, kind: str, agent: str | None, ordinal: int, agent_ordinal: int) -> None:
        """`ordinal`: this kind's count in the stream; `agent_ordinal`: the same for this agent."""
        if self.after.get(kind) == ordinal or self.after.get(f"{kind}@{agent}") == agent_ordinal:
            die()

    def starting(self, run_id: str, tool: str, dispatch: int) -> None:
        """Log an execution as it starts: a call killed half-way may have changed the world, so
        it counts as run (`dispatch`: which dispatch of the run it is)."""
        if self.log:
            with open(self.log, "a") as f:
                f.write(f"{run_id} {tool} {dispatch}\n")

    def executed(self, run_id: str, tool: str, ordinal: int, dispatch: int) -> None:
        """`ordinal`: this tool's executions in this process; `dispatch`: which dispatch."""
        if self.exec.get(tool) == ordinal:
            die()


class InjectedFailure(RuntimeError):
    pass


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)
