"""The statuses a run can be in, and which of them are over: one vocabulary for all who ask.

A run's status is read from its journal (`views.Summary`, `services.runs.status_of`):

    running        a step is driving it, or is on its way to it
    interrupted    a person stopped it at a turn boundary; a person may resume it
    dead-lettered  a step kept failing; it waits for a person to retry or discard the letter
    done, failed, halted, inconclusive, out_of_turns, escalated
                   the harness's verdict (TeamFinished): the run is over

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

VERDICTS: tuple[Verdict, ...] = get_args(Verdict)
# Every status a run's summary can hold, in the order a filter offers them.
STATUSES: tuple[str, ...] = (RUNNING, *VERDICTS, DEAD_LETTERED, INTERRUPTED)
# Over: nothing will drive the run again, nobody may stop or resume it.
TERMINAL: frozenset[str] = frozenset(VERDICTS)
# Somebody is driving it, or should be: pages poll it, the reconciler watches it for stalls.
ACTIVE: frozenset[str] = frozenset({RUNNING})


def is_terminal(status: str) -> bool:
    return status in TERMINAL


def is_active(status: str) -> bool:
    return status in ACTIVE
