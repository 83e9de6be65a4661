"""Forking a run at one of its events: the fork's past is the parent's, read back from the
record; what a person changed applies from the fork point on; a fork that would not replay is
refused before anything is written."""

from __future__ import annotations

import re
import shutil

import pytest

from runtime import compare, flight, fork, fork_workspace, streams
from runtime.cli import main
from runtime.events import (
    DeadLettered,
    DeadLetterRetried,
    EffectStarted,
    MessageInjected,
    ModelCalled,
    RunForked,
    ToolDispatched,
    ToolReturned,
)
from runtime.jsonl import JsonlJournal
from runtime.workspace import git
from teams.desk.local import FilePayments

pytestmark = pytest.mark.slow


@pytest.fixture
def parent(fly_team, tmp_path):
    """A copy of a first flight's journal (forks write into it), beside the flights' root."""
    flown = fly_team("first-flight")
    path = tmp_path / "j.jsonl"
    shutil.copy(flown.path, path)
    return path, flown.run_id, flown.path.parent


def position_of(journal, run_id, kind, agent=None, tool=None, n=1):
    found = [
        r
        for r in journal.read(streams.journal(run_id))
        if r.event.kind == kind
        and (agent is None or r.event.agent == agent)
        and (tool is None or getattr(r.event, "tool", None) == tool)
    ]
    return found[n - 1].position


def fork_and_fly(path, parent_id, child, at, root, changes=None, by="ana"):
    journal = JsonlJournal(path)
    planned = fork.plan(
        fork.records_of(journal, parent_id), parent_id, child, at, changes or fork.Changes(), by
    )
    fork.verify(journal, planned)
    fork_workspace.restore_workspace(planned, root)
    fork.write(journal, planned)
    outcome = flight.resume(journal, child, root)
    return journal, planned, outcome


def test_a_fork_without_changes_goes_on_as_its_parent_did(parent):
    path, run_id, root = parent
    journal = JsonlJournal(path)
    at = position_of(journal, run_id, "ToolReturned", "coder", "read_file")
    journal, _, outcome = fork_and_fly(path, run_id, "r-same", at, root)
    assert outcome.status == "done"
    a = flight.run_records(journal, run_id)
    b = flight.run_records(journal, "r-same")
    assert compare.compare(a, b).identical
    assert flight.replay(journal, "r-same").identical
    [forked] = [
        r.event for r in journal.read(streams.journal("r-same")) if isinstance(r.event, RunForked)
    ]
    assert isinstance(forked, RunForked)
    assert (forked.parent, forked.at, forked.by) == (run_id, at, "ana")
    assert forked.number == [r.position for r in a].index(at) + 1
    # The copy is the fork's own: new ids, its own run id, its own workspace.
    assert {r.event.id for r in a}.isdisjoint({r.event.id for r in b})
    assert {r.event.run_id for r in b} == {"r-same"}
    assert (root / "r-same.workspace" / ".git").is_dir()


def test_a_message_for_an_agent_reaches_its_next_turn(parent):
    path, run_id, root = parent
    journal = JsonlJournal(path)
    at = position_of(journal, run_id, "ToolReturned", "coder", "read_file")
    changes = fork.Changes(message=("coder", "Mind the empty line."))
    journal, _, outcome = fork_and_fly(path, run_id, "r-said", at, root, changes)
    assert outcome.status == "done"
    events = [r.event for r in journal.read(streams.journal("r-said"))]
    [note] = [e for e in events if isinstance(e, MessageInjected)]
    assert (note.agent, note.by, note.text) == ("coder", "ana", "Mind the empty line.")
    # The coder's next call after the fork point saw one more message than its parent's did.
    mine = [e for e in events if isinstance(e, ModelCalled) and e.agent == "coder"]
    theirs = [
        r.event
        for r in journal.read(streams.journal(run_id))
        if isinstance(r.event, ModelCalled) and r.event.agent == "coder"
    ]
    index = next(i for i, e in enumerate(events) if e is note)
    after = next(i for i, e in enumerate(mine) if events.index(e) > index)
    assert mine[after].messages == theirs[after].messages + 1
    assert [e.messages for e in mine[:after]] == [e.messages for e in theirs[:after]]
    assert flight.replay(journal, "r-said").identical


def test_a_replaced_tool_result_is_where_the_runs_part(parent):
    path, run_id, root = parent
    journal = JsonlJournal(path)
    at = position_of(journal, run_id, "ToolReturned", "coder", "read_file")
    changes = fork.Changes(tool_result="def parse(line):\n    return []\n", replace_result=True)
    journal, _, _ = fork_and_fly(path, run_id, "r-swap", at, root, changes)
    a = flight.run_records(journal, run_id)
    b = flight.run_records(journal, "r-swap")
    parted = compare.compare(a, b).divergence
    assert parted is not None and parted.label == "coder's 2nd tool result"
    assert parted.b.content["result"] == "def parse(line):\n    return []\n"
    assert flight.replay(journal, "r-swap").identical


def test_a_fork_after_a_commit_works_in_the_parents_repository_as_it_stood(parent):
    path, run_id, root = parent
    journal = JsonlJournal(path)
    committed = next(
        r.event
        for r in journal.read(streams.journal(run_id))
        if r.event.kind == "CandidateCommitted"
    )
    at = position_of(journal, run_id, "CandidateCommitted")
    journal, _, outcome = fork_and_fly(path, run_id, "r-later", at, root)
    assert outcome.status == "done", outcome.reason
    work = root / "r-later.workspace"
    assert git(work, "rev-parse", committed.branch) == committed.commit
    assert flight.replay(journal, "r-later").identical


@pytest.mark.parametrize(
    ("where", "changes", "says"),
    [
        ("nowhere", fork.Changes(), "is not an event of run"),
        ("verdict", fork.Changes(), "is the run's verdict"),
        ("call", fork.Changes(tool_result=1, replace_result=True), "fork at a ToolReturned"),
        ("call", fork.Changes(models={"nobody": "endpoint"}), "the run has no agent 'nobody'"),
        ("call", fork.Changes(models={"coder": "oracle"}), "'oracle' is not a backend"),
        ("call", fork.Changes(message=("coder", " ")), "say something"),
        ("edited", fork.Changes(), "edits that no commit records yet"),
        ("call", fork.Changes(allowance=0), "greater than or equal to 1"),
        ("call", fork.Changes(max_turns=5_001), "less than or equal to 5000"),
    ],
)
def test_a_fork_that_cannot_be_made_is_refused_and_writes_nothing(parent, where, changes, says):
    path, run_id, root = parent
    journal = JsonlJournal(path)
    at = {
        "nowhere": 10**6,
        "verdict": position_of(journal, run_id, "TeamFinished"),
        "call": position_of(journal, run_id, "ToolDispatched", "coder", "read_file"),
        "edited": position_of(journal, run_id, "ToolReturned", "coder", "edit_file"),
    }[where]
    before = path.read_bytes()
    with pytest.raises(fork.ForkRefused, match=says):
        planned = fork.plan(fork.records_of(journal, run_id), run_id, "r-no", at, changes, "ana")
        fork.verify(journal, planned)
        fork_workspace.restore_workspace(planned, root)
    assert path.read_bytes() == before
    assert not (root / "r-no.workspace").exists()


def test_a_fork_of_a_desk_run_makes_no_side_effect_its_parent_made(fly_team, tmp_path):
    flown = fly_team("double-refund", team="support-desk")
    work = tmp_path / "desk"
    shutil.copytree(flown.path.parent, work, ignore=shutil.ignore_patterns("*.workspace"))
    path = work / flown.path.name
    journal = JsonlJournal(path)
    records = journal.read(streams.journal(flown.run_id))
    refunds = [
        r.position
        for r in records
        if isinstance(r.event, ToolReturned) and r.event.tool == "issue_refund"
    ]
    # the support agent has decided, nothing is refunded yet: its first refund's dispatch
    before_refund = next(
        r.position
        for r in records
        if isinstance(r.event, ToolDispatched) and r.event.tool == "issue_refund"
    )
    for n, at in enumerate((before_refund, refunds[0], refunds[1])):
        child = f"r-fork{n}"
        _, _, outcome = fork_and_fly(path, flown.run_id, child, at, work)
        assert outcome.status == "done", outcome.reason
        assert flight.replay(JsonlJournal(path), child).identical
    order = "o-" + flown.run_id.removeprefix("r-")
    assert len(FilePayments(work / "payments.sqlite3").refunds(order)) == 1
    started = [r for r in journal.read_prefix("effect-") if isinstance(r.event, EffectStarted)]
    assert [r.event.run_id for r in started] == [flown.run_id]


def test_the_command_line_forks_a_run_and_drives_it(fly_team, tmp_path, capsys):
    flown = fly_team("first-flight")
    path = tmp_path / "j.jsonl"
    shutil.copy(flown.path, path)
    at = next(r.position for r in flown.records if r.event.kind == "ToolReturned")
    root = str(flown.path.parent)
    code = main(
        [
            "fork",
            str(path),
            "--at",
            str(at),
            "--run-id",
            "r-cli",
            "--say",
            "coder=hello",
            "--workspaces",
            root,
            "--go",
            "--json",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0 and f"forked {flown.run_id} at position {at}" in out
    assert main(["replay", str(path), "--run", "r-cli"]) == 0
    capsys.readouterr()
    run = ["--run", flown.run_id]
    assert main(["fork", str(path), *run, "--at", str(at), "--tool-result", "{oops"]) == 2
    assert "--tool-result is not JSON" in capsys.readouterr().err
    assert main(["fork", str(path), *run, "--at", str(at), "--tool-result", "9" * 5000]) == 2
    assert "longer than 4,300 digits" in capsys.readouterr().err
    assert main(["fork", str(path), *run, "--at", "999999"]) == 2
    assert "is not an event of run" in capsys.readouterr().err
    # A message without its agent was read as an agent named by the whole message.
    before = path.read_bytes()
    for said in ("mind the empty line", "=mind the empty line", "coder="):
        assert main(["fork", str(path), *run, "--at", str(at), "--say", said]) == 2
        assert capsys.readouterr().err == f"error: --say wants AGENT=TEXT, got {said!r}\n"
    assert path.read_bytes() == before


def test_a_fork_the_journal_does_not_take_writes_nothing_and_leaves_no_workspace(
    parent, capsys, file_size_limit
):
    """A real failure part way through the write (the journal file may not grow past a few
    hundred bytes more: EFBIG, as a full disk gives): the command line says what failed, that
    nothing was written and to try again, exits 5, and leaves no line of the fork in the
    journal and no workspace, where it printed a traceback and left both."""
    path, run_id, root = parent
    at = position_of(JsonlJournal(path), run_id, "ToolReturned", "coder", "read_file")
    before = path.read_bytes()
    args = ["fork", str(path), "--at", str(at), "--run-id", "r-full", "--workspaces", str(root)]
    file_size_limit(len(before) + 300)
    code = main(args)
    file_size_limit(None)
    err = capsys.readouterr().err
    assert code == 5, err
    assert err == (
        f"error: the fork of run {run_id} was not written to {path}: File too large. "
        "Nothing of the fork was written, and the workspace made for it was removed; "
        "try again\n"
    )
    assert path.read_bytes() == before
    assert JsonlJournal(path).read_prefix("run-r-full") == []
    assert not (root / "r-full.workspace").exists()
    # Asked again with room to write, the same fork is made.
    assert main(args) == 0
    assert (root / "r-full.workspace" / ".git").is_dir()
    assert [type(r.event) for r in JsonlJournal(path).read("run-r-full")][-1] is RunForked


def test_the_command_line_run_again_with_its_key_forks_once(parent, capsys, monkeypatch):
    """`fork --key`: run again (its answer lost, a script retried), the command prints the fork
    the first made and writes nothing, its workspace left as the fork's work has it; the same
    key on another fork is refused naming what differs."""
    path, run_id, root = parent
    monkeypatch.setenv("USER", "ana")
    at = position_of(JsonlJournal(path), run_id, "ToolReturned", "coder", "read_file")
    # --run: once forked, the journal holds two runs.
    args = ["fork", str(path), "--at", str(at), "--say", "coder=hello", "--run", run_id]
    args += ["--workspaces", str(root), "--key", "nightly-1"]
    assert main(args) == 0
    said = capsys.readouterr().out
    [child] = re.findall(r" as (r-[0-9a-f]{12})\n", said)
    assert child == fork.keyed_id("nightly-1", "ana", run_id)
    own = root / f"{child}.workspace"
    (own / "NOTES.md").write_text("at work\n")
    before = path.read_bytes()
    assert main(args) == 0
    said = capsys.readouterr().out
    assert f"as {child} already, with this key: nothing written" in said
    assert path.read_bytes() == before
    assert (own / "NOTES.md").read_text() == "at work\n"
    assert not list(root.glob("*.staged"))
    assert main([*args[:5], "coder=bye", *args[6:]]) == 2
    err = capsys.readouterr().err
    assert f"--key: this key made run {child} with other settings (message)" in err
    assert main([*args, "--run-id", "r-both"]) == 2
    assert "give --key or --run-id, not both" in capsys.readouterr().err
    assert main([*args[:-1], "two words"]) == 2
    assert "--key: the key is 1 to 255 visible ASCII" in capsys.readouterr().err
    assert path.read_bytes() == before


def test_a_fork_put_at_the_keys_id_by_another_is_not_answered(parent, capsys, monkeypatch):
    """The command line's key names its fork by a plain hash (a journal file is one person's):
    a fork another wrote into the file at the id ana's key names, asked the same, is refused
    to ana, not answered (and driven, with --go) as hers; nothing is written."""
    path, run_id, root = parent
    at = position_of(JsonlJournal(path), run_id, "ToolReturned", "coder", "read_file")
    taken = fork.keyed_id("nightly-2", "ana", run_id)
    args = ["fork", str(path), "--at", str(at), "--run", run_id, "--workspaces", str(root)]
    monkeypatch.setenv("USER", "mallory")
    assert main([*args, "--run-id", taken]) == 0
    capsys.readouterr()
    before = path.read_bytes()
    monkeypatch.setenv("USER", "ana")
    assert main([*args, "--key", "nightly-2"]) == 2
    err = capsys.readouterr().err
    assert f"--key: this key names run {taken}, which ana did not fork" in err
    assert path.read_bytes() == before


def test_a_reply_deadline_does_not_count_the_time_before_the_fork(fly_team, tmp_path):
    """A request the parent sent two hours before the fork is not overdue in the fork: the
    clock restarts at RunForked (the reply deadline is 1,800 s by default)."""
    import json

    flown = fly_team("first-flight")
    path = tmp_path / "old.jsonl"
    lines = [json.loads(line) for line in flown.path.read_text().splitlines()]
    path.write_text("".join(json.dumps({**d, "t": d["t"] - 7_200}) + "\n" for d in lines))
    journal = JsonlJournal(path)
    at = position_of(journal, flown.run_id, "ToolReturned", "reviewer", "read_file")
    journal, _, outcome = fork_and_fly(path, flown.run_id, "r-late", at, flown.path.parent)
    assert outcome.status == "done", outcome.reason
    kinds = {r.event.kind for r in journal.read(streams.journal("r-late"))}
    assert "ReplyOverdue" not in kinds and "RunForked" in kinds


def test_another_backend_for_an_agent_answers_from_the_fork_on(parent):
    """The coder handed to the zero-intelligence backend after its first read: its past answers
    are still served from the record, and from the fork on it says its fixed done."""
    path, run_id, root = parent
    journal = JsonlJournal(path)
    at = position_of(journal, run_id, "ToolReturned", "coder", "read_file")
    changes = fork.Changes(models={"coder": "zi"})
    journal, planned, outcome = fork_and_fly(path, run_id, "r-zi", at, root, changes)
    assert planned.config.models["coder"] == "zi"
    a = flight.run_records(journal, run_id)
    b = flight.run_records(journal, "r-zi")
    parted = compare.compare(a, b).divergence
    assert parted is not None and parted.label == "coder's 3rd model answer"
    assert parted.b.content["calls"] == [{"tool": "done", "args": {"summary": "done"}}]
    assert outcome.status != "done"  # nothing edited, nothing tested: the harness does not ship it
    assert flight.replay(journal, "r-zi").identical


def test_the_wall_clock_ceiling_does_not_count_the_time_before_the_fork(fly_team, tmp_path):
    """A run with a 60 s ceiling, forked two hours after it was flown, was halted at its first
    turn ("the run hit its seconds ceiling (7204.1 of 60)"): the ceiling counted from the
    parent's first event, through the time before the fork, as a reply's deadline no longer
    does."""
    import json

    flown = fly_team("first-flight", max_seconds=60)
    path = tmp_path / "old.jsonl"
    lines = [json.loads(line) for line in flown.path.read_text().splitlines()]
    path.write_text("".join(json.dumps({**d, "t": d["t"] - 7_200}) + "\n" for d in lines))
    journal = JsonlJournal(path)
    at = position_of(journal, flown.run_id, "ToolReturned", "coder", "read_file")
    journal, _, outcome = fork_and_fly(path, flown.run_id, "r-ceiling", at, flown.path.parent)
    assert outcome.status == "done", outcome.reason
    kinds = {r.event.kind for r in journal.read(streams.journal("r-ceiling"))}
    assert "CeilingReached" not in kinds and "RunForked" in kinds
    assert flight.replay(journal, "r-ceiling").identical


def test_a_fork_made_after_its_parents_leases_ran_out_keeps_them_held(fly_team, tmp_path):
    """Each writer holds one file and wants the other's when the fork is made, seven hours
    after the parent ran (a writer's lease lasts six). The copied leases kept the parent's
    expiry: the fork found them free, each writer took the other's file, and no deadlock was
    seen. From the fork, a lease lasts what it had left at the fork point."""
    import json

    flown = fly_team("deadlocked-writers")
    path = tmp_path / "old.jsonl"
    aged = []
    for line in flown.path.read_text().splitlines():
        d = json.loads(line)
        aged.append(
            {
                **d,
                "t": d["t"] - 25_200,
                **({"expires": d["expires"] - 25_200} if "expires" in d else {}),
            }
        )
    path.write_text("".join(json.dumps(d) + "\n" for d in aged))
    journal = JsonlJournal(path)
    at = position_of(journal, flown.run_id, "LeaseTaken", n=4)  # both files held
    journal, planned, outcome = fork_and_fly(path, flown.run_id, "r-aged", at, flown.path.parent)
    assert outcome.status == "done", outcome.reason
    kinds = [r.event.kind for r in journal.read(streams.journal("r-aged"))]
    after = kinds[kinds.index("RunForked") :]
    assert after[1:4] == ["LeaseAwaited", "LeaseAwaited", "DeadlockDetected"]
    [forked] = [e for _, e in planned.events if isinstance(e, RunForked)]
    copied = [e for s, e in planned.events if s.startswith("lease-") and hasattr(e, "expires")]
    assert copied and all(e.expires > forked.t + 5 * 3_600 for e in copied)


def test_no_fork_starts_at_or_after_a_dead_letter(fly_team, tmp_path, capsys):
    """A harness's letter is named for its run (`<run>:1`): a fork at it or after it made
    `<fork>:1` in its replay where the record says `<parent>:1`, and was refused as if the
    fork's settings were at fault ("change less"), while the timeline offered it. Refused
    now, naming the letter (renamed, it would copy the parent's open letter or a person's
    decision into the fork); a fork before the letter goes on and parks its own."""
    flown = fly_team("reject-loop", park=True)
    run_id, path, work = flown.run_id, tmp_path / "j.jsonl", tmp_path / "flights"
    shutil.copy(flown.path, path)
    shutil.copytree(flown.workspace, work / flown.workspace.name)
    journal = JsonlJournal(path)
    records = journal.read(streams.journal(run_id))
    letter = fork.first_letter(records, run_id)
    assert isinstance(letter.event, DeadLettered) and letter.event.letter_id == f"{run_id}:1"
    # A person retries it: the run goes on past its letter, and parks again later.
    retried = DeadLetterRetried(run_id=run_id, letter_id=f"{run_id}:1", by="rosa", reason="again")
    journal.append(streams.journal(run_id), [retried], records[-1].version)
    assert flight.resume(journal, run_id, work).status == "dead-lettered"
    records = journal.read(streams.journal(run_id))
    [before] = [r for r in records if r.version == letter.version - 1]
    after = [r for r in records if r.position >= letter.position and r.event.kind != "TeamFinished"]
    assert {type(r.event) for r in after} >= {DeadLettered, DeadLetterRetried, ModelCalled}

    def offered(rec):
        return fork.may_follow(rec.stream, rec.event.kind, rec.position, run_id, letter.position)

    assert offered(before) and not any(offered(r) for r in after)
    for rec in after:
        said = "is" if rec is after[0] else "comes after"
        with pytest.raises(fork.ForkRefused) as refused:
            fork.plan(
                fork.records_of(journal, run_id),
                run_id,
                "r-no",
                rec.position,
                fork.Changes(),
                "ana",
            )
        assert f"{said} the run's dead letter {run_id}:1" in str(refused.value)
        assert "fork at an event before the letter" in str(refused.value)
    content = path.read_bytes()
    args = ["fork", str(path), "--run", run_id, "--workspaces", str(work)]
    assert main([*args, "--at", str(after[-1].position)]) == 2
    err = capsys.readouterr().err
    assert f"comes after the run's dead letter {run_id}:1 (the event at position" in err
    assert "would not replay" not in err
    assert path.read_bytes() == content
    # Before the letter, the fork replays, goes on live and parks its work in its own letter.
    _, _, outcome = fork_and_fly(path, run_id, "r-again", before.position, work)
    assert outcome.status == "dead-lettered"
    own = [r.event for r in journal.read("run-r-again") if isinstance(r.event, DeadLettered)]
    assert own[-1].letter_id == "r-again:1"


def test_a_position_among_the_runs_events_that_is_none_of_them_is_said_so(tmp_path, capsys):
    """A lease granted mid-run (its resume's): "not an event of the run (its events are at
    positions 2 to 47)" read as a range that held it."""
    import json

    from runtime.cli import main

    path = tmp_path / "j.jsonl"
    main(["interrupt", str(path)])
    assert main(["fly", "--team", "solo", "--journal", str(path)]) == 4
    assert main(["resume", str(path)]) == 0
    lines = path.read_text().splitlines()
    granted = [n for n, line in enumerate(lines, 1) if '"kind":"LeaseGranted"' in line][1]
    run_id = json.loads(lines[0])["run_id"]
    capsys.readouterr()
    assert main(["fork", str(path), "--at", str(granted)]) == 2
    assert capsys.readouterr().err == (
        f"error: position {granted} lies among run {run_id}'s events but is another stream's, "
        "not one of them: fork at one of the run's events\n"
    )
