"""The statuses a run can be in, and which of them are over: one vocabulary for all who ask.

A run's status is read from its journal (`views.Summary`, `services.runs.status_of`):

    running        a step is driving it, or is on its way to it
    interrupted    a person stopped it at a turn boundary; a person may resume it
    dead-lettered  a step kept failing; it waits for a person to retry or discard the letter
                   (each of its letters, when it has more than one open)
    done, failed, halted, inconclusive, out_of_turns, escalated
                   the harness's verdict (TeamFinished): the run is over

and what a verdict has become in the light of what else the journal holds (`derived`):

    waiting        escalated to a person whose decision is still open (a parked conflict)
    resolved       escalated, and a person has since decided every conflict it parked
    discarded      a person discarded its work, and the run ended without it
    compensated    "done", but a money step failed and the ones before it (if any) were undone
    imported       read from a file with no verdict in it: nothing here drives it

and one more is worked out when the run is shown, never stored: `stalled`, a running run that
nobody drives and no step is on its way to (`services.control.stalled`). The clock decides it,
so it cannot be a column to filter on; it is shown beside the stored status.

Plain Python: the runtime, the services and the pages all import it.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

Verdict = Literal["done", "failed", "halted", "inconclusive", "out_of_turns", "escalated"]

RUNNING: Final = "running"
INTERRUPTED: Final = "interrupted"
DEAD_LETTERED: Final = "dead-lettered"
STALLED: Final = "stalled"  # derived when shown (see the module's doc), never stored
WAITING: Final = "waiting"
RESOLVED: Final = "resolved"
DISCARDED: Final = "discarded"
COMPENSATED: Final = "compensated"
IMPORTED: Final = "imported"

VERDICTS: tuple[Verdict, ...] = get_args(Verdict)
# A verdict read beside the rest of the journal: over, like the verdicts.
ENDINGS: tuple[str, ...] = (WAITING, RESOLVED, DISCARDED, COMPENSATED, IMPORTED)
# Every status a run's summary can hold, in the order a filter offers them.
STATUSES: tuple[str, ...] = (RUNNING, *VERDICTS, *ENDINGS, DEAD_LETTERED, INTERRUPTED)
# Over: nothing will drive the run again, nobody may stop or resume it.
TERMINAL: frozenset[str] = frozenset((*VERDICTS, *ENDINGS))
# What a page says for each, where the word alone would mislead or read like code.
LABELS: dict[str, str] = {
    WAITING: "waiting for a person",
    RESOLVED: "resolved by a person",
    DISCARDED: "discarded by a person",
    COMPENSATED: "undone (compensated)",
    DEAD_LETTERED: "dead-lettered: waiting for a person",
    "out_of_turns": "out of turns",
}
# Somebody is driving it, or should be: pages poll it, the reconciler watches it for stalls.
ACTIVE: frozenset[str] = frozenset({RUNNING})
# Waiting for a person's decision (on a conflict, a dead letter, whether to resume a run they
# stopped): pages look again now and then, so a decision taken elsewhere shows without a
# reload. An interrupted run's page did not: after Resume it said "interrupted" until
# reloaded, the resume being taken up by a step after the page was drawn again.
AWAITING: frozenset[str] = frozenset({WAITING, DEAD_LETTERED, INTERRUPTED})


def is_terminal(status: str) -> bool:
    return status in TERMINAL


def is_active(status: str) -> bool:
    return status in ACTIVE


def is_awaiting(status: str) -> bool:
    return status in AWAITING


def is_followed(status: str) -> bool:
    """Whether pages look again at a run in this status (its header, its list row, its
    timeline's tail): it runs, or it waits for a person whose decision moves it on."""
    return status in ACTIVE or status in AWAITING


def label(status: str) -> str:
    """The status as a person reads it."""
    return LABELS.get(status, status)


def derived(
    verdict: str | None,
    driving: str,
    *,
    conflicts_open: bool = False,
    conflicts_decided: bool = False,
    discarded: bool = False,
    undone: bool = False,
    imported: bool = False,
) -> str:
    """The status a run's journal adds up to: its verdict (None: none yet) read beside what
    people decided on it and what its sagas undid, or, unfinished, how it is driven
    (`driving`: running, interrupted or dead-lettered)."""
    if verdict is None:
        # An imported run is driven by nobody here, whatever its file says of its driving (a
        # person's stop of it, RunInterrupted, is its minutes): nobody resumes it here.
        return IMPORTED if imported else driving
    if verdict == "escalated":
        if conflicts_open:
            return WAITING
        if conflicts_decided:
            return RESOLVED
        if discarded:
            return DISCARDED
    if verdict == "done" and undone:
        return COMPENSATED
    return verdict
