"""The reading of an import's file, line by line (transfer.py runs it twice: a first reading
that writes nothing, then the one that appends under the lock).

What a line may be and do is told in transfer.py; this is where each line is held to it."""

from __future__ import annotations

import uuid
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO

from django.conf import settings
from django.db import DatabaseError, transaction

from journal_store import admission
from journal_store.import_ids import Ids
from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from journal_store.sniff import not_a_journal
from runtime import flat, renaming, streams
from runtime.events import (
    Event,
    EventFormatError,
    JournalImported,
    TeamStarted,
    WorkspacePrepared,
    shown,
)
from runtime.journal import JournalError, claim_id_problem
from runtime.team import place_problems, workspace_name

CHUNK = 500
MAX_PROBLEMS = 20
# Past this many problems the file is not read on: a million bad lines would cost seconds of
# CPU to count, for nobody's benefit.
STOP_AFTER = 1_000
MAX_PROBLEM_CHARS = 300  # a problem may quote the line; the answer must not grow with it
MAX_RUNS = 1_000  # runs one file may introduce (each costs the store a look-up)
MAX_STREAMS = 10_000  # streams one file may write (each is remembered while reading)


@dataclass
class ImportReport:
    run_ids: list[str] = field(default_factory=list)
    events: int = 0
    added: int = 0
    torn: str | None = None
    # Lines left out, by stream: a run's pushes of its trace to the exporting store's
    # collector, as exports before 2026-12-03 carried them (admission.trace_push). Not events
    # of the file's: `events` and `already_here` do not count them.
    left_out: dict[str, int] = field(default_factory=dict)

    @property
    def already_here(self) -> int:
        """The file's events this store held before: each stored where the file puts it (an
        export of a run flown here, or a file imported before), so not added again."""
        return self.events - self.added

    @property
    def left_out_said(self) -> list[str]:
        """What was left out, a sentence a stream, as the page, the API and the command say it."""
        return [left_out_said(stream, lines) for stream, lines in self.left_out.items()]


def left_out_said(stream: str, lines: int) -> str:
    return (
        f"left out {lines} line{'' if lines == 1 else 's'} of the run's trace pushes to the "
        f"exporting store's collector ({stream}): this store pushes the run's trace itself"
    )


def _lines(source: IO[bytes], max_line: int) -> Iterator[tuple[int, bytes, bool]]:
    """(line number, bytes, complete) for each line; an over-long line is cut at the limit."""
    number = 0
    while True:
        raw = source.readline(max_line + 2)
        if not raw:
            return
        number += 1
        complete = raw.endswith(b"\n")
        if not complete and len(raw) > max_line:
            yield number, raw, False  # too long: the caller refuses it before parsing
            while (rest := source.readline(1 << 16)) and not rest.endswith(b"\n"):
                pass  # skip the rest of that line, a piece at a time
            continue
        yield number, raw.rstrip(b"\r\n"), complete


class Problems:
    """The first MAX_PROBLEMS problems, each cut to a readable length, and a count of the rest:
    a file of a million bad lines costs twenty short messages."""

    def __init__(self) -> None:
        self.shown: list[str] = []
        self.count = 0

    def add(self, text: str) -> None:
        self.count += 1
        if len(self.shown) < MAX_PROBLEMS:
            if len(text) > MAX_PROBLEM_CHARS:
                text = text[: MAX_PROBLEM_CHARS - 3] + "..."
            self.shown.append(text)

    @property
    def more(self) -> int:
        return self.count - len(self.shown)

    def __bool__(self) -> bool:
        return self.count > 0


@dataclass
class _Stream:
    """One stream being imported: what the store held there when the file first named it, the
    version the file has reached, and the version appended so far."""

    stored: int = 0
    version: int = 0
    appended: int = 0
    # The file's line of each event appended so far, by its place after `stored` (8 bytes an
    # event): a later line repeating one of their ids is told which line it repeats.
    lines: array[int] = field(default_factory=lambda: array("q"))


class Importer:
    """One import's reading of its file: checks each line, appends in chunks while the file is
    good, and after the first problem keeps nothing but the problems."""

    def __init__(
        self,
        journal: DjangoJournal,
        fingerprint: str,
        rename: str | None,
        by: str | None,
        dry: bool = False,
    ) -> None:
        self.journal = journal
        self.dry = dry  # read and check only: nothing appended
        self.stored = StoredEvent.objects.using(journal.using)
        self.fingerprint = fingerprint
        self.rename = rename
        self.by = by
        self.fallback_run = rename or "r-" + fingerprint[:12]
        self.renamed_from = ""  # the file's run, when it is given a new id
        self.spliced = False  # another run's line was found in it
        self.problems = Problems()
        self.report = ImportReport()
        self.streams: dict[str, _Stream] = {}
        self.runs: dict[str, bool] = {}  # run id -> the store held it before this import
        # What it appends, and its words for an id the store refuses (import_ids.py); the
        # store's positions after the last one now are this import's own.
        self.ids = Ids(journal, journal.last_position(), self.streams, dry)
        self.owned: dict[str, str] = {}  # stream -> the run it was found to belong to
        self.reported: set[str] = set()
        self.held: set[str] = set()  # stored runs a line was refused for: said once each
        # Events waiting to be appended, in the file's order over all its streams (line,
        # stream, event): appending them in that order keeps the run's positions in the order
        # its events happened, which the timeline, the trace and a fan-out's replay read.
        self.pending: list[tuple[int, str, Event]] = []

    def read(self, source: IO[bytes], allow_torn: bool) -> None:
        max_line = settings.IMPORT_MAX_LINE_BYTES
        max_lines = settings.IMPORT_MAX_LINES
        max_depth = settings.IMPORT_MAX_DEPTH
        torn: tuple[int, str] | None = None
        for number, raw, complete in _lines(source, max_line):
            if torn is not None:  # a bad line followed by more lines was not a tear
                self.problem(f"line {torn[0]}: {torn[1]}")
                torn = None
            if number == 1 and (why := not_a_journal(raw)) is not None:
                self.problem(f"line 1: {why}")
                return
            if number > max_lines:
                self.problem(f"line {number}: the file is over the limit of {max_lines:,} lines")
                break
            if self.problems.count >= STOP_AFTER:
                self.problem(f"line {number}: not read, after {STOP_AFTER} problems")
                return
            if len(raw) > max_line:
                self.problem(f"line {number}: longer than the limit of {max_line:,} bytes")
                continue
            if not raw.strip():
                self.problem(f"line {number}: empty line")
                continue
            try:
                parsed = flat.loads(raw, number, self.fingerprint, max_depth, keys_once=True)
            except EventFormatError as exc:
                if complete:
                    self.problem(f"line {number}: {exc}")
                else:
                    torn = (number, str(exc))
                continue
            self.line(number, parsed)
        if torn is not None:
            self.report.torn = f"line {torn[0]}: torn final line ({torn[1]})"
            if not allow_torn:
                self.problem(
                    f"{self.report.torn}; to import the rest, allow a torn final line "
                    "(tick “Import the rest if the last line is torn” on the import page, "
                    "allow_torn=true in the API, --allow-torn to manage.py import_journal)"
                )
        if not self.problems and self.report.events == 0:
            but = " but pushes of a run's trace, which an import leaves out"
            self.problem(f"the file holds no events{but if self.report.left_out else ''}")
        if not self.problems:
            self.flush()

    def note_origin(self, file: str) -> None:
        """Beside each run this file introduced, where it came from (JournalImported): the
        pages show it, and say "imported" of a run nothing here will drive. A run the store
        held already keeps the origin it had."""
        for run_id, held in self.runs.items():
            if not held:
                origin = JournalImported(run_id=run_id, file=file, by=self.by)
                self.journal.append_locked(streams.imported(run_id), [origin], 0)

    def problem(self, text: str) -> None:
        self.problems.add(text)
        if self.problems.count == 1:
            self.pending = []  # nothing will be written now: keep nothing

    def line(self, number: int, parsed: flat.FlatLine) -> None:
        placed = self.admit(number, parsed)
        if placed is None:
            return
        event, name, named = placed
        if problem := admission.run_id_problem(event.run_id):
            self.problem(f"line {number}: {problem}")
            return
        if not self.run(number, event.run_id):
            return
        if self.runs[event.run_id] and self.stored_as(number, event, name, parsed.version):
            return
        if problem := self.forbidden(event, name, named):
            self.problem(f"line {number}: {problem}")
            return
        event = admission.started_by(event, self.by)
        stream = self.stream(number, name, event.run_id)
        if stream is None:
            return
        expected = stream.version + 1
        if parsed.version is not None and parsed.version != expected and self.problems:
            # An earlier line could not be read, so a gap here may be that line: follow the
            # file's numbering rather than report every later line of the stream too.
            expected = parsed.version
        if parsed.version is not None and parsed.version != expected:
            self.problem(
                f"line {number}: broken version sequence in stream {name!r}: "
                f"expected version {expected}, found {parsed.version}"
            )
            return
        stream.version = expected
        new = self.is_new(number, event, name, stream)
        if new is None:
            return
        self.counted(event)
        if new and not self.problems:
            self.pending.append((number, name, event))
            if len(self.pending) >= CHUNK:
                self.flush()

    def counted(self, event: Event) -> None:
        self.report.events += 1
        if event.run_id not in self.reported:  # (a set: a file may name a thousand runs)
            self.reported.add(event.run_id)
            self.report.run_ids.append(event.run_id)

    def stored_as(self, number: int, event: Event, name: str, version: int | None) -> bool:
        """Whether the store holds this very event (its id, its every field) where the file
        puts it (`version` of stream `name`; the stream's next when the line says none): the
        line writes nothing, so none of the rules of what an import may write applies to it.

        Those rules keep a file from writing what this store would take as its own: a
        person's decision, a review item, an event on a shared stream or another run's. A
        line whose event this store holds, every field alike, forges none of them: the store
        wrote it, or took it from an earlier import under those rules. So the export of any
        run flown here (its dead letters and their retries, a desk run's facts and effects,
        whose versions in shared streams skip the other runs' events) imports back into this
        store adding nothing. A line that differs in any field is judged as any other line."""
        found = self.journal.select("WHERE id = %s", [event.id])
        stream = self.streams.get(name)
        at = version if version is not None else (stream.version if stream else 0) + 1
        if not found or (found[0].stream, found[0].version, found[0].event) != (name, at, event):
            return False
        if stream is None:
            if len(self.streams) >= MAX_STREAMS:
                self.problem(f"line {number}: the file writes to more than {MAX_STREAMS} streams")
                return True
            stream = self.streams[name] = _Stream(stored=self.journal.version(name))
        stream.version = at
        self.counted(event)
        return True

    def admit(self, number: int, parsed: flat.FlatLine) -> tuple[Event, str, bool] | None:
        """The event as the file has it, its stream, and whether the line named its run; or
        None (the problem is recorded)."""
        event = parsed.event
        ident = admission.event_id(event.id)
        if ident is None:
            self.problem(
                f"line {number}: field 'id': {shown(event.id)} is not an event id "
                "(32 hex digits, or a UUID)"
            )
            return None
        if ident != event.id:
            event = event.model_copy(update={"id": ident})
        name = parsed.stream
        if name is not None and (problem := admission.stream_problem(name)):
            self.problem(f"line {number}: {problem}")
            return None
        named = bool(event.run_id)
        if not named:
            # The stream, when it names one run, is the line's run; else the file's own.
            owners = streams.owners(name) if name else []
            event = event.model_copy(
                update={"run_id": owners[0] if len(owners) == 1 else self.fallback_run}
            )
        # Before any new run id: the report names the stream as the file has it.
        where = name or streams.journal(event.run_id)
        if admission.trace_push(event, where):
            self.leave_out(number, event.run_id, where)
            return None
        if problem := admission.trace_problem(event, where):
            self.problem(f"line {number}: {problem}")
            return None
        if self.rename is not None:
            # One new id for two runs would splice them into one stream, refused later as a
            # broken version sequence at a line that says nothing of why.
            # Only the lines that name their run: one that names none is the file's own.
            first = self.renamed_from = self.renamed_from or (event.run_id if named else "")
            if named and event.run_id != first:
                if self.spliced:
                    return None  # said once, at the second run's first line
                self.spliced = True
                self.problem(
                    f"line {number}: run {shown(event.run_id)}, where the lines before are run "
                    f"{shown(first)}: a new run id renames a file of one run; import this one "
                    "without it, or export each run on its own"
                )
                return None
            if name is not None:
                name = streams.renamed(name, event.run_id, self.rename)
            event = _renamed(event, self.rename)
        return event, name or streams.journal(event.run_id), named

    def leave_out(self, number: int, run_id: str, name: str) -> None:
        """Count a push of the run's trace on its own traces stream, which is not written: the
        exporting store's dealings with its collector, not the run's (admission.py)."""
        if problem := admission.run_id_problem(run_id):
            self.problem(f"line {number}: {problem}")
            return
        left = self.report.left_out
        if name not in left and len(left) >= MAX_RUNS:
            self.problem(f"line {number}: the file holds pushes of more than {MAX_RUNS} runs")
            return
        left[name] = left.get(name, 0) + 1

    def forbidden(self, event: Event, name: str, named: bool) -> str | None:
        """Why the line may not be written to this store (admission.py: its kind, envelope,
        numbers and settings; here: its stream), or None."""
        places = place_problems(event.config) if isinstance(event, TeamStarted) else []
        problem = (
            (places[0] if places else None)
            or admission.kind_problem(event)
            or admission.envelope_problem(event)
            or admission.amount_problem(event)
            or admission.figures_problem(event)
            or admission.call_problem(event)
            or claim_id_problem(event)
            or admission.settings_problem(event)
            or admission.stream_problem(name)
        )
        if problem is None and self.owned.get(name) != event.run_id:
            if streams.owned_by(name, event.run_id):
                if len(self.owned) < MAX_STREAMS:
                    self.owned[name] = event.run_id
            else:
                # (the run id is checked above: plain letters, digits, '.', '_', '-')
                # A line naming no run was given the file's own id, which is in no line of
                # the file: naming it sent the reader looking for a run that is not there.
                whose = (
                    f"is not one of run {event.run_id}'s own streams"
                    if named
                    else "is no run's own stream, and the line names no run"
                )
                # What it means first: a problem is cut at MAX_PROBLEM_CHARS, where this
                # one lost its end, that such a run cannot be imported at all.
                problem = (
                    f"stream {shown(name)} {whose}: a run that wrote to streams "
                    "other runs read (an order's claims, effects, facts, intents: a "
                    "support-desk run, a saga's effects) cannot be imported, an import "
                    "writing only the runs it creates (run-, control-, lease-, worker-...)"
                )
        return problem

    def run(self, number: int, run_id: str) -> bool:
        """Note the run on first sight (whether the store holds it); False past the limit."""
        if run_id in self.runs:
            return True
        if len(self.runs) >= MAX_RUNS:
            self.problem(f"line {number}: the file introduces more than {MAX_RUNS} runs")
            return False
        self.runs[run_id] = self.stored.filter(run_id=run_id).exists()
        return True

    def stream(self, number: int, name: str, run_id: str) -> _Stream | None:
        """The stream's state; on first sight, what the store holds there and whether a stored
        run could own it. None when the line may not write there (the problem is recorded)."""
        stream = self.streams.get(name)
        if stream is not None:
            return stream
        if len(self.streams) >= MAX_STREAMS:
            self.problem(f"line {number}: the file writes to more than {MAX_STREAMS} streams")
            return None
        # Nested names are ambiguous: `worker-r-a-b-S1-w` of a new run `r-a` would be read
        # by a stored run `r-a-b` too. (Runs this file introduces may share: none is stored.)
        others = [r for r in streams.owners(name) if r != run_id and self.runs.get(r, True)]
        if others:
            held = (
                self.stored.filter(run_id__in=others)
                .values_list("run_id", flat=True)
                .order_by("run_id")
                .first()
            )
            if held is not None:
                self.problem(
                    f"line {number}: stream {name!r} could be stored run {held!r}'s: an import "
                    "may only create streams no stored run can own"
                )
                return None
        stream = self.streams[name] = _Stream(stored=self.journal.version(name))
        return stream

    def is_new(self, number: int, event: Event, name: str, stream: _Stream) -> bool | None:
        """True when the line adds an event to a new run's new stream; False when the event is
        stored at this very place already (a second import: it writes nothing); None (the
        problem recorded) when it would add to a stored run or stream."""
        if not self.runs[event.run_id] and stream.stored == 0:
            return True
        found = self.stored.filter(event_id=uuid.UUID(hex=event.id)).values_list(
            "stream", "version"
        )
        if list(found) == [(name, stream.version)]:
            return False
        if self.runs[event.run_id]:
            if event.run_id not in self.held and stream.version == stream.stored + 1 > 1:
                # Every earlier line of this stream is stored where the file has it (else the
                # run was refused at the first that is not): the store holds its beginning, as
                # a torn import leaves it, and this file goes on from there.
                self.held.add(event.run_id)
                self.problem(
                    f"line {number}: run {event.run_id!r} is already stored, with the first "
                    f"{stream.stored} events of stream {name!r} as this file has them and "
                    "none after (an earlier import of a part of this file, a torn one?): an "
                    "import may only create new runs, so the rest is not added to it (said "
                    "once for the run's lines)"
                )
            elif event.run_id not in self.held:
                self.held.add(event.run_id)
                self.problem(
                    f"line {number}: run {event.run_id!r} is already stored, and the store holds "
                    "a different journal there: an import may only create new runs (said once "
                    "for the run's lines)"
                )
        else:
            self.problem(
                f"line {number}: stream {name!r} already holds {stream.stored} events: an "
                "import may only create new streams"
            )
        return None

    def flush(self) -> None:
        """Append the pending events in the file's order, each run of consecutive lines of one
        stream as one append; a refusal names the line of the first id the store (or an
        earlier line of the file) holds already. Dry, the ids are checked as the store would."""
        batches: list[tuple[str, list[tuple[int, Event]]]] = []
        for number, name, event in self.pending:
            if batches and batches[-1][0] == name:
                batches[-1][1].append((number, event))
            else:
                batches.append((name, [(number, event)]))
        held = self.ids.held([event.id for _, _, event in self.pending]) if self.dry else {}
        self.pending = []
        for name, batch in batches:
            stream = self.streams[name]
            if self.dry and (problem := self.ids.unstored(batch, held)):
                self.problem(problem)
                return
            if not self.dry:
                events = [event for _, event in batch]
                try:
                    with transaction.atomic(using=self.journal.using):  # a savepoint
                        self.journal.append_locked(name, events, stream.appended)
                except (JournalError, DatabaseError) as exc:
                    self.problem(self.ids.refusal(name, batch, exc))
                    return
            stream.appended += len(batch)
            stream.lines.extend(number for number, _ in batch)
            self.report.added += len(batch)


def _renamed(event: Event, run_id: str) -> Event:
    """The event moved to another run, with an id derived from its old id and the new run.

    The run's workspace moves with it: a renamed copy never works in its original's directory.
    """
    new_id = uuid.uuid5(uuid.UUID(hex=event.id), run_id).hex
    # Its resources, task intent and tool calls named after it (a parallel writer's leases),
    # as its harness names them: the renamed copy replays as the original did.
    event = renaming.moved(event, event.run_id, run_id)
    update: dict[str, object] = {"run_id": run_id, "id": new_id}
    old, new = workspace_name(event.run_id), workspace_name(run_id)
    if isinstance(event, TeamStarted) and event.config.get("workspace") == old:
        update["config"] = {**event.config, "workspace": new}
    elif isinstance(event, WorkspacePrepared) and event.path == old:
        update["path"] = new
    return event.model_copy(update=update)
