"""Messages, jurisdictions, plans and budgets of the repo-fix team, one behaviour at a time."""

from __future__ import annotations

import pytest

from runtime import workspace
from runtime.journal import MemoryJournal
from runtime.messages import Performative, PostOffice
from runtime.model import ToolCall
from runtime.session import Session
from runtime.tools import NotAllowed, Toolbox, execute
from teams.repo_fix.plan import accept_plan
from teams.repo_fix.roles import ROLES
from teams.repos import template


def test_a_second_delivery_is_recorded_and_acts_on_nothing():
    session = Session(MemoryJournal(), "r-mail")
    post = PostOffice(session)
    message = post.send(Performative.REQUEST, "orchestrator", "coder", "T1", {"brief": "fix"})
    assert post.deliver(message) is False
    deliveries = [e for e in session.emitted if e.kind == "MessageDelivered"]
    assert [d.duplicate for d in deliveries] == [False, True]
    assert [m.message_id for m in post.collect("coder")] == [message.message_id]
    assert post.collect("coder") == []


def test_mail_reaches_the_agent_as_fresh_context_at_the_top_of_its_turn():
    session = Session(MemoryJournal(), "r-mail")
    post = PostOffice(session)
    post.send(Performative.REJECT, "reviewer", "coder", "T1", {"reasons": "no tests"})
    [mail] = post.mailbox("coder")()
    assert mail.role == "user" and mail.content.startswith("[REJECT from reviewer on T1, m-001]")
    assert '"reasons": "no tests"' in mail.content


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("jur") / "w"
    workspace.prepare(root, template("parse-empty"))
    return root


def attempt(repo, role, tool, **args):
    r = ROLES[role]
    box = Toolbox(workspace.toolset(repo, r.writable), allow=r.allow)
    try:
        checked = box.check(ToolCall(id="c", name=tool, args=args), role)
    except NotAllowed as exc:
        return {"error": {"type": "NotAllowed", "message": str(exc)}}
    return execute(checked, args).observation()


def test_the_reviewer_cannot_edit_and_is_not_even_shown_the_tools(repo):
    r = ROLES["reviewer"]
    shown = [s["name"] for s in Toolbox(workspace.toolset(repo, r.writable), allow=r.allow).specs()]
    assert "edit_file" not in shown and "write_file" not in shown
    result = attempt(repo, "reviewer", "edit_file", path="textparse/parser.py", old="line", new="x")
    assert result["error"]["type"] == "NotAllowed"


def test_the_tester_may_add_tests_but_not_touch_source(repo):
    refused = attempt(repo, "tester", "write_file", path="textparse/parser.py", content="")
    assert refused["error"]["type"] == "PathRefused"
    assert attempt(repo, "tester", "write_file", path="tests/test_more.py", content="")["result"]


def test_the_docs_agent_writes_only_under_docs(repo):
    straying = attempt(repo, "docs", "write_file", path="README.md", content="rewritten")
    assert straying["error"]["type"] == "PathRefused"
    assert attempt(repo, "docs", "write_file", path="docs/changelog.md", content="# c\n")["result"]


def test_the_harness_adds_the_review_and_verify_a_plan_forgot():
    tasks, amended = accept_plan([{"id": "T1", "kind": "fix", "brief": "fix it"}], docs=False)
    assert [(t["id"], t["kind"], t.get("of")) for t in tasks] == [
        ("T1", "fix", None),
        ("T2", "review", "T1"),
        ("T3", "verify", "T1"),
    ]
    assert amended == ["added T2: every fix needs a review", "added T3: every fix needs a verify"]


@pytest.mark.parametrize(
    "plan, problem",
    [
        ([{"id": "T1", "kind": "review", "brief": "b", "of": "T1"}], "no fix"),
        (
            [
                {"id": "T1", "kind": "fix", "brief": "b"},
                {"id": "T1", "kind": "verify", "brief": "b", "of": "T1"},
            ],
            "repeat",
        ),
        (
            [
                {"id": "T1", "kind": "fix", "brief": "b"},
                {"id": "T2", "kind": "verify", "brief": "b", "of": "T7"},
            ],
            "not a fix",
        ),
    ],
)
def test_an_unusable_plan_is_refused(plan, problem):
    with pytest.raises(ValueError, match=problem):
        accept_plan(plan, docs=False)


def test_a_report_that_breaks_its_contract_is_refused_and_the_agent_goes_on():
    from runtime import loop
    from runtime.budget import Budget
    from runtime.model import ScriptedClient, call

    r = ROLES["reviewer"]
    client = ScriptedClient(
        [call("done", 5, verdict="maybe"), call("done", 5, verdict="accept", reasons="ok")]
    )
    agent = loop.Agent("reviewer", client, Toolbox([]), "sys", done=r.report)
    session = Session(MemoryJournal(), "r-report")
    result = loop.run(agent, "review", session, Budget(100))
    assert result.report == {"verdict": "accept", "reasons": "ok"}
    refused = [e for e in session.emitted if e.kind == "ToolReturned"]
    assert refused[0].tool == "done" and refused[0].error.type == "InvalidArguments"
