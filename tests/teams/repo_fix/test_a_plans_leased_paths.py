"""The files a parallel plan names are leased under streams of their own
(`lease-<run>:file:<path>`): a path the orchestrator gives must make a stream the store holds
and an import reads back. A plan naming a path of 300 characters, a control character or one
outside the workspace is refused at the orchestrator's `done`, naming the task and the file;
the model sees why and plans again (real scripted flight, real git)."""

from __future__ import annotations

import pytest

from journal_store.admission import MAX_STREAM
from runtime import flight, streams
from runtime.events import LeaseTaken, TeamPlanned, ToolReturned
from runtime.jsonl import JsonlJournal
from runtime.model import ScriptedClient
from runtime.session import Session
from runtime.team import Services
from teams import TEAMS
from teams.repo_fix import scenarios as S
from teams.repo_fix.roles import MAX_LEASED_PATH, PARALLEL_ORCHESTRATOR

pytestmark = pytest.mark.slow

LONG = "textparse/" + "x" * 290 + ".py"


@pytest.mark.parametrize(
    "path",
    [
        LONG,
        "textparse/parser.py\n",
        "tests/\x1b[31mred.py",
        "/etc/passwd",
        "../other/x.py",
        "a/./b",
    ],
)
def test_a_path_no_lease_stream_can_hold_is_refused_naming_the_file(path):
    plan = S.parallel_plan(1, (S.PARSER_BRIEF, [S.PARSER, path])).tool_calls[0].args
    with pytest.raises(Exception, match=r"^tasks/0/files/1: "):
        PARALLEL_ORCHESTRATOR.report.validate(plan)


def test_the_longest_path_taken_makes_a_stream_an_import_reads():
    longest = "lease-" + streams.resource("r" * 64, "file", "p" * MAX_LEASED_PATH)
    assert len(longest) <= MAX_STREAM
    plan = S.parallel_plan(1, (S.PARSER_BRIEF, ["src/" + "p" * 116, "dir with space/é.py"]))
    PARALLEL_ORCHESTRATOR.report.validate(plan.tool_calls[0].args)


def test_the_orchestrator_is_told_and_its_next_plan_is_run(tmp_path):
    config = flight.plan("repo-fix", "parallel-writers", "r-long-path")
    team = TEAMS["repo-fix"]
    scripts = {**team.scenarios["parallel-writers"].scripts}
    good = scripts["orchestrator"]
    scripts["orchestrator"] = [
        S.parallel_plan(160, (S.PARSER_BRIEF, [LONG]), (S.SLUG_BRIEF, [S.SLUG])),
        *good,
    ]
    clients = {a: ScriptedClient(scripts[a], a) for a in scripts}
    path = tmp_path / "journal.jsonl"
    journal = JsonlJournal(path)
    outcome = team.fly(Session(journal, "r-long-path"), config, clients, tmp_path, Services())
    assert outcome.status == "done"
    events = [r.event for r in journal.read_all()]
    refused = [e for e in events if isinstance(e, ToolReturned) and e.tool == "done" and e.error]
    assert [e.error.message.split(":")[0] for e in refused] == ["tasks/0/files/0"]
    [planned] = [e for e in events if isinstance(e, TeamPlanned)]
    assert all(len(f) <= MAX_LEASED_PATH for t in planned.tasks for f in t.get("files", []))
    names = {r.stream for r in journal.read_all()}
    assert max(len(n) for n in names) <= MAX_STREAM
    assert not any(LONG in e.resource for e in events if isinstance(e, LeaseTaken))
