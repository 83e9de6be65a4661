from __future__ import annotations

import errno
import json
import multiprocessing
import os

import pytest

from runtime.events import BudgetDebited, ModelResponded
from runtime.journal import WrongExpectedVersion
from runtime.jsonl import JournalCorrupt, JsonlJournal
from tests.runtime.journal_contract import JournalContract, debit


class TestJsonlJournal(JournalContract):
    @pytest.fixture
    def journal(self, tmp_path):
        return JsonlJournal(tmp_path / "j.jsonl")


def lines(path):
    return path.read_text().splitlines()


def test_each_event_is_one_flat_line_with_its_envelope(tmp_path):
    path = tmp_path / "j.jsonl"
    JsonlJournal(path).append("run-r1", [BudgetDebited(run_id="r1", agent="coder", amount=5)], 0)
    row = json.loads(lines(path)[0])
    assert row["kind"] == "BudgetDebited" and row["v"] == 1 and row["amount"] == 5
    assert (row["stream"], row["version"], row["run_id"], row["agent"]) == (
        "run-r1",
        1,
        "r1",
        "coder",
    )
    assert isinstance(row["t"], float) and row["id"]


def test_a_second_journal_object_sees_what_the_first_wrote(tmp_path):
    path = tmp_path / "j.jsonl"
    a, b = JsonlJournal(path), JsonlJournal(path)
    a.append("run-x", [debit(1)], 0)
    with pytest.raises(WrongExpectedVersion):
        b.append("run-x", [debit(2)], 0)
    b.append("run-x", [debit(2)], 1)
    assert [r.event.amount for r in a.read("run-x")] == [1, 2]


def test_a_torn_final_line_is_tolerated_reported_and_cut_on_the_next_append(tmp_path):
    path = tmp_path / "j.jsonl"
    JsonlJournal(path).append("run-x", [debit(1)], 0)
    with open(path, "a") as f:
        f.write('{"kind": "BudgetDebited", "amou')  # the process died mid-write
    journal = JsonlJournal(path)
    assert journal.version("run-x") == 1
    assert journal.torn is not None and journal.torn.line_no == 2
    assert "torn final line" in journal.torn.describe(path)
    journal.append("run-x", [debit(2)], 1)
    assert journal.torn is None
    assert [json.loads(line)["amount"] for line in lines(path)] == [1, 2]


def test_a_complete_final_line_without_newline_is_an_event_not_a_tear(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_text('{"kind": "BudgetDebited", "amount": 4}')
    journal = JsonlJournal(path)
    assert journal.torn is None
    assert journal.version("run-imported") == 1
    journal.append("run-imported", [debit(2)], 1)
    assert len(lines(path)) == 2


@pytest.mark.parametrize(
    "bad, problem",
    [
        ("this is not json", "line 2: not JSON"),
        # json raises a plain ValueError for this one, which nobody caught
        ('{"kind": "BudgetDebited", "amount": ' + "9" * 5000 + "}", "longer than 4,300 digits"),
        # NaN and Infinity are refused by name, where they were called too long a number
        ('{"kind": "BudgetDebited", "amount": NaN}', "line 2: not JSON: NaN is not a number"),
        ('{"kind": "BudgetDebited", "amount": -Infinity}', "line 2: not JSON: -Infinity is not"),
        ("[1, 2]", "line 2: expected a JSON object, got list"),
        ('{"kind": "Teleported"}', "line 2: unknown kind 'Teleported'"),
        ('{"kind": "BudgetDebited"}', "line 2: BudgetDebited: missing field 'amount'"),
        ('{"kind": "BudgetDebited", "amount": "many"}', "line 2: BudgetDebited: field 'amount'"),
        ("", "line 2: empty line"),
    ],
)
def test_an_unreadable_line_before_the_end_stops_the_reader_naming_it(tmp_path, bad, problem):
    path = tmp_path / "j.jsonl"
    path.write_text(
        '{"kind": "BudgetDebited", "amount": 1}\n'
        + bad
        + "\n"
        + '{"kind": "BudgetDebited", "amount": 1}\n'
    )
    with pytest.raises(JournalCorrupt) as info:
        JsonlJournal(path)
    assert problem in str(info.value)
    assert info.value.line_no == 2


def test_an_invalid_final_line_that_is_json_is_an_error_not_a_tear(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_text('{"kind": "BudgetDebited", "amount": 1}\n{"kind": "Nope"}')
    with pytest.raises(JournalCorrupt, match="line 2: unknown kind"):
        JsonlJournal(path)


def test_a_broken_version_sequence_is_refused(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_text(
        '{"kind": "BudgetDebited", "amount": 1, "stream": "run-a", "version": 1}\n'
        '{"kind": "BudgetDebited", "amount": 1, "stream": "run-a", "version": 3}\n'
    )
    with pytest.raises(
        JournalCorrupt,
        match="line 2: broken version sequence in stream 'run-a': expected version 2, found 3",
    ):
        JsonlJournal(path)


def test_a_shared_stream_may_be_a_slice_of_a_stores_stream(tmp_path):
    # A support-desk run exported from the store carries its own events of the order's facts
    # (the order's creation, version 1, is no run's): the views, diff and otlp must read it.
    path = tmp_path / "j.jsonl"
    path.write_text(
        '{"kind": "BudgetDebited", "amount": 1, "stream": "run-a", "version": 1}\n'
        '{"kind": "BudgetDebited", "amount": 1, "stream": "subject-order:o-1", "version": 2}\n'
        '{"kind": "BudgetDebited", "amount": 1, "stream": "subject-order:o-1", "version": 5}\n'
    )
    journal = JsonlJournal(path)
    assert [r.version for r in journal.read("subject-order:o-1")] == [2, 5]
    assert [r.version for r in journal.read("subject-order:o-1", after=2)] == [5]
    assert journal.version("subject-order:o-1") == 5
    journal.append("subject-order:o-1", [BudgetDebited(amount=1)], 5)
    assert [r.version for r in JsonlJournal(path).read("subject-order:o-1")] == [2, 5, 6]


def test_a_runs_own_stream_may_not_start_past_one(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_text('{"kind": "BudgetDebited", "amount": 1, "stream": "lease-a", "version": 2}\n')
    with pytest.raises(JournalCorrupt, match="stream 'lease-a': expected version 1, found 2"):
        JsonlJournal(path)


def test_a_reference_runtime_journal_reads_as_one_run(tmp_path):
    path = tmp_path / "ref.jsonl"
    path.write_text(
        '{"kind": "RunStarted", "agent": "coder", "task": "Make the failing parser test pass."}\n'
        '{"kind": "ModelResponded", "agent": "coder", "usage": 120}\n'
        '{"kind": "ModelResponded", "agent": "coder", "usage": 120}\n'
    )
    records = JsonlJournal(path).read("run-imported")
    assert [r.version for r in records] == [1, 2, 3]
    assert isinstance(records[1].event, ModelResponded)
    # identical lines still get distinct, stable ids
    assert records[1].event.id != records[2].event.id
    assert JsonlJournal(path).read("run-imported")[1].event.id == records[1].event.id


def _append_many(path, start, count):
    journal = JsonlJournal(path)
    done = 0
    while done < count:
        try:
            journal.append("run-shared", [debit(start + done)], journal.version("run-shared"))
            done += 1
        except WrongExpectedVersion:
            pass


def test_processes_appending_to_one_file_serialize_without_losing_a_line(tmp_path):
    path = tmp_path / "j.jsonl"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_append_many, args=(path, i * 100, 25)) for i in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
        assert p.exitcode == 0
    records = JsonlJournal(path).read("run-shared")
    assert [r.version for r in records] == list(range(1, 76))
    assert sorted(r.event.amount for r in records) == sorted(
        i * 100 + k for i in range(3) for k in range(25)
    )
    assert os.path.getsize(path) == sum(len(line) + 1 for line in lines(path))


def test_a_write_that_fails_part_way_leaves_none_of_its_lines(tmp_path, file_size_limit):
    path = tmp_path / "j.jsonl"
    journal = JsonlJournal(path)
    journal.append("run-a", [debit(1)], 0)
    before = path.read_bytes()
    # Room for about two more lines: the batches' first events fit, the rest do not.
    file_size_limit(len(before) * 3)
    with pytest.raises(OSError) as info:
        journal.append_batches(
            [("run-a", [debit(i) for i in range(2, 6)], 1), ("run-b", [debit(6)], 0)]
        )
    assert info.value.errno == errno.EFBIG
    assert path.read_bytes() == before
    assert [r.event.amount for r in JsonlJournal(path).read_all()] == [1]
    assert journal.version("run-a") == 1 and journal.version("run-b") == 0
    file_size_limit(None)
    journal.append("run-a", [debit(7)], 1)  # and the next write goes on from there
    assert [r.event.amount for r in JsonlJournal(path).read_all()] == [1, 7]
