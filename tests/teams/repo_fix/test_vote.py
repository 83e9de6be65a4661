"""Voting on a critical verdict (seed 04): independent samples of the reviewer, their majority
journalled with the minority kept as evidence, and what the vote cost on its own bill line."""

from __future__ import annotations

import pytest

from runtime import flight, views
from runtime.events import Integrated, MessageSent, VoteTaken
from runtime.jsonl import JsonlJournal

pytestmark = pytest.mark.slow


def test_one_wrong_sample_is_outvoted_and_the_vote_is_billed(fly_team):
    flown = fly_team("vote")
    assert flown.outcome.status == "done", flown.outcome.reason
    [vote] = [e for e in flown.events if isinstance(e, VoteTaken)]
    assert (vote.samples, vote.verdicts, vote.winner) == (
        3,
        ["accept", "reject", "accept"],
        "accept",
    )
    assert vote.minority == [
        {"sample": 2, "verdict": "reject", "reasons": "Splitting should happen before the guard."}
    ]
    # Each sample was its own REQUEST; the ACCEPT the gate relied on came after the vote.
    requests = [e for e in flown.events if isinstance(e, MessageSent) and e.recipient == "reviewer"]
    assert [e.task_id for e in requests] == ["T1", "T1:vote", "T1:vote"]
    assert any(isinstance(e, Integrated) for e in flown.events)
    bill = views.bill(flown.records)
    assert bill["tasks"]["T1:vote"]["tokens"] == 2 * (30 + 40)  # two more samples
    assert bill["agents"]["reviewer"]["calls"] == 6
    assert flight.replay(JsonlJournal(flown.path), flown.run_id).identical


def test_a_single_sample_is_no_vote(fly_team):
    flown = fly_team("first-flight")
    assert not [e for e in flown.events if isinstance(e, VoteTaken)]
    assert "T1:vote" not in views.bill(flown.records)["tasks"]
