"""What the trace tab reads: one window of a run's records, and one call's.

A window is WINDOW events of the run's own and its specialists' streams (the streams the OTLP
export reads), found by position, with MARGIN events either side so that calls crossing its
edges start and end where they did (runtime/trace_view.py). Every read is a seek on the index
on (run_id, position) and at most WINDOW + 2 MARGIN rows, so a page of a 20,000-event run costs
what a page of a 100-event run does.

A call is read the same way: the run's TeamStarted (its settings name the model), the agent's
RunStarted (its task opens the prompt), the agent's events before the call that the prompt
window can hold, and those after it up to the answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from journal_store import traces
from journal_store.journal import DjangoJournal
from runtime import streams, trace_view
from runtime.events import (
    ModelCalled,
    ModelFailed,
    ModelResponded,
    RunStarted,
    TeamStarted,
    ToolDispatched,
    ToolReturned,
)
from runtime.journal import Recorded
from runtime.otel import TraceOptions

WINDOW = 200  # events drawn at once
MARGIN = 40  # events read either side of the window, for the calls that cross its edges
CALL_KINDS = (ModelCalled.kind, ModelResponded.kind, ModelFailed.kind, ToolReturned.kind)
AGENT_KINDS = (*CALL_KINDS, ToolDispatched.kind, RunStarted.kind)


def traced(run_id: str) -> tuple[str, list[str]]:
    """The WHERE clause of the run's traced streams: its own, and its specialists'."""
    prefix = f"worker-{run_id}-".replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return (
        "run_id = %s AND (stream = %s OR stream LIKE %s ESCAPE '\\')",
        [run_id, streams.journal(run_id), prefix + "%"],
    )


@dataclass
class Window:
    """The records of one window, with its margins, and where its neighbours start."""

    records: list[Recorded]
    first: int  # positions of the window's first and last events (0 when it is empty)
    last: int
    earlier: int | None  # the `after` of the window before this one; None: this is the first
    later: int | None  # the `after` of the window after this one; None: this is the last
    read: int  # rows read to draw it

    def view(
        self, run_id: str, lanes: list[str], active: bool
    ) -> trace_view.TraceView:
        goes_on = active or self.later is not None
        return trace_view.fold(run_id, self.records, (self.first, self.last), lanes, goes_on)


def window(run_id: str, after: int = 0, latest: bool = False, size: int = WINDOW) -> Window:
    """The window of `size` events after position `after` (the last ones with `latest`)."""
    journal = DjangoJournal()
    where, params = traced(run_id)
    if latest:
        tail = journal.select(
            f"WHERE {where} ORDER BY position DESC LIMIT %s", [*params, size]
        )
        after = tail[-1].position - 1 if tail else 0
    ahead = journal.select(
        f"WHERE {where} AND position > %s ORDER BY position LIMIT %s",
        [*params, after, size + MARGIN],
    )
    inside, beyond = ahead[:size], ahead[size:]
    behind = journal.select(
        f"WHERE {where} AND position <= %s ORDER BY position DESC LIMIT %s",
        [*params, after, MARGIN],
    )
    behind.reverse()
    started = first_team_started(run_id)
    records = [*behind, *ahead]
    if started is not None and not any(r.position == started.position for r in records):
        records.insert(0, started)  # the run's settings (the model's name) and its start
    earlier: int | None = None
    if behind:
        before = journal.select(
            f"WHERE {where} AND position <= %s ORDER BY position DESC LIMIT 1 OFFSET %s",
            [*params, after, size],
        )
        earlier = before[0].position if before else 0
    return Window(
        records=records,
        first=inside[0].position if inside else 0,
        last=inside[-1].position if inside else 0,
        earlier=earlier,
        later=inside[-1].position if beyond else None,
        read=len(records),
    )


def first_team_started(run_id: str) -> Recorded | None:
    found = DjangoJournal().select(
        "WHERE run_id = %s AND kind = %s ORDER BY position LIMIT 1", [run_id, TeamStarted.kind]
    )
    return found[0] if found else None


def around(run_id: str, position: int) -> int:
    """The `after` of a window that shows the event at `position` a quarter of the way in."""
    where, params = traced(run_id)
    found = DjangoJournal().select(
        f"WHERE {where} AND position < %s ORDER BY position DESC LIMIT 1 OFFSET %s",
        [*params, position, WINDOW // 4 - 1],
    )
    return found[0].position - 1 if found else 0


def call(run_id: str, position: int, options: TraceOptions | None = None) -> trace_view.Call | None:
    """The call opened by the run's event at `position`, with its prompt window and answer (or
    its arguments and result); None when no call of this run opens there."""
    journal = DjangoJournal()
    where, params = traced(run_id)
    found = journal.select(f"WHERE {where} AND position = %s", [*params, position])
    if not found or found[0].event.kind not in (*CALL_KINDS, ToolDispatched.kind):
        return None
    at = found[0]
    agent = at.event.agent
    mine = "run_id = %s AND stream = %s AND agent = %s AND kind IN (%s)" % (
        "%s",
        "%s",
        "%s",
        ", ".join(["%s"] * len(AGENT_KINDS)),
    )
    own = [run_id, at.stream, agent, *AGENT_KINDS]
    start = journal.select(
        f"WHERE {mine} AND kind = %s AND position <= %s ORDER BY position DESC LIMIT 1",
        [*own, RunStarted.kind, position],
    )
    since = start[0].position if start else 0
    # The prompt window holds the task and the newest turns that fit: at most one event in two
    # of the agent's calls before this one is a turn the window can hold (an answer or a
    # tool's response), so twice the window's size of them is enough.
    held = at.event.messages if isinstance(at.event, ModelCalled) and at.event.messages else 20
    before = journal.select(
        f"WHERE {mine} AND position > %s AND position < %s ORDER BY position DESC LIMIT %s",
        [*own, since, position, 2 * held + 10],
    )
    before.reverse()
    after = journal.select(
        f"WHERE {mine} AND position > %s ORDER BY position LIMIT %s", [*own, position, 20]
    )
    records = [*start, *before, at, *after]
    team = first_team_started(run_id)
    if team is not None:
        records.insert(0, team)
    chosen = options or traces.options()
    shown = TraceOptions(chosen.project, content=True, content_chars=chosen.content_chars)
    return trace_view.call(run_id, records, at, shown)
