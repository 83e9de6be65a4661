"""The tester verifies each integration in a git worktree of its own at the integrated commit,
taken away with whatever it wrote once its report is in (real git, real pytest).

In the workspace, where it used to verify, a test it added stayed in the working tree, and the
next fix's candidate (`git add -A`) took it in as that coder's work, never reviewed as the
tester's. A journal from before records no worktree for the tester, and replays as it was.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from runtime import flight, fork, fork_workspace, streams
from runtime.events import (
    CandidateCommitted,
    Integrated,
    ToolReturned,
    WorktreeAdded,
    WorktreeRemoved,
)
from runtime.journal import MemoryJournal
from runtime.jsonl import JsonlJournal
from runtime.model import call
from runtime.session import Session
from runtime.team import Scenario
from runtime.workspace import git
from teams.repo_fix.scenarios import (
    PARSER_BRIEF,
    REVIEW_BOTH,
    SCENARIOS,
    SLUG_BRIEF,
    TESTER,
    TWO_BUGS,
    WRITER_PARSER,
    WRITER_SLUG,
    green,
)

pytestmark = pytest.mark.slow

FIXTURE = (
    Path(__file__).resolve().parents[2]
    / "fixtures"
    / "journals"
    / "tester-in-the-workspace.before-worktrees.jsonl"
)
EXTRA = "tests/test_blank_lines.py"  # the tester's own test, never reviewed
# Two fixes in turn (the plan's order: T1, then T2); verifying the first (T4), the tester adds a
# test of its own. The same scenario wrote the fixture, before the tester had a worktree.
TESTER_ADDS_A_TEST = Scenario(
    name="tester-adds-a-test",
    description="Two fixes in turn; verifying the first, the tester adds a test of its own.",
    task=TWO_BUGS,
    settings={"template": "parse-and-slug"},
    scripts={
        "orchestrator": [
            call(
                "done",
                150,
                tasks=[
                    {"id": "T1", "kind": "fix", "brief": PARSER_BRIEF},
                    {"id": "T2", "kind": "fix", "brief": SLUG_BRIEF},
                ],
            )
        ],
        "coder": [*WRITER_PARSER, *WRITER_SLUG],
        "reviewer": REVIEW_BOTH,
        "tester": [
            call(
                "write_file",
                60,
                path=EXTRA,
                content="from textparse.parser import parse\n\n\n"
                "def test_a_blank_line_has_no_fields():\n    assert parse('  ') == []\n",
            ),
            call("run_tests", 90, target=EXTRA),
            green(30, "parse('  ') is [] too; I added a test of it"),
            *TESTER,
        ],
    },
)


@pytest.fixture(autouse=True)
def scenario(monkeypatch):
    monkeypatch.setitem(SCENARIOS, TESTER_ADDS_A_TEST.name, TESTER_ADDS_A_TEST)


def of(events, cls):
    return [e for e in events if isinstance(e, cls)]


def fly(root: Path, run_id: str) -> tuple[Path, flight.FlightOutcome]:
    path = root / f"{run_id}.jsonl"
    config = flight.plan("repo-fix", TESTER_ADDS_A_TEST.name, run_id)
    return path, flight.fly(JsonlJournal(path), config, run_id, root)


def events_of(path: Path, run_id: str):
    return [r.event for r in JsonlJournal(path).read(streams.journal(run_id))]


def left_clean(root: Path, run_id: str) -> None:
    """Main's working tree holds nothing uncommitted, main no tester's file, and no worktree is
    left beside the workspace."""
    work = root / f"{run_id}.workspace"
    assert git(work, "status", "--porcelain", "--untracked-files=all") == ""
    assert not (work / EXTRA).exists()
    assert EXTRA not in git(work, "ls-tree", "-r", "--name-only", "main").splitlines()
    assert git(work, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert sorted(p.name for p in root.glob(f"{run_id}.workspace*")) == [f"{run_id}.workspace"]


def test_the_testers_file_reaches_no_candidate_and_is_gone_with_its_worktree(tmp_path):
    path, outcome = fly(tmp_path, "r-tester")
    assert outcome.status == "done", outcome.reason
    events = events_of(path, "r-tester")
    [first, second] = of(events, CandidateCommitted)
    assert (first.task_id, first.files) == ("T1", ["textparse/parser.py"])
    assert (second.task_id, second.files) == ("T2", ["slugkit/slug.py"])  # the coder's alone
    assert EXTRA not in second.diff
    # Each verify in a worktree of its own at the commit just integrated (the second sees the
    # second integration), taken away with what the tester wrote there.
    integrated = [e.commit for e in of(events, Integrated)]
    added, removed = of(events, WorktreeAdded), of(events, WorktreeRemoved)
    assert [(e.agent, e.task_id, e.writer, e.branch) for e in added] == [
        ("tester", "T4", "tester-T4", ""),
        ("tester", "T6", "tester-T6", ""),
    ]
    assert [e.base for e in added] == integrated
    assert [e.path for e in added] == [
        "r-tester.workspace.tester-T4",
        "r-tester.workspace.tester-T6",
    ]
    assert [(e.writer, e.discarded) for e in removed] == [("tester-T4", [EXTRA]), ("tester-T6", [])]
    [wrote] = [
        e for e in of(events, ToolReturned) if e.agent == "tester" and e.tool == "write_file"
    ]
    assert wrote.error is None and wrote.result == {"written": EXTRA, "bytes": 105}
    # Its run of its own test ran in its worktree, where the test was.
    tests = [
        e.result for e in of(events, ToolReturned) if e.agent == "tester" and e.tool == "run_tests"
    ]
    assert [(r["passed"], r["failed"]) for r in tests] == [(1, 0), (4, 0)]
    suite = next(e for e in events if e.kind == "SuiteChecked")
    assert (suite.passed, suite.failed) == (4, 0)  # the template's tests, none of the tester's
    left_clean(tmp_path, "r-tester")
    assert flight.replay(JsonlJournal(path), "r-tester").identical


def test_driven_a_turn_at_a_time_the_tester_goes_on_in_its_worktree_each_step(tmp_path):
    """As the workers drive a run: one live turn per session, each a cold start from the
    journal; the worktree is read back from the record, never made again, and outlives the
    steps it spans."""
    reference_path, reference = fly(tmp_path / "once", "r-steps")
    config = flight.plan("repo-fix", TESTER_ADDS_A_TEST.name, "r-steps")
    journal, root = MemoryJournal(), tmp_path / "stepped"
    open_between: list[str] = []  # the tester's worktrees open where a session ended
    for _ in range(300):
        outcome = flight.drive(Session(journal, "r-steps", steps=1), config, root)
        if outcome.status != "stepped":
            break
        events = [r.event for r in journal.read(streams.journal("r-steps"))]
        if len(of(events, WorktreeAdded)) > len(of(events, WorktreeRemoved)):
            looked = of(events, WorktreeAdded)[-1]
            assert (root / looked.path).is_dir()
            open_between.append(looked.writer)
    assert outcome.status == reference.status == "done"
    assert set(open_between) == {"tester-T4", "tester-T6"}
    events = [r.event for r in journal.read(streams.journal("r-steps"))]

    def shape(evs):
        return [(e.kind, e.agent, e.task_id, getattr(e, "call_id", None)) for e in evs]

    assert shape(events) == shape(events_of(reference_path, "r-steps"))
    [_, second] = of(events, CandidateCommitted)
    assert second.files == ["slugkit/slug.py"]
    assert [e.discarded for e in of(events, WorktreeRemoved)] == [[EXTRA], []]
    left_clean(root, "r-steps")
    assert flight.replay(journal, "r-steps").identical


def test_a_journal_from_before_the_testers_worktree_replays_identically(tmp_path):
    """Recorded by the scenario above before the tester had a worktree: it verified in the
    workspace, and the second candidate took its test in. The record, holding no worktree
    where the verify begins, has the tester in the workspace again."""
    copy = tmp_path / FIXTURE.name
    shutil.copy(FIXTURE, copy)
    journal = JsonlJournal(copy)
    run_id = flight.find_run(journal, journal.streams())
    events = events_of(copy, run_id)
    assert not of(events, WorktreeAdded) and not of(events, WorktreeRemoved)
    [_, second] = of(events, CandidateCommitted)
    assert second.files == ["slugkit/slug.py", EXTRA]  # the leak, as it was recorded
    report = flight.replay(journal, run_id)
    assert report.identical, report.difference
    assert report.complete and report.events == len(events)
    assert copy.read_bytes() == FIXTURE.read_bytes()  # nothing written


# --- forks -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def parent(tmp_path_factory):
    """A run of the scenario, flown once (the forks write into copies of its journal)."""
    root = tmp_path_factory.mktemp("parent")
    with pytest.MonkeyPatch.context() as patched:
        patched.setitem(SCENARIOS, TESTER_ADDS_A_TEST.name, TESTER_ADDS_A_TEST)
        path, outcome = fly(root, "r-parent")
    assert outcome.status == "done"
    return path, root


def forked(parent, tmp_path, child, at_event, place=True):
    """Plan the fork `child` of the parent after the event `at_event` picks, and restore its
    workspace (beside the parent's; with `place` False, only staged: the planned fork and the
    staged directory come back)."""
    source, root = parent
    path = tmp_path / "j.jsonl"
    shutil.copy(source, path)
    journal = JsonlJournal(path)
    records = journal.read(streams.journal("r-parent"))
    at = next(r.position for r in records if at_event(r.event))
    planned = fork.plan(
        fork.records_of(journal, "r-parent"), "r-parent", child, at, fork.Changes(), "ana"
    )
    fork.verify(journal, planned)
    if not place:
        return fork_workspace.stage_workspace(planned, root), planned, root
    fork_workspace.restore_workspace(planned, root)
    return path, planned, root


def test_a_fork_mid_verify_gets_the_testers_worktree_at_its_commit_and_goes_on(parent, tmp_path):
    path, planned, root = forked(
        parent, tmp_path, "r-mid", lambda e: isinstance(e, WorktreeAdded) and e.task_id == "T4"
    )
    [added] = [e for _, e in planned.events if isinstance(e, WorktreeAdded)]
    assert added.path == "r-mid.workspace.tester-T4"  # named as the fork's workspace is
    looked = root / added.path
    assert git(looked, "rev-parse", "HEAD") == added.base and not (looked / EXTRA).exists()
    journal = JsonlJournal(path)
    fork.write(journal, planned)
    outcome = flight.resume(journal, "r-mid", root)
    assert outcome.status == "done", outcome.reason
    events = events_of(path, "r-mid")
    [_, second] = of(events, CandidateCommitted)
    assert second.files == ["slugkit/slug.py"]
    assert [e.discarded for e in of(events, WorktreeRemoved)] == [[EXTRA], []]
    left_clean(root, "r-mid")
    assert flight.replay(journal, "r-mid").identical


def test_a_fork_after_the_testers_worktree_went_away_is_not_held_by_its_edits(parent, tmp_path):
    """Its edit went with its worktree; in the workspace it was one no commit recorded, and the
    fork was refused."""
    path, planned, root = forked(
        parent, tmp_path, "r-after", lambda e: isinstance(e, WorktreeRemoved) and e.task_id == "T4"
    )
    assert not (root / "r-after.workspace.tester-T4").exists()
    journal = JsonlJournal(path)
    fork.write(journal, planned)
    assert flight.resume(journal, "r-after", root).status == "done"
    left_clean(root, "r-after")
    assert flight.replay(journal, "r-after").identical


def test_a_fork_after_the_testers_edit_in_its_worktree_is_refused(parent, tmp_path):
    source, root = parent
    before = source.read_bytes()
    with pytest.raises(fork.ForkRefused, match="tester's worktree at the fork point holds"):
        forked(
            parent,
            tmp_path,
            "r-edited",
            lambda e: (
                isinstance(e, ToolReturned) and e.agent == "tester" and e.tool == "write_file"
            ),
        )
    assert source.read_bytes() == before
    assert not list(root.glob("r-edited.workspace*"))


def test_a_fork_not_written_leaves_no_workspace_and_no_testers_worktree(parent, tmp_path):
    # The tester's worktree is added only once the fork's workspace is in its place (after the
    # fork's events are written): one whose write failed leaves only its staged clone, removed.
    staged, _, root = forked(
        parent,
        tmp_path,
        "r-gone",
        lambda e: isinstance(e, WorktreeAdded) and e.task_id == "T4",
        place=False,
    )
    assert staged.is_dir() and not (root / "r-gone.workspace.tester-T4").exists()
    assert fork_workspace.discard_workspace(staged)
    assert not list(root.glob("r-gone.workspace*"))
    assert (root / "r-parent.workspace").is_dir()  # the parent's is its own
