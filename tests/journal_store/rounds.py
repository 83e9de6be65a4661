"""A run that goes on round after round, for the tests of what a catch-up costs as it grows.

Each round: the orchestrator REQUESTs the fix, the coder reads two files, edits one (a call
that fails, then the same call again, which succeeds), runs the tests and says DONE; the reviewer
REJECTs. Every message is delivered in the round, except the REJECT with `late_delivery`,
whose delivery opens the next round: a delivery in a later batch than its message.
"""

from __future__ import annotations

from runtime import events as ev
from runtime.events import Usage


class Rounds:
    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.stream = f"run-{run_id}"
        self.n = 0
        self.undelivered: ev.MessageDelivered | None = None

    def _id(self) -> str:
        self.n += 1
        return f"{self.run_id}-{self.n}"

    def start(self) -> list[ev.Event]:
        return [
            ev.TeamStarted(
                run_id=self.run_id,
                team="repo-fix",
                scenario="long",
                task="fix it",
                config={"allowance": 10**9},
            )
        ]

    def turn(self, agent: str, tool: str, args: dict, result: object, error: bool = False):
        call = f"call-{self._id()}"
        common = {"run_id": self.run_id, "agent": agent, "task_id": "T1", "turn": self.n}
        failure = {"type": "Flaky", "message": "try again"} if error else None
        return [
            ev.ModelCalled(**common),
            ev.ModelResponded(
                **common,
                text="",
                tool_calls=[{"id": call, "name": tool, "args": args}],
                usage=Usage(total=100),
            ),
            ev.BudgetDebited(**common, amount=100),
            ev.ToolDispatched(**common, tool=tool, call_id=call, args=args),
            ev.ToolReturned(
                **common, tool=tool, call_id=call, result=None if error else result, error=failure
            ),
        ]

    def message(self, sender: str, recipient: str, performative: str, deliver: bool = True):
        mid = f"m-{self._id()}"
        sent = ev.MessageSent(
            run_id=self.run_id,
            task_id="T1",
            message_id=mid,
            performative=performative,
            sender=sender,
            recipient=recipient,
            payload={"text": performative},
        )
        delivered = ev.MessageDelivered(
            run_id=self.run_id, task_id="T1", message_id=mid, recipient=recipient
        )
        if not deliver:
            self.undelivered = delivered
            return [sent]
        return [sent, delivered]

    def round_events(self, late_delivery: bool = False) -> list[ev.Event]:
        out: list[ev.Event] = []
        if self.undelivered is not None:
            out.append(self.undelivered)
            self.undelivered = None
        out += self.message("orchestrator", "coder", "request")
        out.append(ev.RunStarted(run_id=self.run_id, agent="coder", task_id="T1", task="fix"))
        out += self.turn("coder", "read_file", {"path": "a.py"}, {"content": "x" * 200})
        out += self.turn("coder", "read_file", {"path": "b.py"}, {"content": "y" * 200})
        edit = {"path": "a.py", "old": "x", "new": "z"}
        out += self.turn("coder", "edit_file", edit, None, error=True)
        out += self.turn("coder", "edit_file", edit, {"edited": "a.py"})
        out += self.turn("coder", "run_tests", {}, {"passed": 3, "failed": 0})
        out += self.message("coder", "reviewer", "done")
        out.append(ev.RunStarted(run_id=self.run_id, agent="reviewer", task_id="T1", task="rev"))
        out += self.message("reviewer", "coder", "reject", deliver=not late_delivery)
        return out
