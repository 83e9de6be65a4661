"""Reflection and votes on the OpenAI-compatible client, against a local server that speaks the
protocol: what each request carried is read off the wire, not inferred. The coder, the critic
and the reviewer (or the desk's support agent) ask the server; the rest stay scripted."""

from __future__ import annotations

import itertools
import json

import pytest

from runtime import flight, views
from runtime.events import DeskChecked, DraftCritiqued, DraftRevised, Integrated, VoteTaken
from runtime.jsonl import JsonlJournal
from runtime.team import Services
from teams.repo_fix.scenarios import PARSER, SPLIT
from tests.fakellm import Reply, completion, wire_call

pytestmark = pytest.mark.slow

MODEL = "local-test-model"
ids = itertools.count(1)
DRAFT_GUARD = '    if line == "":'
REVISED_GUARD = "    if not line.strip():"


def answer(name: str, usage: int, **args) -> Reply:
    """One completion calling one tool, with `usage` tokens (prompt 9 in 10)."""
    prompt = usage * 9 // 10
    return Reply(
        completion(
            None,
            [wire_call(name, json.dumps(args), f"call_{next(ids)}")],
            {"prompt_tokens": prompt, "completion_tokens": usage - prompt, "total_tokens": usage},
        )
    )


def fly(server, tmp_path, team, scenario, run_id, **settings):
    models = {"MINUTES_MODEL_BASE_URL": server.url, "MINUTES_MODEL": MODEL}
    journal = JsonlJournal(tmp_path / f"{run_id}.jsonl")
    config = flight.plan(team, scenario, run_id, **settings)
    outcome = flight.fly(journal, config, run_id, tmp_path, services=Services(models=models))
    return outcome, journal


def asked(server, role: str) -> list[str]:
    """The windows the server was sent by the agents whose system prompt opens `role`."""
    windows = []
    for request in server.requests:
        messages = request.body["messages"]
        if messages[0]["role"] == "system" and messages[0]["content"].startswith(role):
            windows.append("\n".join(str(m.get("content")) for m in messages))
    return windows


def shows(window: str, line: str) -> bool:
    return line in window or json.dumps(line)[1:-1] in window


def test_reflection_on_an_endpoint_the_reviewer_is_never_sent_the_draft(server, tmp_path):
    server.queue(
        # the coder's draft
        answer("read_file", 300, path=PARSER),
        answer(
            "edit_file",
            320,
            path=PARSER,
            old=SPLIT,
            new=f"{DRAFT_GUARD}\n        return []\n{SPLIT}",
        ),
        answer("run_tests", 350),
        answer("done", 360, summary="parse('') returns []"),
        # the critic
        answer("done", 400, verdict="revise", reasons="whitespace-only lines still give ['']"),
        # the coder's revision
        answer("edit_file", 330, path=PARSER, old=DRAFT_GUARD, new=REVISED_GUARD),
        answer("run_tests", 340),
        answer("done", 350, summary="blank and whitespace-only lines give []"),
        # the reviewer
        answer("done", 420, verdict="accept", reasons="guards on strip(); 2 passed"),
    )
    on_server = {a: "endpoint" for a in ("coder", "critic", "reviewer")}
    outcome, journal = fly(
        server, tmp_path, "repo-fix", "reflect", "r-reflect-wire", models=on_server
    )
    assert outcome.status == "done", outcome.reason
    assert len(server.requests) == 9 and not server.replies

    critic, reviewer = asked(server, "You are the critic"), asked(server, "You are the reviewer")
    assert len(critic) == 1 and shows(critic[0], "+" + DRAFT_GUARD)
    assert len(reviewer) == 1 and not shows(reviewer[0], "+" + DRAFT_GUARD)
    assert shows(reviewer[0], "+" + REVISED_GUARD)
    # the critic and the reviewer were offered read-only tools
    for request in server.requests[4], server.requests[8]:
        assert [t["function"]["name"] for t in request.body["tools"]] == [
            "list_files",
            "read_file",
            "done",
        ]
    records = journal.read("run-r-reflect-wire")
    events = [r.event for r in records]
    [critique] = [e for e in events if isinstance(e, DraftCritiqued)]
    [revision] = [e for e in events if isinstance(e, DraftRevised)]
    assert critique.reasons == "whitespace-only lines still give ['']"
    assert critique.commit not in reviewer[0]
    assert [e.commit for e in events if isinstance(e, Integrated)] and revision.commit
    bill = views.bill(records)
    assert bill["tasks"]["T1:reflect"]["tokens"] == 400 + 330 + 340 + 350
    assert bill["tasks"]["T1:reflect"]["calls"] == 4
    server.httpd.shutdown()  # replayed from the journal alone, with no server at all
    assert flight.replay(journal, "r-reflect-wire").identical


def test_a_reviewers_vote_on_an_endpoint_asks_independent_samples(server, tmp_path):
    first = "the guard is minimal and the tests pass"
    server.queue(
        answer("done", 410, verdict="accept", reasons=first),
        answer("done", 420, verdict="reject", reasons="split first, then guard"),
        answer("done", 430, verdict="accept", reasons="fine: 2 passed"),
    )
    outcome, journal = fly(
        server,
        tmp_path,
        "repo-fix",
        "first-flight",
        "r-vote-wire",
        votes=3,
        models={"reviewer": "endpoint"},
        # A reviewer's share (15%) that holds all three samples: one spent is not asked again.
        allowance=10_000,
    )
    assert outcome.status == "done", outcome.reason
    windows = asked(server, "You are the reviewer")
    assert len(windows) == 3
    # each sample is a fresh run: no sample is shown another's verdict
    assert not any(first in w or "split first" in w for w in windows)
    records = journal.read("run-r-vote-wire")
    [vote] = [r.event for r in records if isinstance(r.event, VoteTaken)]
    assert (vote.verdicts, vote.winner) == (["accept", "reject", "accept"], "accept")
    assert vote.minority[0]["reasons"] == "split first, then guard"
    assert views.bill(records)["tasks"]["T1:vote"]["tokens"] == 420 + 430
    server.httpd.shutdown()
    assert flight.replay(journal, "r-vote-wire").identical


def test_a_refund_vote_on_an_endpoint_refunds_only_on_its_majority(server, tmp_path):
    server.queue(
        answer("done", 200, decision="no_refund", amount_cents=0, reasons="not eligible"),
        answer("done", 210, decision="refund", amount_cents=4999, reasons="refund in full"),
        answer("done", 220, decision="no_refund", amount_cents=0, reasons="policy says no"),
        # the support agent's part after the vote
        answer("done", 150, outcome="unchanged", summary="no refund, as the vote decided"),
    )
    outcome, journal = fly(
        server,
        tmp_path,
        "support-desk",
        "refund-vote",
        "r-desk-wire",
        models={"support-agent": "endpoint"},
    )
    assert outcome.status == "done", outcome.reason
    decide, after = server.requests[:3], server.requests[3]
    for request in decide:  # a sample may read the order, never refund
        assert [t["function"]["name"] for t in request.body["tools"]] == ["read_order", "done"]
    assert "issue_refund" not in [t["function"]["name"] for t in after.body["tools"]]
    assert "a vote of 3: no refund" in json.dumps(after.body["messages"])
    records = journal.read("run-r-desk-wire")
    events = [r.event for r in records]
    [vote] = [e for e in events if isinstance(e, VoteTaken)]
    assert vote.winner == "no refund" and [m["sample"] for m in vote.minority] == [2]
    [checked] = [e for e in events if isinstance(e, DeskChecked)]
    assert checked.provider_refunds == [] and checked.refund_calls == 0
    assert views.bill(records)["tasks"]["T2:vote"]["tokens"] == 210 + 220
    server.httpd.shutdown()
    assert flight.replay(journal, "r-desk-wire").identical
