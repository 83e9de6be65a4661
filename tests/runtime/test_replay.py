"""Replaying a run from its journal alone reproduces the same events, errors included."""

from __future__ import annotations

import json

import pytest

from runtime import errors, flight
from runtime.events import ErrorInfo, ToolReturned
from runtime.journal import MemoryJournal
from runtime.jsonl import JsonlJournal
from runtime.served import replayed_outcome
from runtime.session import Session
from runtime.stops import ReplayDivergence
from tests.runtime.helpers import facts


@pytest.fixture(scope="module")
def flown(tmp_path_factory):
    where = tmp_path_factory.mktemp("flown")
    journal = JsonlJournal(where / "j.jsonl")
    config = flight.plan("solo", "solo-fix", "r-rep")
    outcome = flight.fly(journal, config, "r-rep", where)
    assert outcome.status == "done"
    return where / "j.jsonl"


def test_a_recorded_error_is_reraised_with_its_type_and_message():
    info = ErrorInfo(type="FileNotFoundError", message="no file 'parser.py'")
    exc = errors.rebuild(info)
    assert errors.describe(exc) == info and str(exc) == "no file 'parser.py'"
    recorded = ToolReturned(
        tool="read_file", error=ErrorInfo(type="FileNotFoundError", message="gone")
    )
    outcome = replayed_outcome(recorded)
    assert outcome.error == ErrorInfo(type="FileNotFoundError", message="gone")


def test_replaying_a_run_with_a_tool_error_reproduces_every_event(flown):
    events = [r.event for r in JsonlJournal(flown).read("run-r-rep")]
    assert any(e.kind == "ToolReturned" and e.error is not None for e in events)
    report = flight.replay(JsonlJournal(flown), "r-rep")
    assert report.identical and report.complete and report.events == len(events)


def test_the_replayed_events_equal_the_recorded_ones_but_for_timestamps_and_ids(flown):
    events = [r.event for r in JsonlJournal(flown).read("run-r-rep")]
    config = flight.recorded_config(events, "r-rep")
    target = MemoryJournal()
    session = Session(target, "r-rep", recorded=events, replay=True)
    flight.drive(session, config, flown.parent, live=False)
    replayed = [r.event for r in target.read("run-r-rep")]
    assert facts(replayed) == facts(events)


def tampered(flown, tmp_path, change):
    rows = [json.loads(line) for line in flown.read_text().splitlines()]
    change(rows)
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return JsonlJournal(path)


def test_a_journal_that_does_not_match_the_code_is_reported_at_the_first_difference(
    flown, tmp_path
):
    at = []

    def change(rows):
        first = next(r for r in rows if r["kind"] == "ModelCalled")
        first["window_chars"] += 1
        at.append(first["version"])

    report = flight.replay(tampered(flown, tmp_path, change), "r-rep")
    assert not report.identical
    assert f"at version {at[0]}" in report.difference and "ModelCalled" in report.difference


def test_a_changed_tool_result_shows_up_in_what_the_model_saw_next(flown, tmp_path):
    def change(rows):
        listing = next(r for r in rows if r["kind"] == "ToolReturned" and r["tool"] == "list_files")
        listing["result"].append("injected.py")

    report = flight.replay(tampered(flown, tmp_path, change), "r-rep")
    assert not report.identical and "ModelCalled" in report.difference


def test_an_unfinished_journal_replays_identical_up_to_its_end(flown, tmp_path):
    def cut(rows):
        # the run's first 21 events (the intent it declared lives in a stream of its own)
        kept = [i for i, r in enumerate(rows) if r.get("stream") == "run-r-rep"][:21]
        del rows[kept[-1] + 1 :]

    report = flight.replay(tampered(flown, tmp_path, cut), "r-rep")
    assert report.identical and not report.complete and report.events == 21


def test_a_journal_with_extra_events_differs(flown, tmp_path):
    def change(rows):
        own = [r for r in rows if r.get("stream") == "run-r-rep"]
        extra = dict(own[-1], id="extra", version=len(own) + 1)
        rows.append(extra)

    report = flight.replay(tampered(flown, tmp_path, change), "r-rep")
    assert not report.identical and "the journal goes on with TeamFinished" in report.difference


def test_a_session_refuses_to_write_over_a_different_record():
    journal = MemoryJournal()
    session = Session(journal, "r-1")
    session.emit(ToolReturned(run_id="r-1", tool="a", result=1))
    resumed = Session(journal, "r-1")
    with pytest.raises(ReplayDivergence, match="the journal has ToolReturned"):
        resumed.emit(ToolReturned(run_id="r-1", tool="a", result=2))
    assert journal.version("run-r-1") == 1


def test_a_tool_result_changed_to_the_same_length_shows_up_in_the_next_call(flown, tmp_path):
    # The window's count and size stay the same; only its digest (ModelCalled v2) tells.
    def change(rows):
        listing = next(r for r in rows if r["kind"] == "ToolReturned" and r["tool"] == "list_files")
        first = listing["result"][0]
        listing["result"][0] = ("X" if first[0] != "X" else "Y") + first[1:]

    report = flight.replay(tampered(flown, tmp_path, change), "r-rep")
    assert not report.identical and "ModelCalled" in report.difference
    assert "window_digest" in report.difference


def test_a_system_prompt_edited_to_the_same_length_is_not_identical(flown, monkeypatch):
    from teams.solo import harness

    edited = harness.CODER_SYSTEM.replace("You are the coder.", "You are the tutor.")
    assert len(edited) == len(harness.CODER_SYSTEM) and edited != harness.CODER_SYSTEM
    monkeypatch.setattr(harness, "CODER_SYSTEM", edited)
    report = flight.replay(JsonlJournal(flown), "r-rep")
    assert not report.identical and "ModelCalled" in report.difference


def test_a_journal_from_before_window_digests_still_replays_identical(flown, tmp_path):
    def as_v1(rows):
        for row in rows:
            if row["kind"] == "ModelCalled":
                assert len(row.pop("window_digest")) == 32
                row["v"] = 1

    report = flight.replay(tampered(flown, tmp_path, as_v1), "r-rep")
    assert report.identical and report.complete


def test_every_model_call_records_the_digest_of_its_window(flown):
    calls = [
        r.event for r in JsonlJournal(flown).read("run-r-rep") if r.event.kind == "ModelCalled"
    ]
    digests = [c.window_digest for c in calls]
    assert calls and all(d is not None and len(d) == 32 for d in digests)
    assert len(set(digests)) == len(digests)  # each turn's window has more in it
