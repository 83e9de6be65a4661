"""Integration is a precondition in code: no reviewer ACCEPT on the thread for that commit,
no merge."""

from __future__ import annotations

import pytest

from runtime import workspace
from runtime.coordination.carried import carry
from runtime.events import CandidateCommitted
from runtime.journal import MemoryJournal
from runtime.messages import Performative
from runtime.session import Session
from runtime.team import FlightConfig
from teams.repo_fix.harness import Harness
from teams.repo_fix.settings import RepoFixSettings
from teams.repos import template

GREEN = {"passed": 2, "failed": 0}  # the candidate's own test run, as the harness found it


@pytest.fixture
def harness(tmp_path):
    config = FlightConfig(
        scenario="first-flight",
        task="t",
        workspace="w",
        settings=RepoFixSettings(template="parse-empty"),
    )
    h = Harness(Session(MemoryJournal(), "r-gate"), config, {}, tmp_path)
    h.intent = carry(h.session, "t")
    h.awarded["T1"] = "coder"
    workspace.prepare(h.path, template("parse-empty"))
    (h.path / "textparse" / "parser.py").write_text("def parse(line):\n    return []\n")
    facts = workspace.commit_candidate(h.path, "candidate/T1", "T1 round 1")
    candidate = h.session.new(CandidateCommitted, agent="coder", task_id="T1", **facts)
    return h, candidate


def main_head(h):
    return workspace.git(h.path, "rev-parse", "main")


def test_it_refuses_integration_without_accept(harness):
    h, candidate = harness
    before = main_head(h)
    assert h.integrate("T1", candidate, GREEN) is None
    refused = [e for e in h.session.emitted if e.kind == "IntegrationRefused"]
    assert len(refused) == 1 and refused[0].branch == "candidate/T1"
    assert "no ACCEPT from the reviewer on T1" in refused[0].reason
    assert main_head(h) == before


def test_it_refuses_an_accept_for_another_commit(harness):
    h, candidate = harness
    h.post.send(Performative.ACCEPT, "reviewer", "orchestrator", "T1", {"commit": "0" * 40})
    assert h.integrate("T1", candidate, GREEN) is None


def test_it_refuses_an_accept_on_another_thread(harness):
    h, candidate = harness
    h.post.send(Performative.ACCEPT, "reviewer", "orchestrator", "T9", {"commit": candidate.commit})
    assert h.integrate("T1", candidate, GREEN) is None


def test_it_refuses_an_accept_from_someone_without_the_standing(harness):
    h, candidate = harness
    # the orchestrator's contract-net award is an ACCEPT too, but not a review
    h.post.send(Performative.ACCEPT, "orchestrator", "coder", "T1", {"commit": candidate.commit})
    h.post.send(Performative.ACCEPT, "coder", "orchestrator", "T1", {"commit": candidate.commit})
    assert h.integrate("T1", candidate, GREEN) is None


def test_it_merges_with_the_reviewers_accept_and_cites_it(harness):
    h, candidate = harness
    accept = h.post.send(
        Performative.ACCEPT, "reviewer", "orchestrator", "T1", {"commit": candidate.commit}
    )
    integrated = h.integrate("T1", candidate, GREEN)
    assert integrated.approval == accept.message_id
    assert main_head(h) == integrated.commit
    assert workspace.git(h.path, "show", "main:textparse/parser.py").endswith("return []")
