"""Parallel writers whose work meets at the merge (real git, real pytest): a writer's test run
may not change the other writer's leased file (its run is refused and undone, as the tester's
is); two writers that both write the same file under tests/ conflict at the second merge, which
is aborted, main left clean, and the candidate goes back to its coder, whose next round merges.
Each run replays identically."""

from __future__ import annotations

import pytest

from runtime import flight, merges
from runtime.events import Integrated, IntegrationRefused, MessageSent, ToolReturned
from runtime.jsonl import JsonlJournal
from runtime.model import ScriptedClient, call
from runtime.session import Session
from runtime.team import Services
from runtime.workspace import git
from teams import TEAMS
from teams.repo_fix import scenarios as S

pytestmark = pytest.mark.slow

SHARED = "tests/test_shared.py"


def flown(tmp_path, run_id, **scripts):
    """The parallel-writers flight with some agents' scripts replaced: its outcome, events,
    workspace and journal."""
    config = flight.plan("repo-fix", "parallel-writers", run_id)
    team = TEAMS["repo-fix"]
    every = {**team.scenarios["parallel-writers"].scripts, **scripts}
    clients = {a: ScriptedClient(every[a], a) for a in every}
    path = tmp_path / "journal.jsonl"
    outcome = team.fly(Session(JsonlJournal(path), run_id), config, clients, tmp_path, Services())
    events = [r.event for r in JsonlJournal(path).read(f"run-{run_id}")]
    return outcome, events, tmp_path / config.workspace, path


def returned(events, agent, tool):
    return [e for e in events if isinstance(e, ToolReturned) and (e.agent, e.tool) == (agent, tool)]


def test_a_writers_test_run_cannot_rewrite_the_other_writers_leased_file(tmp_path):
    rewrite = (
        "def test_b():\n"
        f"    text = open({S.PARSER!r}).read()\n"
        f"    open({S.PARSER!r}, 'w').write(text.replace('split(\",\")', 'split(\",\")  # b'))\n"
    )
    outcome, events, root, path = flown(
        tmp_path,
        "r-confined",
        **{
            "coder-b": [
                call("edit_file", 90, path=S.SLUG, old=S.SLUG_BUG, new=S.SLUG_FIX),
                call("write_file", 50, path="README.md", content="mine now\n"),
                call("write_file", 50, path="tests/test_b.py", content=rewrite),
                call("run_tests", 60, target="tests/test_b.py"),
                call("run_tests", 60, target=S.SLUG_TESTS),
                call("done", 40, summary="slug fixed"),
            ]
        },
    )
    assert outcome.status == "done"
    readme, *_ = [e for e in returned(events, "coder-b", "write_file") if e.error]
    assert readme.error.type == "PathRefused"
    assert "README.md is outside what this agent may edit" in readme.error.message
    refused, passed = returned(events, "coder-b", "run_tests")
    assert refused.error.type == "OutsideJurisdiction"
    assert S.PARSER in refused.error.message
    assert passed.error is None
    # coder-b's branch holds its own file and its test, nothing of the parser; both merged
    assert git(root, "diff", "--name-only", "main~2", "writer/coder-b-T2").splitlines() == [
        S.SLUG,
        "tests/test_b.py",
    ]
    assert [e.task_id for e in events if isinstance(e, Integrated)] == ["T1", "T2"]
    assert [e for e in events if isinstance(e, IntegrationRefused)] == []
    assert flight.replay(JsonlJournal(path), "r-confined").identical


def test_a_merge_that_conflicts_is_aborted_and_the_candidate_goes_back_to_its_coder(tmp_path):
    overwrite = (
        f"def test_b():\n    open({SHARED!r}, 'w').write('def test_theirs():\\n    pass\\n')\n"
    )
    remove = f"import os\n\n\ndef test_b():\n    os.remove({SHARED!r})\n"
    outcome, events, root, path = flown(
        tmp_path,
        "r-clash",
        **{
            "coder-a": [
                *S.WRITER_PARSER[:2],
                call("write_file", 50, path=SHARED, content="def test_mine():\n    pass\n"),
                *S.WRITER_PARSER[2:],
            ],
            "coder-b": [
                call("edit_file", 90, path=S.SLUG, old=S.SLUG_BUG, new=S.SLUG_FIX),
                call("write_file", 50, path="tests/test_b.py", content=overwrite),
                call("run_tests", 60, target="tests/test_b.py"),  # writes the shared test
                call("run_tests", 60, target=S.SLUG_TESTS),
                call("done", 40, summary="slug fixed"),
                # round 2, told of the conflict: its test run takes its copy back out
                call("write_file", 50, path="tests/test_b.py", content=remove),
                call("run_tests", 60, target="tests/test_b.py"),
                call("run_tests", 60, target=S.SLUG_TESTS),
                call("done", 40, summary="slug fixed, the shared test left to coder-a"),
            ],
            "reviewer": [*S.REVIEW_BOTH, S.accept(40, "The slug fix, without the shared test.")],
        },
    )
    assert outcome.status == "done"
    [clash] = [e for e in events if isinstance(e, IntegrationRefused)]
    assert (clash.task_id, clash.branch) == ("T2", "writer/coder-b-T2")
    assert f"conflicts in {SHARED}" in clash.reason and "aborted" in clash.reason
    # back to its coder, told why
    again = [
        e
        for e in events
        if isinstance(e, MessageSent) and e.recipient == "coder-b" and e.payload.get("round")
    ]
    assert [e.payload["round"] for e in again] == [2]
    assert again[0].payload["rejected"].startswith(clash.reason)
    # its second round merged; main is clean, holds coder-a's shared test, and no merge stands
    assert [e.task_id for e in events if isinstance(e, Integrated)] == ["T1", "T2"]
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
    assert not merges.merging(root)
    assert (root / SHARED).read_text() == "def test_mine():\n    pass\n"
    assert flight.replay(JsonlJournal(path), "r-clash").identical
