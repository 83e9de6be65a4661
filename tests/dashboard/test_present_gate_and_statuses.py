"""The timeline says in one line what the mutation gate refused and why, each agent's last word
(and whose word it is), an untrusted status, the intent a run serves and a writer's worktree."""

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
