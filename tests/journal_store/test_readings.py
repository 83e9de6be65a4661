"""DjangoJournal.readings: a select's rows read one at a time, where select raises at the first
row no event model reads. The records that read, in order, and beside them each row that does
not (rewritten in the table: a kind no model has, a version newer than this Minutes reads, or
text that is no JSON), with its position and from_row's error naming it. The control stream's
look (services/control.py), the trace tab and the timeline read through it."""

from __future__ import annotations

import pytest

from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from runtime.events import BudgetDebited, EventFormatError

pytestmark = pytest.mark.django_db


def test_the_rows_that_read_and_those_that_do_not_each_in_order():
    journal = DjangoJournal()
    journal.append("run-r1", [BudgetDebited(run_id="r1", amount=n) for n in range(1, 6)], 0)
    rows = list(StoredEvent.objects.filter(stream="run-r1").order_by("version"))
    StoredEvent.objects.filter(position=rows[1].position).update(kind="Teleported")
    StoredEvent.objects.filter(position=rows[3].position).update(data="{not json")

    read = journal.readings("WHERE stream = %s ORDER BY version", ["run-r1"])

    assert [r.event.amount for r in read.records] == [1, 3, 5]
    assert [u.position for u in read.unreadable] == [rows[1].position, rows[3].position]
    for unread, row, kind in zip(
        read.unreadable, (rows[1], rows[3]), ("Teleported", "BudgetDebited"), strict=True
    ):
        assert isinstance(unread.error, EventFormatError)
        assert unread.error.row == (row.position, "run-r1", row.version, kind)
        assert unread.row[0] == row.position
    with pytest.raises(EventFormatError):
        journal.select("WHERE stream = %s ORDER BY version", ["run-r1"])
    assert journal.readings("WHERE stream = %s", ["run-none"]) == ([], [])
