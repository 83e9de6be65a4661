"""What the mutation gate and the status check caught: refused mutations, untrusted last words.

mutation_refused  work the gate refused: decided under a superseded intent, holding a lease
                  that moved, by an actor without the authority, citing evidence the record
                  lacks (a merge refused after a REJECT, or on an ACCEPT of failing tests, is
                  the review protocol at work, not a finding of the gate: reject_cap tells when
                  those pile up, accepted_failing_tests names the reviewer's ACCEPT), or reusing
                  a key. Journals from before the gate show the intent and lease refusals as
                  StaleWorkRejected, and are found too.
unknown_status    an agent whose last word was a status outside seed 02's vocabulary: not
                  trusted, normalised. Journals from before StatusNormalised show it in the
                  agent's done report, and are found too.
"""

from __future__ import annotations

from typing import ClassVar

from runtime.coordination.statuses import structured
from runtime.events import AgentFinished, MutationRefused, StaleWorkRejected, StatusNormalised
from runtime.folds import Fold, Out, Rows, State
from runtime.journal import Recorded
from runtime.signatures.base import EVIDENCE, Finding, cite, finding


class MutationRefusals(Fold):
    """Keeps, per actor, capability and failed check, how many refusals and the positions of
    the first ones and the latest."""

    name: ClassVar[str] = "mutation_refused"
    kinds: ClassVar[frozenset[str] | None] = frozenset(("MutationRefused", "StaleWorkRejected"))

    def start(self) -> State:
        return {"refused": {}}

    def step(self, state: State, rec: Recorded, out: Out) -> None:
        e = rec.event
        if isinstance(e, MutationRefused):
            if e.check == "evidence" and e.capability == "integrate":
                # a merge tried after a REJECT or on failing tests: the protocol, not a failure
                return
            actor, capability, check, what = e.actor, e.capability, e.check, e.what
        elif isinstance(e, StaleWorkRejected):  # written before the gate: intent or lease
            actor, capability, check, what = e.agent or "", "", e.gate, e.what
        else:
            return
        reason = e.reason
        at = f"{actor or what}|{capability}|{check}"
        refused = state["refused"].get(at)
        if isinstance(refused, list):  # a state stored when it kept every position
            refused = {"positions": refused[: EVIDENCE + 1], "count": len(refused)}
        refused = state["refused"][at] = refused or {"positions": [], "count": 0}
        cite(refused["positions"], rec.position)
        refused["count"] += 1
        count = refused["count"]
        times = "" if count == 1 else f" ({count} times)"
        found = finding(
            "mutation_refused",
            f"the mutation gate refused {what} ({check}){times}: {reason}",
            refused["positions"],
            actor=actor,
            capability=capability,
            check=check,
        )
        (out.put if count > 1 else out.add)(at, found)

    def result(self, state: State, rows: Rows) -> list[Finding]:
        return list(rows.rows.values())


class UnknownStatuses(Fold):
    """One finding per agent run whose last word was outside the vocabulary."""

    name: ClassVar[str] = "unknown_status"
    kinds: ClassVar[frozenset[str] | None] = frozenset(("AgentFinished", "StatusNormalised"))

    def start(self) -> State:
        return {}

    def step(self, state: State, rec: Recorded, out: Out) -> None:
        e = rec.event
        if isinstance(e, StatusNormalised):
            said, status = e.said, e.status
        elif isinstance(e, AgentFinished) and e.result and "status" in e.result:
            said = e.result["status"]
            if structured(said) is not None:
                return
            status = "COMPLETED"  # what the harness records for a run that called done
        else:
            return
        at = f"{rec.stream}|{e.agent}|{e.task_id}"
        found = finding(
            "unknown_status",
            f"{e.agent or 'an agent'} said status {str(said)[:60]!r}, outside the vocabulary: "
            f"not trusted, recorded as {status}",
            [rec.position],
            agent=e.agent,
            said=said,
            status=status,
        )
        (out.put if at in state else out.add)(at, found)
        state[at] = True

    def result(self, state: State, rows: Rows) -> list[Finding]:
        return list(rows.rows.values())
