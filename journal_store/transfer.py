"""Import and export of journals as JSONL: one flat event per line.

Export streams the run's events in position order with a server-side cursor, so its memory does
not grow with the run. Import is atomic: every line is checked (size, JSON, kind, fields,
version sequence) inside one transaction, and a single bad line imports nothing and says which
line and why. Importing the same file twice adds nothing the second time (event ids are kept,
or derived from the file when its lines have none, as the reference runtime's do).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO

from django.conf import settings
from django.db import transaction

from journal_store.journal import DjangoJournal, flat_line
from journal_store.models import StoredEvent
from runtime import flat
from runtime.events import Event, EventFormatError, TeamStarted, WorkspacePrepared
from runtime.journal import JournalError
from runtime.teams.base import place_problems, workspace_name

CHUNK = 500
MAX_PROBLEMS = 20


class ImportRefused(Exception):
    """The file cannot be imported; `problems` lists each one with its line number."""

    def __init__(self, problems: list[str]) -> None:
        shown = problems[:MAX_PROBLEMS]
        more = len(problems) - len(shown)
        text = "\n".join(shown) + (f"\n... and {more} more" if more > 0 else "")
        super().__init__(f"nothing was imported:\n{text}")
        self.problems = problems


@dataclass
class ImportReport:
    run_ids: list[str] = field(default_factory=list)
    events: int = 0
    added: int = 0
    torn: str | None = None


def export_lines(run_id: str, using: str = "default") -> Iterator[str]:
    """The run's events as flat JSONL lines (with a trailing newline), in position order."""
    for row in DjangoJournal(using).rows("WHERE run_id = %s ORDER BY position", [run_id]):
        yield flat_line(row) + "\n"


def export(run_id: str, out: IO[str], using: str = "default") -> int:
    count = 0
    for line in export_lines(run_id, using):
        out.write(line)
        count += 1
    return count


@dataclass
class _Stream:
    """One stream being imported: the next version and the events waiting to be appended."""

    version: int = 0
    pending: list[Event] = field(default_factory=list)


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
            source.readline()  # skip the rest of that line
            continue
        yield number, raw.rstrip(b"\r\n"), complete


def import_journal(
    source: IO[bytes],
    *,
    name: str = "journal",
    run_id: str | None = None,
    allow_torn: bool = False,
    size: int | None = None,
    using: str = "default",
) -> ImportReport:
    """Import a JSONL journal atomically. Raises ImportRefused listing what is wrong.

    `source` must be seekable: a first pass fingerprints the file (ids derived for lines that
    have none, as the reference runtime's, come from it), the second imports. `run_id` renames
    the run (and derives new event ids from the old, so importing the same file under the same
    new id twice is still a no-op). `size` is the file's size when known, checked against the
    limit before anything is read.
    """
    max_bytes = settings.IMPORT_MAX_BYTES
    if size is not None and size > max_bytes:
        raise ImportRefused([f"{name}: {size} bytes is over the limit of {max_bytes} bytes"])
    fingerprint = _fingerprint(source, max_bytes, name)
    with transaction.atomic(using=using):
        journal = DjangoJournal(using)
        journal.serialize_appends()
        report, problems = _import(journal, source, fingerprint, run_id, allow_torn)
        if problems:
            transaction.set_rollback(True, using=using)
            raise ImportRefused(problems)
    return report


def _fingerprint(source: IO[bytes], max_bytes: int, name: str) -> str:
    digest = hashlib.sha256()
    read = 0
    while chunk := source.read(1 << 20):
        read += len(chunk)
        if read > max_bytes:
            raise ImportRefused([f"{name}: the file is over the limit of {max_bytes} bytes"])
        digest.update(chunk)
    source.seek(0)
    return digest.hexdigest()


def _import(
    journal: DjangoJournal,
    source: IO[bytes],
    fingerprint: str,
    run_id: str | None,
    allow_torn: bool,
) -> tuple[ImportReport, list[str]]:
    problems: list[str] = []
    report = ImportReport()
    streams: dict[str, _Stream] = {}
    fallback_run = run_id or "r-" + fingerprint[:12]
    torn: tuple[int, str] | None = None
    for number, raw, complete in _lines(source, settings.IMPORT_MAX_LINE_BYTES):
        if torn is not None:  # a bad line followed by more lines was not a tear
            problems.append(f"line {torn[0]}: {torn[1]}")
            torn = None
        if len(raw) > settings.IMPORT_MAX_LINE_BYTES:
            problems.append(
                f"line {number}: longer than the limit of {settings.IMPORT_MAX_LINE_BYTES} bytes"
            )
            continue
        if not raw.strip():
            problems.append(f"line {number}: empty line")
            continue
        try:
            parsed = flat.loads(raw, number, fingerprint)
        except EventFormatError as exc:
            if complete:
                problems.append(f"line {number}: {exc}")
            else:
                torn = (number, str(exc))
            continue
        event = parsed.event
        if run_id is not None and event.run_id != run_id:
            event = _renamed(event, run_id)
        elif not event.run_id:
            event = event.model_copy(update={"run_id": fallback_run})
        if isinstance(event, TeamStarted) and (wrong := place_problems(event.config)):
            problems += [f"line {number}: {problem}" for problem in wrong]
            continue
        stream_name = parsed.stream or f"run-{event.run_id}"
        if run_id is not None and stream_name.startswith("run-"):
            stream_name = f"run-{run_id}"
        stream = streams.setdefault(stream_name, _Stream())
        expected = stream.version + 1
        if parsed.version is not None and parsed.version != expected and problems:
            # An earlier line could not be read, so a gap here may be that line: follow the
            # file's numbering rather than report every later line of the stream too.
            expected = parsed.version
        if parsed.version is not None and parsed.version != expected:
            problems.append(
                f"line {number}: broken version sequence in stream {stream_name!r}: "
                f"expected version {expected}, found {parsed.version}"
            )
            continue
        stream.version = expected
        stream.pending.append(event)
        report.events += 1
        if event.run_id not in report.run_ids:
            report.run_ids.append(event.run_id)
        if len(stream.pending) >= CHUNK and not problems:
            added, problem = _flush(journal, stream_name, stream)
            report.added += added
            problems += problem
    if torn is not None:
        report.torn = f"line {torn[0]}: torn final line ({torn[1]})"
        if not allow_torn:
            problems.append(f"{report.torn}; to import the rest, allow a torn final line")
    if not problems and report.events == 0:
        problems.append("the file holds no events")
    for stream_name, stream in streams.items():
        if stream.pending and not problems:
            added, problem = _flush(journal, stream_name, stream)
            report.added += added
            problems += problem
    return report, problems


def _flush(journal: DjangoJournal, name: str, stream: _Stream) -> tuple[int, list[str]]:
    """Append a stream's pending events: (how many were new, problems)."""
    batch, stream.pending = stream.pending, []
    first = stream.version - len(batch)
    stored = StoredEvent.objects.using(journal.using)
    already = stored.filter(event_id=uuid.UUID(hex=batch[0].id)).exists()
    try:
        journal.append_locked(name, batch, first)
    except JournalError as exc:
        return 0, [f"stream {name!r}: {exc}; the store holds a different journal there"]
    return (0 if already else len(batch)), []


def _renamed(event: Event, run_id: str) -> Event:
    """The event moved to another run, with an id derived from its old id and the new run.

    The run's workspace moves with it: a renamed copy never works in its original's directory.
    """
    new_id = uuid.uuid5(uuid.UUID(hex=event.id), run_id).hex
    update: dict[str, object] = {"run_id": run_id, "id": new_id}
    old, new = workspace_name(event.run_id), workspace_name(run_id)
    if isinstance(event, TeamStarted) and event.config.get("workspace") == old:
        update["config"] = {**event.config, "workspace": new}
    elif isinstance(event, WorkspacePrepared) and event.path == old:
        update["path"] = new
    return event.model_copy(update=update)


def import_many(paths: Iterable[str], **options: object) -> list[ImportReport]:
    reports = []
    for path in paths:
        with open(path, "rb") as source:
            reports.append(import_journal(source, name=path, **options))  # type: ignore[arg-type]
    return reports
