"""Structured statuses: every agent's last word, in seed 02's vocabulary, checked — not guessed.

Seed 02 §34 (and §36's two honest endings). A coordinator should not read an agent's prose to
learn whether it is done; each agent's run ends with one StatusReported:

    the agent's own word   a `status` in its done report, when it is in the vocabulary (or a
                           known alias: DONE, ok, BLOCKED, NO_SAFE_PATH, ...), source "agent"
    the harness's word     how the run ended (`runtime.loop`), when the agent said nothing, or
                           said something outside the vocabulary: that word is not trusted, it
                           is journalled as StatusNormalised beside the harness's status

The agent's word is a claim about itself (it may say WAITING_EVIDENCE or NO_SAFE_COORDINATION_
PATH instead of pretending to be done); it never overrides what the harness checks from the
journal (DEGRADED, the gate, the suite). The status is journalled in one batch with the event that
stops the run (`runtime.loop.stop`). Replayed, the recorded statuses are read back; a journal
written before statuses existed has none, and none are made up.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from runtime.events import Event, StatusNormalised, StatusReported
from runtime.session import Session

# Seed 02 §34, then §36: what an agent's status may be.
STATUSES: Final = (
    "PENDING",
    "RUNNING",
    "WAITING_EVIDENCE",
    "WAITING_AUTHORITY",
    "WAITING_DEPENDENCY",
    "VERIFYING",
    "COMPLETED",
    "FAILED",
    "CANCELLED",
    "RECONCILIATION_REQUIRED",
    "NO_SAFE_COORDINATION_PATH",
    "HUMAN_REQUIRED",
)
# A last word is said when the agent's run is over: it cannot still be pending or running.
LAST_WORDS: Final = frozenset(STATUSES) - {"PENDING", "RUNNING"}
# Words agents and older report contracts use for the same statuses.
ALIASES: Final[Mapping[str, str]] = {
    "DONE": "COMPLETED",
    "OK": "COMPLETED",
    "COMPLETE": "COMPLETED",
    "BLOCKED": "WAITING_DEPENDENCY",
    "NO_SAFE_PATH": "NO_SAFE_COORDINATION_PATH",
    "ESCALATE": "HUMAN_REQUIRED",
    "CANCELED": "CANCELLED",
}
# How a run ended (runtime.loop's statuses), as a status, with why.
ENDINGS: Final[Mapping[str, tuple[str, str]]] = {
    "done": ("COMPLETED", "it called done"),
    "halted": ("CANCELLED", "its budget ran out and the harness stopped it"),
    "out_of_turns": ("FAILED", "it ran out of turns"),
    "inconclusive": ("FAILED", "it stopped answering with tool calls"),
    "overdue": ("FAILED", "it missed the deadline of the request it was answering"),
    "looping": ("FAILED", "the loop breaker stopped it"),
}


def structured(said: Any) -> str | None:
    """The vocabulary's status for what an agent said, or None when it is not one."""
    if not isinstance(said, str):
        return None
    word = said.strip().upper().replace("-", "_").replace(" ", "_")
    word = ALIASES.get(word, word)
    return word if word in LAST_WORDS else None


def last_word(
    agent: str, ending: str, report: Mapping[str, Any] | None, **envelope: Any
) -> list[Event]:
    """The events that record an agent's last word: StatusReported, after StatusNormalised when
    the agent said a status outside the vocabulary."""
    status, why = ENDINGS.get(ending, ("FAILED", f"its run ended: {ending}"))
    said = report.get("status") if report is not None and ending == "done" else None
    at = {"agent": agent, **envelope}
    if said is None:
        return [StatusReported(**at, status=status, source="harness", reason=why)]
    found = structured(said)
    if found is not None:
        return [
            StatusReported(
                **at, status=found, said=str(said), source="agent", reason="in its done report"
            )
        ]
    reason = (
        f"{agent} said status {str(said)[:80]!r}, which is not one of {', '.join(STATUSES)}: "
        f"not trusted; the harness records {status} ({why})"
    )
    words = str(said)[:200]  # what it said, as text and short: an agent's word is not data
    return [
        StatusNormalised(**at, said=words, status=status, reason=reason),
        StatusReported(**at, status=status, said=words, source="harness", reason=reason),
    ]


def closing(
    session: Session,
    after: int,
    agent: str,
    ending: str,
    report: Mapping[str, Any] | None,
    task_id: str | None = None,
) -> list[Event]:
    """The last-word events to journal with the `after` events that stop the run: none where
    the record holds none there (a journal from before statuses, replayed or inside its
    record); made live, or read back where the record has them."""
    recorded = session.ahead(after)
    if recorded is not None:
        if not isinstance(recorded, StatusReported | StatusNormalised):
            return []
    elif session.replay:
        return []  # a replay past the end of an old record: nothing made up
    return last_word(agent, ending, report, run_id=session.run_id, task_id=task_id)
