"""A row of a run's journal or control stream whose kind no event model here has, or whose
version is newer than this Minutes reads (an event of another release, or a row rewritten in
the table): the error carried no row, so the step's letter said "an event of its journal" and
nobody knew which row to mend. It names the row as for any other unreadable one: its
position, its stream and version there, its kind."""

from __future__ import annotations

import json

import pytest

from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from runtime import streams
from runtime.events import EventFormatError
from services import steps
from tests.dashboard.test_a_step_that_cannot_start_its_run import (
    letter_of,
    started,
    with_bad_control_row,
)

pytestmark = pytest.mark.django_db


def a_newer_version(row: StoredEvent) -> None:
    row.v = 99
    row.save()


def an_unknown_kind(row: StoredEvent) -> None:
    row.kind = "Teleported"
    row.save()


def control_row() -> StoredEvent:
    _, row = with_bad_control_row()
    row.data = json.dumps({**json.loads(row.data), "by": "owner"})  # it reads again
    row.save()
    return row


def journal_row() -> StoredEvent:
    run_id = started()
    rows = StoredEvent.objects.filter(stream=streams.journal(run_id)).order_by("version")
    return rows[len(rows) // 2]


@pytest.mark.parametrize("spoil", [a_newer_version, an_unknown_kind])
@pytest.mark.parametrize("stream", ["control", "journal"])
def test_the_letter_names_the_row(spoil, stream):
    row = control_row() if stream == "control" else journal_row()
    spoil(row)
    with pytest.raises(EventFormatError) as refused:
        DjangoJournal().read(row.stream)
    assert refused.value.row == (row.position, row.stream, row.version, row.kind)
    assert f"position {row.position}" in str(refused.value)

    assert steps.drive_step(row.run_id, "test") == "dead-lettered"
    reason = letter_of(row.run_id)["reason"]
    assert f"position {row.position} (version {row.version} of {row.stream}" in reason
    assert row.kind in reason and "an event of its journal" not in reason
