"""A run's live span fold, stored between live pushes, so a push folds only the new events.

A live push (services/traces.py) needs the spans made final since the last one. Folding the
run's journal from its start at every step cost the run's length each time; the fold's state
(runtime/otel/fold_state.py: what is under way, not what is done) is kept in a row per run
(TraceFold) with the journal position it folded to, and the next push reads the run's events
after that position only (the (run_id, position) index), steps the fold with them, and stores
it again.

The row is a cache, never trusted: it is used only when the journal still holds, at its
position, the event it says it folded last (same stream and version, of this run); when it
handed out no more spans than live pushes claimed; and when it reads back as a state of this
run and these trace options. Otherwise (a journal re-imported or restored from an older copy,
a row from another version of the fold, a corrupt text) the run's events are folded again
from their start, which gives the same spans.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.db import IntegrityError, connections, transaction

from journal_store.journal import DjangoJournal
from journal_store.models import TraceFold
from runtime.otel.fold_state import FoldStateError, LiveFold, dump, load
from runtime.otel.options import TraceOptions
from runtime.otel.spans import Span

log = logging.getLogger(__name__)


@dataclass
class Advanced:
    """A live fold stepped to the journal's end.

    fold      the fold, to be stored when its spans are claimed (`save`)
    first     the index of the first span in `spans` among all the run's spans
    spans     the spans the new events made final, in order
    source    "stored" (the row, checked), "new" (no row) or why the row was not trusted
    """

    fold: LiveFold
    first: int
    spans: list[Span]
    source: str
    position: int  # the last journal position folded (0: none yet)
    stream: str = ""  # that event's stream and version, for the next push's check
    version: int = 0


def _at(position: int) -> tuple[str, int, str] | None:
    """The stream, version and run of the journal's event at `position`, if any."""
    with connections["default"].cursor() as cursor:
        cursor.execute(
            "SELECT stream, version, run_id FROM journal_event WHERE position = %s", [position]
        )
        found = cursor.fetchone()
    return None if found is None else (found[0], int(found[1]), found[2])


def stored(run_id: str, options: TraceOptions, claimed: int) -> Advanced:
    """The run's stored fold if it can be trusted, else a new one from the journal's start
    (`source` says which, and why)."""
    fresh = Advanced(LiveFold.start(run_id, options), 0, [], "new", 0)
    row = TraceFold.objects.filter(run_id=run_id).first()
    if row is None:
        return fresh
    if row.spans > claimed:
        why = f"it handed out {row.spans} spans, live pushes claimed {claimed}"
    elif _at(row.position) != (row.stream, row.version, run_id):
        why = f"the journal does not hold {row.stream}#{row.version} at {row.position}"
    else:
        try:
            trace = load(row.state, run_id, options)
        except FoldStateError as exc:
            why = str(exc)
        else:
            fold = LiveFold(trace, row.spans)
            return Advanced(fold, row.spans, [], "stored", row.position, row.stream, row.version)
    log.info("run %s: the stored trace fold is rebuilt from the journal: %s", run_id, why)
    fresh.source = f"rebuilt: {why}"
    return fresh


def advance(run_id: str, options: TraceOptions, claimed: int) -> Advanced:
    """The run's live fold, stepped with the events after its position: the spans they made
    final. `claimed` is how many spans live pushes claimed so far (the ledger's cursor)."""
    out = stored(run_id, options, claimed)
    records = DjangoJournal().read_run(run_id, after=out.position)
    out.spans = out.fold.step(records)
    if records:
        last = records[-1]
        out.position, out.stream, out.version = last.position, last.stream, last.version
    return out


def save(run_id: str, advanced: Advanced) -> None:
    """Store the fold where it got to (nothing when it read no event yet)."""
    if advanced.position == 0:
        return
    fields = {
        "position": advanced.position,
        "stream": advanced.stream,
        "version": advanced.version,
        "spans": advanced.fold.spans,
        "state": dump(advanced.fold.trace),
    }
    try:
        with transaction.atomic():
            TraceFold.objects.update_or_create(run_id=run_id, defaults=fields)
    except IntegrityError:
        # Another push stored its fold first: either is a true state of the run's journal.
        pass


def forget(run_id: str) -> None:
    """Drop the run's stored fold: once its whole trace is pushed no live push reads it."""
    TraceFold.objects.filter(run_id=run_id).delete()
