"""Crash-test seams: SIGKILL or hang this process at a chosen point, and log every real tool run.

Set `MINUTES_FAULT` to one or more comma-separated points:

    after:ToolDispatched#2          die right after the stream's 2nd ToolDispatched is durable
    after:ModelCalled@reviewer#1    the same, counting only the reviewer's events
    exec:edit_file#1                die right after the 1st edit_file ran, before its ToolReturned
    hang:ToolDispatched#2           hang right after the stream's 2nd ToolDispatched is durable,
                                    until the process is killed (a step caught mid-way)
    hang:ToolDispatched#2:5         the same, for 5 seconds, then go on (a slow step)
    poison:r-123                    die at the start of every step of run r-123 (a poison step)
    fail:S2#1                       a specialist for sub-task S2 raises at its 1st start (a crash
                                    its supervisor sees: the lease is released, the work undone)

`after` and `hang` ordinals count events of the stream (replayed ones included), so a point names
the same place in a run whichever process gets there (and a replay does not stop there again);
`exec` ordinals count this process's executions.

Set `MINUTES_EXEC_LOG` to a file to have every real (not replayed) tool execution appended to it
as `<run> <tool> <dispatch ordinal>`: the side channel a test uses to prove that no call that
already returned ran again. Unset, this module does nothing.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

ENV = "MINUTES_FAULT"
LOG_ENV = "MINUTES_EXEC_LOG"


@dataclass
class Faults:
    after: dict[str, int] = field(default_factory=dict)
    hang: dict[str, tuple[int, float | None]] = field(default_factory=dict)
    exec: dict[str, int] = field(default_factory=dict)
    poisoned: set[str] = field(default_factory=set)
    fail: dict[str, set[int]] = field(default_factory=dict)
    log: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Faults:
        """The seams a host process was started with (read once, by the host: the command
        line, or Django's settings for the workers)."""
        return cls.parse(environ.get(ENV, ""), environ.get(LOG_ENV) or None)

    @classmethod
    def parse(cls, spec: str, log: str | None = None) -> Faults:
        faults = cls(log=log)
        for point in filter(None, (p.strip() for p in spec.split(","))):
            where, _, rest = point.partition(":")
            if where == "poison" and rest:
                faults.poisoned.add(rest)
                continue
            name, _, nth = rest.partition("#")
            if where == "fail" and name and nth.isdigit():
                faults.fail.setdefault(name, set()).add(int(nth))
                continue
            if where == "hang" and name:
                nth, _, seconds = nth.partition(":")
                try:
                    faults.hang[name] = (int(nth), float(seconds) if seconds else None)
                except ValueError:
                    want = "want hang:Kind#n or hang:Kind#n:seconds"
                    raise ValueError(f"{ENV}: cannot read {point!r} ({want})") from None
                continue
            if where not in ("after", "exec") or not name or not nth.isdigit():
                raise ValueError(f"{ENV}: cannot read {point!r} (want after:Kind#n or exec:tool#n)")
            getattr(faults, where)[name] = int(nth)
        return faults

    @property
    def armed(self) -> bool:
        return bool(self.after or self.hang or self.exec or self.log)

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
        if kind in self.hang and self.hang[kind][0] == ordinal:
            hang(self.hang[kind][1])

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


def hang(seconds: float | None) -> None:
    """Sleep this thread (the process's other threads go on: a lease heartbeat, say)."""
    if seconds is not None:
        time.sleep(seconds)
        return
    while True:
        time.sleep(3600)
