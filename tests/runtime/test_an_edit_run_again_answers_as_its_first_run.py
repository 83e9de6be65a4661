"""edit_file run again under the same call (a resumed step's: the worker died after the edit,
before its ToolReturned was written) answers as its first run did, and edits the file once."""

from __future__ import annotations

from pathlib import Path

import pytest

from runtime import edits, flight, workspace
from runtime.journal import MemoryJournal
from runtime.model import ToolCall
from runtime.tools import Call, Toolbox, execute
from teams.repos import template
from tests.runtime.helpers import facts

PARSER = "textparse/parser.py"
GUARD = "    if not text:\n        raise ValueError('empty')\n"


@pytest.fixture
def root(tmp_path):
    workspaces = tmp_path / "workspaces"
    path = workspaces / "r-edit.workspace"
    workspace.prepare(path, template("parse-empty"), workspaces)
    return path


def edit(root, call, old, new, path=PARSER):
    args = {"path": path, "old": old, "new": new}
    tool = Toolbox(workspace.toolset(root)).check(
        ToolCall(id="c1", name="edit_file", args=args), "c"
    )
    return execute(tool, args, call).observation()


def events_of(journal, run_id):
    return [r.event for r in journal.read(f"run-{run_id}")]


def signature(root):
    """The line the guard goes under, and the same line with the guard under it."""
    text = (root / PARSER).read_text()
    line = next(x for x in text.splitlines(keepends=True) if x.startswith("def parse"))
    return line, line + GUARD


def test_an_edit_whose_new_text_holds_the_old_is_made_once_when_run_again(root):
    old, new = signature(root)
    call = Call("run-r-edit", 7)
    first = edit(root, call, old, new)
    assert first == {"tool": "edit_file", "result": {"edited": PARSER}}
    assert edit(root, call, old, new) == first
    assert (root / PARSER).read_text().count(GUARD) == 1


def test_an_edit_run_again_after_it_was_made_answers_success_not_a_missing_text(root):
    old, _ = signature(root)
    call = Call("run-r-edit", 7)
    first = edit(root, call, old, "def parse_text(text):\n")
    assert edit(root, call, old, "def parse_text(text):\n") == first
    assert "def parse_text(text):\n" in (root / PARSER).read_text()


def test_an_edit_stopped_between_its_record_and_its_write_is_made_when_run_again(root):
    old, new = signature(root)
    call = Call("run-r-edit", 7)
    before = (root / PARSER).read_bytes()
    edits.WriteAhead(root, call).keep(PARSER, before, b"what the crashed run meant to write")
    assert edit(root, call, old, new)["result"] == {"edited": PARSER}
    assert (root / PARSER).read_text().count(GUARD) == 1


def test_another_call_with_the_same_arguments_is_a_new_edit(root):
    old, new = signature(root)
    edit(root, Call("run-r-edit", 7), old, new)
    again = edit(root, Call("run-r-edit", 9), GUARD, GUARD + GUARD)
    assert again["result"] == {"edited": PARSER}
    assert (root / PARSER).read_text().count(GUARD) == 2


def test_a_file_changed_between_the_two_runs_fails_the_edit_naming_it(root):
    old, new = signature(root)
    call = Call("run-r-edit", 7)
    edit(root, call, old, new)
    (root / PARSER).write_text("somebody else's text\n")
    again = edit(root, call, old, new)
    assert again["error"]["type"] == "EditLost"
    assert PARSER in again["error"]["message"]
    assert (root / PARSER).read_text() == "somebody else's text\n"  # nothing guessed


def test_the_record_is_kept_in_git_out_of_the_agents_reach(root):
    old, new = signature(root)
    edit(root, Call("run-r-edit", 7), old, new)
    assert workspace.git(root, "status", "--porcelain") == f"M {PARSER}"  # no file of ours
    [kept] = (root / ".git" / "minutes" / "edits").iterdir()
    refused = edit(root, Call("run-r-edit", 8), "x", "y", path=f".git/minutes/edits/{kept.name}")
    assert refused["error"]["type"] == "PathRefused"


def test_a_writers_worktree_keeps_its_record_in_its_own_entry_of_the_repository(root):
    workspace.add_worktree(root, "coder-a")
    here = workspace.worktree_path(root, "coder-a")
    old, new = signature(here)
    call = Call("run-r-edit", 7)
    first = edit(here, call, old, new)
    assert edit(here, call, old, new) == first
    assert (here / PARSER).read_text().count(GUARD) == 1
    entry = workspace.git(here, "rev-parse", "--absolute-git-dir")
    assert list((Path(entry) / "minutes" / "edits").glob("*.json"))
    assert not (root / ".git" / "minutes").exists()  # the workspace's own calls are apart


def test_an_edit_outside_any_session_keeps_no_record(root):
    old, new = signature(root)
    assert edit(root, None, old, new)["result"] == {"edited": PARSER}
    assert not (root / ".git" / "minutes").exists()


class Killed(BaseException):
    """The worker dies (a BaseException: no harness's `except Exception` outlives it)."""


class DiesBeforeTheEditReturns(MemoryJournal):
    """A journal whose writer dies as it would write edit_file's ToolReturned: the edit ran,
    the journal never heard how."""

    def append(self, stream, events, expected_version, fence=None):
        if any(
            getattr(e, "tool", None) == "edit_file" and e.kind == "ToolReturned" for e in events
        ):
            raise Killed()
        return super().append(stream, events, expected_version, fence)


def test_a_resumed_session_runs_the_unreturned_edit_as_the_same_call(tmp_path):
    run_id = "r-edit"
    config = flight.plan("solo", "solo-fix", run_id)
    reference = MemoryJournal()
    flight.fly(reference, config, run_id, tmp_path / "reference")
    crashed = DiesBeforeTheEditReturns()
    with pytest.raises(Killed):
        flight.fly(crashed, config, run_id, tmp_path / "crashed")
    journal = MemoryJournal()
    journal.append(f"run-{run_id}", [r.event for r in crashed.read(f"run-{run_id}")], 0)
    assert flight.resume(journal, run_id, tmp_path / "crashed").status == "done"

    assert facts(events_of(journal, run_id)) == facts(events_of(reference, run_id))
    ws = config.workspace
    assert (tmp_path / "crashed" / ws / PARSER).read_bytes() == (
        tmp_path / "reference" / ws / PARSER
    ).read_bytes()
