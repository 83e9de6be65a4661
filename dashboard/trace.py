"""What the trace tab reads: one window of a run's records, and one call's.

A window is WINDOW events of the run's own and its specialists' streams, found by position,
with a margin either side so that calls crossing its edges start and end where they did
(runtime/trace_view.py): MARGIN events, and more MARGINs (up to EXTEND) while a call opened in
the window has no answer yet, or an answer in it no call. The run's waits for a person in the
window are read beside them, to be drawn as marks. Both go through the one definition of what
a run's trace reads (journal_store/traces.py: `own` and `waits`, which `traced` joins for the
push and the download), so the tab and the exports cannot drift apart. Every read is a seek on
the index on (run_id, position) and a bounded number of rows, so a page of a 20,000-event run
costs what a page of a 100-event run does.

A call is read the same way: the run's TeamStarted (its settings name the model), the agent's
RunStarted (its task opens the prompt), the agent's events before the call that the prompt
window can hold, and those after it up to the answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dashboard import present, queries
from journal_store import traces
from journal_store.journal import DjangoJournal
from runtime import trace_view
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

WINDOW = 100  # events drawn at once
MARGIN = 10  # events read either side of the window, for the calls that cross its edges...
EXTEND = 5  # ...and up to this many more MARGINs while a call there still lacks its other end
SCAN = 100  # rows looked at a time for one agent's events around a call
CALL_KINDS = (ModelCalled.kind, ModelResponded.kind, ModelFailed.kind, ToolReturned.kind)
AGENT_KINDS = (*CALL_KINDS, ToolDispatched.kind, RunStarted.kind)


class Readable:
    """The journal's select, leaving out the rows no event model reads and noting them: one
    such row (rewritten in the table) made the whole tab a server error."""

    def __init__(self) -> None:
        self.journal = DjangoJournal()
        self.unreadable: dict[int, tuple[str, str]] = {}

    def select(self, where: str, params: list[Any]) -> list[Recorded]:
        read = self.journal.readings(where, params)
        for row, exc in read.unreadable:
            self.unreadable[row[0]] = (row[5], queries.unreadable_why(row, exc))
        return read.records

    def said(self) -> list[tuple[int, str, str]]:
        """The rows left out, in order: (position, kind, why)."""
        return [(at, kind, why) for at, (kind, why) in sorted(self.unreadable.items())]


@dataclass
class Window:
    """The records of one window, with its margins, and where its neighbours start."""

    records: list[Recorded]
    first: int  # positions of the window's first and last events (0 when it is empty)
    last: int
    earlier: int | None  # the `after` of the window before this one; None: this is the first
    later: int | None  # the `after` of the window after this one; None: this is the last
    read: int  # rows read to draw it
    waits: list[Recorded] = field(default_factory=list)  # see traces.waits_for_people
    # Rows read that no event model reads (position, kind, why): left out of the drawing
    unreadable: list[tuple[int, str, str]] = field(default_factory=list)

    def numbers(self, run_id: str) -> tuple[str, str]:
        """The window's first and last events by their number in the run's minutes."""
        inside = [r for r in self.records if self.first <= r.position <= self.last]
        if not inside:
            return ("", "")
        return (
            present.number(inside[0].stream, inside[0].version, run_id),
            present.number(inside[-1].stream, inside[-1].version, run_id),
        )

    def view(self, run_id: str, lanes: list[str], active: bool) -> trace_view.TraceView:
        goes_on = active or self.later is not None
        inside = (self.first, self.last)
        return trace_view.fold(run_id, self.records, inside, lanes, goes_on, waits=self.waits)


def window(run_id: str, after: int = 0, latest: bool = False, size: int = WINDOW) -> Window:
    """The window of `size` events after position `after` (the last ones with `latest`)."""
    journal = Readable()
    where, params = traces.own(run_id)
    if latest:
        last_window = position_before(where, params, None, size - 1)
        after = last_window - 1 if last_window is not None else 0
    ahead = journal.select(
        f"WHERE {where} AND position > %s ORDER BY position LIMIT %s",
        [*params, after, size + MARGIN],
    )
    inside = ahead[:size]
    for _ in range(EXTEND):  # calls opened near the end: read on to their answers
        if len(ahead) < size + MARGIN or not unanswered(inside, ahead):
            break
        more = journal.select(
            f"WHERE {where} AND position > %s ORDER BY position LIMIT %s",
            [*params, ahead[-1].position, MARGIN],
        )
        ahead += more
        if len(more) < MARGIN:
            break
    behind: list[Recorded] = []
    for _ in range(1 + EXTEND):  # answers near the start: read back to their calls
        upto = behind[0].position - 1 if behind else after
        more = journal.select(
            f"WHERE {where} AND position <= %s ORDER BY position DESC LIMIT %s",
            [*params, upto, MARGIN],
        )
        behind = [*reversed(more), *behind]
        if len(more) < MARGIN or not unasked(inside, behind):
            break
    started = first_team_started(run_id)
    records = [*behind, *ahead]
    if started is not None and not any(r.position == started.position for r in records):
        records.insert(0, started)  # the run's settings (the model's name) and its start
    earlier: int | None = None
    if behind:
        earlier = position_before(where, params, after + 1, size) or 0
    later = inside[-1].position if len(ahead) > size else None
    waits = traces.waits_for_people(run_id, after, later)
    return Window(
        records=records,
        first=inside[0].position if inside else 0,
        last=inside[-1].position if inside else 0,
        earlier=earlier,
        later=later,
        read=len(records) + len(waits),
        waits=waits,
        unreadable=journal.said(),
    )


def position_before(where: str, params: list[Any], before: int | None, skip: int) -> int | None:
    """The position of the traced event `skip` events before the last one before `before`
    (before the run's end when None); None when there are not that many."""
    bound = "" if before is None else " AND position < %s"
    args: list[object] = [*params] if before is None else [*params, before]
    with DjangoJournal().connection.cursor() as cursor:
        cursor.execute(
            f"SELECT position FROM journal_event WHERE {where}{bound} "
            "ORDER BY position DESC LIMIT 1 OFFSET %s",
            [*args, skip],
        )
        found = cursor.fetchone()
    return int(found[0]) if found else None


def call_key(rec: Recorded) -> tuple[str, str | None, str | None]:
    """What pairs a call with its answer: the model calls of an agent on its stream go one at a
    time; a tool call is known by its id."""
    e = rec.event
    if isinstance(e, ToolDispatched | ToolReturned):
        return (rec.stream, e.agent, e.call_id or f"tool:{e.tool}")
    return (rec.stream, e.agent, None)


def unanswered(inside: list[Recorded], records: list[Recorded]) -> bool:
    """Whether a call opened inside the window has no answer among the records."""
    positions = {r.position for r in inside}
    waiting: set[tuple[str, str | None, str | None]] = set()
    for rec in records:
        kind = rec.event.kind
        if kind in (ModelCalled.kind, ToolDispatched.kind) and rec.position in positions:
            waiting.add(call_key(rec))
        elif kind in (ModelResponded.kind, ModelFailed.kind, ToolReturned.kind):
            waiting.discard(call_key(rec))
    return bool(waiting)


def unasked(inside: list[Recorded], behind: list[Recorded]) -> bool:
    """Whether an answer inside the window has no call among the records before it."""
    asked: set[tuple[str, str | None, str | None]] = set()
    for rec in [*behind, *inside]:
        kind = rec.event.kind
        if kind in (ModelCalled.kind, ToolDispatched.kind):
            asked.add(call_key(rec))
        elif kind in (ModelResponded.kind, ModelFailed.kind, ToolReturned.kind):
            if rec.position > (behind[-1].position if behind else 0) and call_key(rec) not in asked:
                return True
            asked.discard(call_key(rec))
    return False


def first_team_started(run_id: str) -> Recorded | None:
    """The run's TeamStarted; None without one, or when no event model reads its row."""
    found = Readable().select(
        "WHERE run_id = %s AND kind = %s ORDER BY position LIMIT 1", [run_id, TeamStarted.kind]
    )
    return found[0] if found else None


def around(run_id: str, position: int) -> int:
    """The `after` of a window that shows the event at `position` a quarter of the way in."""
    where, params = traces.own(run_id)
    start = position_before(where, params, position, WINDOW // 4 - 1)
    return start - 1 if start is not None else 0


def call(
    run_id: str,
    position: int,
    options: TraceOptions | None = None,
    journal: Readable | None = None,
) -> trace_view.Call | None:
    """The call opened by the run's event at `position`, with its prompt window and answer (or
    its arguments and result); None when no call of this run opens there. The rows no event
    model reads are left out (a row beside the call made the tab a server error), and noted
    in `journal`'s `unreadable`, which the tab says."""
    journal = journal or Readable()
    where, params = traces.own(run_id)
    found = journal.select(f"WHERE {where} AND position = %s", [*params, position])
    if not found or found[0].event.kind not in (*CALL_KINDS, ToolDispatched.kind):
        return None
    at = found[0]
    agent = at.event.agent
    start = journal.select(
        "WHERE run_id = %s AND kind = %s AND stream = %s AND agent = %s AND position <= %s "
        "ORDER BY position DESC LIMIT 1",
        [run_id, RunStarted.kind, at.stream, agent, position],
    )
    since = start[0].position if start else 0
    # The prompt window holds the task and the newest turns that fit, as many as the call
    # recorded; each answer or tool response before it is at most one turn. Not the earlier
    # ModelCalled events: the fold would build each earlier call's prompt (what made this read
    # grow with the square of the window); nor, for a model call, the dispatches.
    held = at.event.messages if isinstance(at.event, ModelCalled) and at.event.messages else 20
    mine = (at.stream, agent)
    turns = (ModelResponded.kind, ModelFailed.kind, ToolReturned.kind)
    if isinstance(at.event, ModelCalled):
        before = scan(run_id, mine, since, position, held + 10, backwards=True, kinds=turns)
    else:  # a tool call's arguments are its dispatch's
        kinds = (*turns, ToolDispatched.kind)
        before = scan(run_id, mine, since, position, 2 * held + 10, backwards=True, kinds=kinds)
    # And the agent's event just before, whatever its kind: a call the journal did not open
    # with ModelCalled (a reference journal's) starts there, in the export as here.
    before += scan(run_id, mine, since, position, 1, backwards=True, kinds=())
    answers = (ModelResponded.kind, ModelFailed.kind, ToolReturned.kind)
    after = scan(run_id, mine, position, None, 20, until=answers)
    chosen = sorted({*before, *after})
    rows = (
        journal.select(
            f"WHERE position IN ({', '.join(['%s'] * len(chosen))}) ORDER BY position", chosen
        )
        if chosen
        else []
    )
    records = [*start, *[r for r in rows if r.position < position], at]
    records += [r for r in rows if r.position > position]
    team = first_team_started(run_id)
    if team is not None:
        records.insert(0, team)
    configured = options or traces.options()
    # The page shows what the timeline already shows anyone who may see the run, whether or
    # not the deployment ships content to a collector; bounded and scrubbed as the export.
    shown = TraceOptions(configured.project, content=True, content_chars=configured.content_chars)
    return trace_view.call(run_id, records, at, shown)


def scan(
    run_id: str,
    mine: tuple[str, str | None],
    low: int,
    high: int | None,
    wanted: int,
    backwards: bool = False,
    until: tuple[str, ...] = (),
    kinds: tuple[str, ...] = AGENT_KINDS,
) -> list[int]:
    """Positions of up to `wanted` of one agent's events of these `kinds` (any kind for none)
    on one stream between `low` and `high` (exclusive), the nearest first: from `high` down
    with `backwards`, else from `low` up, stopping after a kind in `until`.

    The agent's rows are picked out of the run's, read a chunk at a time by position without
    their payloads: the index on (run_id, position) is walked as far as needed, never the run's
    every row of one agent (which a seek on (run_id, agent) and a sort would read).
    """
    found: list[int] = []
    edge = high if backwards else low
    with DjangoJournal().connection.cursor() as cursor:
        for _ in range(100):  # at most 100 chunks: a call's neighbourhood, not the whole run
            if backwards:
                bound, order = "position > %s AND position < %s", "DESC"
                args: list[object] = [low, edge]
            else:
                bound, order = "position > %s", ""
                args = [edge]
            cursor.execute(
                f"SELECT position, stream, agent, kind FROM journal_event WHERE run_id = %s "
                f"AND {bound} ORDER BY position {order} LIMIT %s",
                [run_id, *args, SCAN],
            )
            chunk = cursor.fetchall()
            for position, stream, agent, kind in chunk:
                if (stream, agent) == mine and (kind in kinds or not kinds):
                    found.append(int(position))
                    if len(found) >= wanted or kind in until:
                        return found
            if len(chunk) < SCAN:
                return found
            edge = int(chunk[-1][0])
    return found
