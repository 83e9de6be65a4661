"""The timeline says in one line what the mutation gate refused and why, each agent's last word
(and whose word it is), an untrusted status, the intent a run serves, a writer's worktree and
the tester's (and what went away with it)."""

from __future__ import annotations

from dashboard.present import summary


def test_a_refused_mutation_names_the_check_the_actor_and_why():
    refused = {
        "what": "merging candidate/T1",
        "actor": "coder-b",
        "capability": "integrate",
        "check": "authority",
        "reason": "coder-b may not integrate: only coder-a may",
    }
    assert summary("MutationRefused", refused) == (
        "REFUSED at the gate (authority): coder-b integrate: coder-b may not integrate: "
        "only coder-a may"
    )


def test_a_last_word_says_whose_word_the_status_is():
    own = {"status": "WAITING_EVIDENCE", "said": "WAITING_EVIDENCE", "source": "agent"}
    assert summary("StatusReported", own) == "status WAITING_EVIDENCE (its own word)"
    alias = {"status": "NO_SAFE_COORDINATION_PATH", "said": "NO_SAFE_PATH", "source": "agent"}
    assert summary("StatusReported", alias) == (
        "status NO_SAFE_COORDINATION_PATH (its own word; it said 'NO_SAFE_PATH')"
    )
    harness = {"status": "FAILED", "said": None, "source": "harness"}
    assert summary("StatusReported", harness) == "status FAILED (the harness's)"
    untrusted = {"said": "mostly fine", "status": "COMPLETED", "reason": "..."}
    assert summary("StatusNormalised", untrusted) == (
        "UNTRUSTED status 'mostly fine': recorded as COMPLETED"
    )


def test_the_carried_intent_and_a_writers_worktree_read_as_a_line():
    carried = {"intent_id": "task-r-1", "intent_version": 2, "statement": "fix parse"}
    assert summary("IntentCarried", carried) == "serves intent task-r-1 v2: fix parse"
    tree = {"writer": "coder-a", "branch": "writer/coder-a", "base": "abc", "path": "/w.a"}
    assert summary("WorktreeAdded", tree) == "worktree for coder-a on writer/coder-a"


def test_the_testers_worktree_reads_as_its_commit_and_what_went_with_it():
    tree = {"writer": "tester-T3", "branch": "", "base": "1849aa7debe5f063", "path": "w.tester-T3"}
    assert summary("WorktreeAdded", tree) == "worktree for tester-T3 at 1849aa7debe5"
    gone = {"writer": "tester-T3", "path": "w.tester-T3", "discarded": ["tests/test_more.py"]}
    assert summary("WorktreeRemoved", gone) == (
        "worktree of tester-T3 taken away with 1 uncommitted path(s), never reviewed: "
        "tests/test_more.py"
    )
    empty = {"writer": "tester-T3", "path": "w.tester-T3", "discarded": []}
    assert summary("WorktreeRemoved", empty) == (
        "worktree of tester-T3 taken away; it held nothing uncommitted"
    )
