"""Import and export of journals as JSONL: one flat event per line.

Export streams the run's events in position order with a server-side cursor, so its memory does
not grow with the run. Import is atomic: every line is checked (size, JSON, kind, fields,
version sequence) inside one transaction, and a single bad line imports nothing and says which
line and why. Importing the same file twice adds nothing the second time (event ids are kept,
or derived from the file when its lines have none, as the reference runtime's do).

An imported file is untrusted input with an owner. It may only create new runs: every line
belongs to a run the store does not hold yet and writes to one of that run's own streams (see
runtime/streams.py), never to a stream that exists, nor to one a stored run could own. A line
that is already stored, the same id at the same place, is the one exception: it writes nothing
(that is what makes a second import of a file a no-op). Ids, kinds and the envelope are held to
admission.py; the run's starter is whoever imports it. The one line left out rather than
refused is a run's push of its trace on its own traces stream, as exports before 2026-12-03
carried them (admission.trace_push; counted in ImportReport.left_out). The file is bounded
too: its size, each line's length and nesting, the number of lines, runs, streams and problems
(reading stops at a thousand); what is kept of its problems does not grow with the file
(twenty and a count; nothing pending once a problem means nothing will be written), and of its
events, a few bytes each (the line of each, and in the first reading its id: import_ids.py).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from typing import IO

from django.conf import settings
from django.db import transaction

from journal_store import admission
from journal_store.import_reading import (
    CHUNK,
    MAX_PROBLEM_CHARS,
    MAX_PROBLEMS,
    MAX_RUNS,
    MAX_STREAMS,
    STOP_AFTER,
    Importer,
    ImportReport,
)
from journal_store.journal import DjangoJournal
from journal_store.journal_rows import flat_line
from runtime import streams
from runtime.events import JournalImported

# (the reading's limits and report, named here as they always were)
__all__ = [
    "CHUNK",
    "MAX_PROBLEMS",
    "MAX_PROBLEM_CHARS",
    "MAX_RUNS",
    "MAX_STREAMS",
    "STOP_AFTER",
    "ImportRefused",
    "ImportReport",
    "export",
    "export_lines",
    "import_journal",
]


class ImportRefused(Exception):
    """The file cannot be imported: `problems` are the first ones, each naming its line, and
    `more` counts the others."""

    def __init__(self, problems: list[str], more: int = 0) -> None:
        first = problems[:MAX_PROBLEMS]
        more += len(problems) - len(first)
        text = "\n".join(first) + (f"\n... and {more} more" if more > 0 else "")
        super().__init__(f"nothing was imported:\n{text}")
        self.problems = first
        self.more = more


def export_lines(run_id: str, using: str = "default") -> Iterator[str]:
    """The run's events as flat JSONL lines (with a trailing newline), in position order."""
    # Without this store's note of an import (JournalImported): it is not the run's record,
    # and a file carrying it would be refused here. Nor its pushes of the run's trace to this
    # store's collector (traces-RUN): imported, they said "Trace pushed" of a store that never
    # pushed it, or "queued" of a push nobody there would send.
    where = "WHERE run_id = %s AND kind <> %s AND stream <> %s ORDER BY position"
    args = [run_id, JournalImported.kind, streams.traces(run_id)]
    for row in DjangoJournal(using).rows(where, args):
        yield flat_line(row) + "\n"


def export(run_id: str, out: IO[str], using: str = "default") -> int:
    count = 0
    for line in export_lines(run_id, using):
        out.write(line)
        count += 1
    return count


def import_journal(
    source: IO[bytes],
    *,
    name: str = "journal",
    run_id: str | None = None,
    allow_torn: bool = False,
    size: int | None = None,
    by: str | None = None,
    using: str = "default",
) -> ImportReport:
    """Import a JSONL journal atomically. Raises ImportRefused listing what is wrong.

    `source` must be seekable: a first pass fingerprints the file (ids derived for lines that
    have none, as the reference runtime's, come from it), the second imports. `run_id` renames
    the run (and derives new event ids from the old, so importing the same file under the same
    new id twice is still a no-op). `size` is the file's size when known, checked against the
    limit before anything is read. `by` is who imports: the starter of every run the file
    introduces, whatever the file says (None: nobody).
    """
    max_bytes = settings.IMPORT_MAX_BYTES
    if size is not None and size > max_bytes:
        raise ImportRefused([f"{name}: {size:,} bytes is over the limit of {max_bytes:,} bytes"])
    fingerprint = _fingerprint(source, max_bytes, name)
    if run_id is not None and (problem := admission.run_id_refusal(run_id)):
        raise ImportRefused([f"the new run id: {problem}"])
    # A first reading writes nothing and takes no lock: a file refused for what it holds is
    # refused before the lock every append of every run waits on (journal.serialize_appends)
    # is taken, where a 44 MB file refused at its 92,020th line held every run's writes for
    # the minute it took to get there. It refuses an id the file repeats or the store holds
    # elsewhere too (journal_store/import_ids.py), as the store would. The second reading,
    # under the lock, is the one that counts: the store may have changed between the two (an
    # id stored since is refused as it appends). The first costs a file's parse, a look-up of
    # the store every 500 lines, and some 35 bytes an event it would append (35 MB and a
    # quarter more time for a million lines, the most a file holds).
    checked = Importer(DjangoJournal(using), fingerprint, run_id, by, dry=True)
    checked.read(source, allow_torn)
    if checked.problems:
        raise ImportRefused(checked.problems.shown, checked.problems.more)
    source.seek(0)
    with transaction.atomic(using=using):
        journal = DjangoJournal(using)
        journal.serialize_appends()
        importer = Importer(journal, fingerprint, run_id, by)
        importer.read(source, allow_torn)
        if importer.problems:
            transaction.set_rollback(True, using=using)
            raise ImportRefused(importer.problems.shown, importer.problems.more)
        importer.note_origin(os.path.basename(name))
    return importer.report


def _fingerprint(source: IO[bytes], max_bytes: int, name: str) -> str:
    digest = hashlib.sha256()
    read = 0
    while chunk := source.read(1 << 20):
        read += len(chunk)
        if read > max_bytes:
            raise ImportRefused([f"{name}: the file is over the limit of {max_bytes:,} bytes"])
        digest.update(chunk)
    source.seek(0)
    return digest.hexdigest()
