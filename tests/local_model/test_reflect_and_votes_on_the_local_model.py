"""Reflection and votes on a real model, offline: SmolLM2-135M behind llama.cpp's server.

A 135M model shows the mechanics only: whether its critique or its verdicts are any good is not
the question. What must hold whatever it says: the run ends in a typed status with a complete,
balanced journal that replays; a reviewer is never asked about a draft the critic sent back;
there is at most one revision; a vote is journalled once all its samples answered; a refund
happens at most once and only on a majority to refund.
"""

from __future__ import annotations

import json

import pytest

from runtime import views
from runtime.events import (
    CandidateCommitted,
    DeskChecked,
    DraftCritiqued,
    DraftRevised,
    MessageSent,
    ModelResponded,
    VoteTaken,
)
from runtime.jsonl import JsonlJournal
from tests.local_model.test_local_model import assert_guarantees, fly

pytestmark = pytest.mark.slow


def test_reflection_on_the_local_model_keeps_its_rules(local_server, tmp_path):
    outcome, path, run_id = fly(
        tmp_path,
        "repo-fix",
        "reflect",
        model="scripted",
        # The critic is what this test is about. A reviewer on the local model is
        # test_local_model.py's, and its vote the desk's test below: here the scripted one
        # keeps the flight to the critic's few calls (with both on the 135M model it took
        # 145-220 s of the suite on two cores; with the critic alone, 27 s).
        models={"critic": "local"},
        allowance=60_000,  # a local call's window is about a thousand tokens
        max_turns=2,
    )
    events = assert_guarantees(outcome, path, run_id)
    assert [e for e in events if isinstance(e, ModelResponded) and e.agent == "critic"]
    critiques = [e for e in events if isinstance(e, DraftCritiqued)]
    revisions = [e for e in events if isinstance(e, DraftRevised)]
    assert len(critiques) <= 1 and len(revisions) <= 1
    if revisions:
        assert critiques[0].verdict == "revise" and revisions[0].draft == critiques[0].commit
        sent_back = next(
            e.diff
            for e in events
            if isinstance(e, CandidateCommitted) and e.commit == revisions[0].draft
        )
        to_reviewer = [
            json.dumps(e.payload)
            for e in events
            if isinstance(e, MessageSent) and e.recipient == "reviewer"
        ]
        assert not any(
            revisions[0].draft in m or json.dumps(sent_back)[1:-1] in m for m in to_reviewer
        )
    bill = views.bill(JsonlJournal(path).read(f"run-{run_id}"))
    assert bill["tasks"]["T1:reflect"]["calls"] >= 1  # the critic was asked, on its own line


def test_a_refund_vote_on_the_local_model_refunds_at_most_once_and_only_on_a_majority(
    local_server, tmp_path
):
    outcome, path, run_id = fly(
        tmp_path,
        "support-desk",
        "refund-vote",
        model="scripted",
        models={"support-agent": "local"},
        max_turns=2,
    )
    events = assert_guarantees(outcome, path, run_id)
    checked = [e for e in events if isinstance(e, DeskChecked)]
    votes = [e for e in events if isinstance(e, VoteTaken)]
    refunded = sum(len(c.provider_refunds) for c in checked)
    assert refunded <= 1
    if refunded:
        assert votes and votes[0].winner.startswith("refund")
