"""What a tool or the harness's git hands to the journal is something an event can hold: no
lone surrogates (a file name or text in bytes that are not UTF-8, which an agent's test may
make), and no more than one journal line may carry (a listing of 30,000 files, a file of
control characters, a diff of a 60 MB file). Each of these stopped the run's write: the
ToolReturned or the CandidateCommitted could not be written, and a resume ran into it again."""

from __future__ import annotations

import json

import pytest

from runtime import flat, flight, git_run, workspace
from runtime.events import CandidateCommitted, ToolReturned, WorktreeRemoved, payload_json
from runtime.events.base import LINE_BYTES
from runtime.jsonl import JsonlJournal
from runtime.model import ScriptedClient, ToolCall, call
from runtime.session import Session
from runtime.team import Services
from runtime.tools import MAX_ERROR_CHARS, MAX_RESULT_BYTES, Tool, Toolbox, execute, schema
from teams.repos import template

RUN = "r-bytes"


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "w"
    workspace.prepare(root, template("parse-empty"))
    return root


def answer(root, name, **args):
    box = Toolbox(workspace.toolset(root, None))
    tool = box.check(ToolCall(id="c", name=name, args=args), "coder")
    return execute(tool, args)


def test_a_file_name_that_is_not_utf8_is_listed_mended_and_the_run_goes_on(tmp_path):
    """The coder's test makes `notes-\\xff.txt`; its list_files came back with a lone
    surrogate and the run stopped at its ToolDispatched, resume stopping there again."""
    made = "def test_name():\n    open(b'notes-\\xff.txt', 'w').close()\n"
    script = [
        call("write_file", 10, path="tests/test_name.py", content=made),
        call("run_tests", 10, target="tests/test_name.py"),
        call("list_files", 10),
        call("done", 10, summary="listed"),
    ]
    path, where = tmp_path / "j.jsonl", tmp_path / "ws"
    where.mkdir()
    team = flight.team_named("solo")
    outcome = team.fly(
        Session(JsonlJournal(path), RUN),
        flight.plan("solo", None, RUN),
        {"coder": ScriptedClient(script, "coder")},
        where,
        Services(),
    )
    assert outcome.status in ("done", "failed")  # it ends, in words, not in an exception
    [listed] = [
        r.event
        for r in JsonlJournal(path).read(f"run-{RUN}")
        if isinstance(r.event, ToolReturned) and r.event.tool == "list_files"
    ]
    assert "notes-\ufffd.txt" in listed.result
    assert flight.replay(JsonlJournal(path), RUN).identical


def test_a_text_file_in_other_bytes_is_refused_naming_the_byte(repo):
    (repo / "latin1.txt").write_bytes(b"caf\xe9\n")
    outcome = answer(repo, "read_file", path="latin1.txt")
    assert outcome.error.type == "NotText"
    assert outcome.error.message == "'latin1.txt' is not UTF-8 text (byte 0xe9 at offset 3)"


def test_a_candidate_holding_other_bytes_commits_with_its_diff_mended(repo):
    """`git diff` of a Latin-1 file raised UnicodeDecodeError after the commit was made:
    every resume failed at the same diff."""
    (repo / "latin1.txt").write_bytes(b"caf\xe9\n")
    made = workspace.commit_candidate(repo, "candidate/T1", "latin-1")
    assert made["files"] == ["latin1.txt"]
    assert "+caf\ufffd" in made["diff"]
    payload_json(ToolReturned(tool="x", result=made))  # an event holds it


def test_a_diff_past_what_an_event_carries_is_cut_with_the_whole_changes_stat(repo):
    line = "x" * 99 + "\n"
    (repo / "big.txt").write_text(line * (2 * git_run.MAX_DIFF // len(line)))
    (repo / "small.txt").write_text("small\n")
    made = workspace.commit_candidate(repo, "candidate/T1", "big")
    diff = made["diff"]
    assert made["files"] == ["big.txt", "small.txt"]
    kept, said = diff.split("[the diff is cut here: ")
    assert len(kept.encode()) <= git_run.MAX_DIFF and kept.endswith("\n")
    assert said.startswith(f"{len(workspace.git(repo, 'diff', 'main', 'candidate/T1')) + 1:,}")
    assert "big.txt   | 4000 +" in said and "small.txt |    1 +" in said
    assert "2 files changed, 4001 insertions(+)" in said


def test_a_listing_past_its_limit_says_how_many_it_left_out(repo, monkeypatch):
    monkeypatch.setattr(workspace, "MAX_LISTED", 3)
    everything = sorted(
        p.relative_to(repo).as_posix()
        for p in repo.rglob("*")
        if p.is_file() and ".git" not in p.parts and "__pycache__" not in p.parts
    )
    assert len(everything) > 3
    listed = answer(repo, "list_files").result
    assert listed[:3] == everything[:3]
    assert listed[3:] == [
        f"[{len(everything) - 3:,} more files not listed: list one folder at a time]"
    ]


def test_a_result_larger_than_an_event_keeps_is_refused_and_said(repo):
    """200,000 control characters are 1.2 MB of JSON: past the line an import takes, the
    run's own export would not import again."""
    (repo / "controls.txt").write_bytes(b"\x01" * workspace.MAX_READ)
    outcome = answer(repo, "read_file", path="controls.txt")
    assert outcome.error.type == "ResultTooLarge"
    assert outcome.error.message == (
        f"read_file ran, but its result is {6 * workspace.MAX_READ + 2:,} bytes as the journal "
        f"writes it, more than the {MAX_RESULT_BYTES:,} it keeps for one result; it was not "
        "kept"
    )
    assert answer(repo, "read_file", path="textparse/__init__.py").error is None


def test_a_long_error_keeps_its_start_and_its_end():
    def fails() -> None:
        raise RuntimeError("first line\n" + "noise\n" * 50_000 + "the actual failure")

    outcome = execute(Tool("t", "fails", schema({}), fails), {})
    message = outcome.error.message
    assert len(message) < MAX_ERROR_CHARS + 100
    assert message.startswith("first line\n") and message.endswith("the actual failure")
    assert "characters cut ...]" in message
    assert json.loads(json.dumps(message)) == message


def test_a_refusal_recorded_before_the_limits_replays_as_it_was(tmp_path, monkeypatch):
    """A refusal (arguments its schema refuses) is worked out again on every replay, not
    served from the record: cut to today's limit there, a journal that recorded it whole
    diverged at it. A tool that ran is served as recorded; a refusal is said as it was."""
    from runtime import tools

    script = [
        call("write_file", 10, path="notes.json", content={"k": "v" * MAX_ERROR_CHARS}),
        call("done", 10, summary="refused"),
    ]
    path, where = tmp_path / "j.jsonl", tmp_path / "ws"
    where.mkdir()
    monkeypatch.setattr(tools, "MAX_ERROR_CHARS", 10 * MAX_ERROR_CHARS)  # as recorded before
    flight.team_named("solo").fly(
        Session(JsonlJournal(path), RUN),
        flight.plan("solo", None, RUN),
        {"coder": ScriptedClient(script, "coder")},
        where,
        Services(),
    )
    monkeypatch.undo()
    [refused] = [
        r.event
        for r in JsonlJournal(path).read(f"run-{RUN}")
        if isinstance(r.event, ToolReturned) and r.event.tool == "write_file"
    ]
    assert refused.error.type == "InvalidArguments"
    assert len(refused.error.message) > MAX_ERROR_CHARS
    assert flight.replay(JsonlJournal(path), RUN).identical


def test_a_checkout_discarded_with_a_name_not_utf8_is_said_in_an_event(tmp_path):
    """git gives `-z` names as they are: a tester's test that made `tests/\\xff.py` left a
    WorktreeRemoved that could not be written, after the worktree was already gone."""
    from runtime.events import WorktreeRemoved

    root = tmp_path / "w"
    commit = workspace.prepare(root, template("parse-empty"))
    workspace.add_checkout(root, "tester-T3", commit)
    looked = workspace.worktree_path(root, "tester-T3")
    (looked / "tests").joinpath(b"t\xff.py".decode("utf-8", "surrogateescape")).write_text("")
    removed = workspace.discard_checkout(root, "tester-T3")
    assert removed["discarded"] == ["tests/t\ufffd.py"]
    payload_json(WorktreeRemoved(**removed))


def line_bytes(event):
    return len(flat.dumps(event, "s", 1).encode())


def test_a_diff_of_control_characters_is_cut_as_the_journal_writes_it(repo):
    """190,000 control characters an agent's test wrote are 1.14 MB of JSON: the candidate's
    diff was kept whole, and its CandidateCommitted line was past what an import reads."""
    (repo / "controls.txt").write_bytes((b"\x01" * 999 + b"\n") * 190)
    made = workspace.commit_candidate(repo, "candidate/T1", "controls")
    kept, said = made["diff"].split("[the diff is cut here: ")
    assert git_run.journal_bytes(kept) <= git_run.MAX_DIFF and kept.endswith("\n")
    assert "controls.txt | 190 +" in said
    event = CandidateCommitted(run_id=RUN, agent="coder", task_id="T1", **made)
    assert line_bytes(event) < LINE_BYTES


def test_a_candidate_of_40000_files_lists_what_a_line_holds_and_counts_the_rest(repo):
    """Each of its events (the candidate's files, the diff's --stat) was several megabytes."""
    many = repo / "many"
    many.mkdir()
    for n in range(40_000):
        (many / f"file_with_a_rather_long_name_{n:06d}.txt").write_text("")
    made = workspace.commit_candidate(repo, "candidate/T1", "many")
    *listed, more = made["files"]
    assert listed == [f"many/file_with_a_rather_long_name_{n:06d}.txt" for n in range(len(listed))]
    assert more == f"[{40_000 - len(listed):,} more paths not listed]"
    assert made["diff"].endswith("[...]\n40000 files changed, 0 insertions(+), 0 deletions(-)")
    event = CandidateCommitted(run_id=RUN, agent="coder", task_id="T1", **made)
    assert line_bytes(event) < LINE_BYTES


def test_a_worktree_taken_away_lists_what_a_line_holds_of_what_it_discarded(repo):
    made = workspace.add_checkout(repo, "tester-T3", workspace.git(repo, "rev-parse", "HEAD"))
    where = repo.parent / f"{repo.name}.tester-T3"
    for n in range(40_000):
        (where / f"never_reviewed_{n:06d}_with_a_longer_name.py").write_text("")
    gone = workspace.discard_checkout(repo, "tester-T3")
    assert gone["discarded"][-1].endswith("more paths not listed]") and not where.exists()
    event = WorktreeRemoved(run_id=RUN, agent="tester", **gone)
    assert line_bytes(event) < LINE_BYTES and made["writer"] == "tester-T3"
