"""The first reading of an import (which writes nothing and takes no lock) refuses the ids the
store would refuse, in the words the reading that writes uses: an id twice in one append, an
id an earlier line of the file appended, an id stored before the import (the one the store
stored first, when a batch holds several). An event stored where the file puts it is still
no problem, and an id stored after the first reading is still refused by the second."""

from __future__ import annotations

import io
import json
import tracemalloc

import pytest
from django.db import transaction

from journal_store.import_ids import FileIds
from journal_store.import_reading import Importer
from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from journal_store.transfer import CHUNK, ImportRefused, _fingerprint, import_journal
from runtime.events import BudgetDebited
from tests.journal_store.conftest import on_every_backend

pytestmark = on_every_backend()

T = 1_700_000_000.0
STORED = ["f" * 31 + str(n) for n in range(3)]  # ids stored before the import, in this order


def row(n: int, event_id: str | None = None, run: str = "r-ids", stream: str | None = None):
    """Line n, with an id of its own (n in hex) unless given one."""
    line = {
        "kind": "BudgetDebited",
        "id": event_id or f"{n:032x}",
        "t": T,
        "run_id": run,
        "amount": 1,
    }
    return line if stream is None else {**line, "stream": stream}


def lines(count: int, ids: dict[int, str] | None = None) -> list[dict]:
    """`count` lines of one run, line n with the id ids[n] where given, else its own."""
    return [row(n, (ids or {}).get(n)) for n in range(1, count + 1)]


LATE = CHUNK * 2 + 5  # past two appends: the reading that writes would have stored line 1

FILES = {
    "twice in one append": lines(LATE + 5, {LATE: f"{LATE - 2:032x}"}),
    "an earlier append's": lines(LATE + 5, {LATE: f"{1:032x}"}),
    "an earlier line of another stream": [
        row(1),
        row(2),
        {"kind": "DriverLeased", "id": f"{2:032x}", "t": T, "run_id": "r-ids", "holder": "w"}
        | {"expires": 1.0, "at_version": 0, "stream": "control-r-ids"},
    ],
    # one append, two lines each repeating an earlier line: the store names the one it
    # stored first (the earlier line), whichever comes first in the append
    "two earlier lines": lines(LATE + 5, {LATE: f"{7:032x}", LATE + 1: f"{3:032x}"}),
    "stored before": lines(LATE + 5, {LATE: STORED[0]}),
    # stored before wins over an earlier line of the file, and the first stored over a later
    "stored before and an earlier line": lines(
        LATE + 5, {LATE: f"{3:032x}", LATE + 1: STORED[2], LATE + 2: STORED[1]}
    ),
    "stored in the file's first append": lines(10, {4: STORED[1]}),
    "a good file": lines(LATE + 5),
    # the same event where the file puts it: it writes nothing, and refuses nothing
    "a stored run's own events": [
        row(1, STORED[0], "r-stored", "run-r-stored"),
        row(2, run="r-new"),
    ],
}


def store_before(alias: str) -> None:
    journal = DjangoJournal(alias)
    for n, event_id in enumerate(STORED):
        event = BudgetDebited(id=event_id, t=T, run_id="r-stored", amount=1)
        journal.append("run-r-stored", [event], n)


def reading(alias: str, data: bytes, dry: bool) -> Importer:
    source = io.BytesIO(data)
    importer = Importer(DjangoJournal(alias), _fingerprint(source, 1 << 30, "f"), None, None, dry)
    if dry:
        importer.read(source, False)
        return importer
    with transaction.atomic(using=alias):
        importer.read(source, False)
        transaction.set_rollback(True, using=alias)
    return importer


@pytest.mark.parametrize("name", FILES)
def test_the_first_reading_refuses_an_id_as_the_second_says_it(alias, name):
    store_before(alias)
    data = "".join(json.dumps(r) + "\n" for r in FILES[name]).encode()
    first, second = reading(alias, data, dry=True), reading(alias, data, dry=False)
    assert first.problems.shown == second.problems.shown
    assert first.problems.count == second.problems.count
    assert bool(first.problems) == (name not in ("a good file", "a stored run's own events"))


def test_an_id_stored_after_the_first_reading_is_refused_by_the_second(alias, monkeypatch):
    data = "".join(json.dumps(r) + "\n" for r in lines(LATE + 5)).encode()
    first_reading = Importer.read

    def then_another_writer(self, source, allow_torn):
        first_reading(self, source, allow_torn)
        if self.dry:  # between the readings: another writer stores line LATE's id
            late = BudgetDebited(id=f"{LATE:032x}", run_id="r-other", amount=1)
            DjangoJournal(alias).append("run-r-other", [late], 0)

    monkeypatch.setattr(Importer, "read", then_another_writer)
    stored = StoredEvent.objects.using(alias)
    with pytest.raises(ImportRefused) as refused:
        import_journal(io.BytesIO(data), using=alias)
    assert refused.value.problems == [
        f"line {LATE}: field 'id': event id {LATE:032x} is already stored "
        "(stream 'run-r-other', version 1)"
    ]
    assert list(stored.values_list("stream", flat=True)) == ["run-r-other"]  # its event alone


def test_the_ids_kept_take_a_few_bytes_each():
    """The first reading keeps every id it would append: 16 bytes and 8 to 16 of index each,
    where a set of Python ints held about 80."""
    tracemalloc.start()
    try:
        ids = FileIds()
        for line in range(1, 100_001):
            assert ids.add(line.to_bytes(16, "big"), line) is None
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert held < 100_000 * 34
    assert ids.add((5).to_bytes(16, "big"), 100_001) == 5
    assert ids.add((100_001).to_bytes(16, "big"), 100_001) is None


def test_the_lines_between_the_ids_kept_are_not_taken_for_an_id_of_zeros():
    ids = FileIds()
    assert ids.add(b"a" * 16, 3) is None and ids.add(b"b" * 16, 900) is None
    assert ids.add(bytes(16), 901) is None  # (the id a line that appended nothing is left at)
    assert ids.add(b"b" * 16, 950) == 900 and ids.add(b"a" * 16, 951) == 3
    assert ids.add(bytes(16), 952) == 901 and ids.add(b"c" * 16, 953) is None
