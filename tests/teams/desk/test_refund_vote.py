"""The refund decided by vote (seed 04): independent samples of the support agent's decision,
their majority journalled with the minority as evidence, one refund only on a majority to
refund, and what the vote cost on a bill line of its own."""

from __future__ import annotations

import pytest

from runtime import diagnose, flight, metrics, views
from runtime.events import (
    DeskChecked,
    RunStarted,
    TaskEscalated,
    TeamFinished,
    ToolDispatched,
    VoteTaken,
)
from runtime.journal import MemoryJournal
from runtime.jsonl import JsonlJournal
from runtime.model import ScriptedClient
from runtime.session import Session
from runtime.team import Services
from teams import TEAMS
from teams.desk.scenarios import REFUND_VOTE, decide
from teams.desk.tools import ORDER_AGENT, SUPPORT_AGENT

pytestmark = pytest.mark.slow

AFTER_VOTE = REFUND_VOTE.scripts[SUPPORT_AGENT][-2:]  # its part once the vote is taken


def refunds(events) -> list[ToolDispatched]:
    return [e for e in events if isinstance(e, ToolDispatched) and e.tool == "issue_refund"]


def fly_vote(tmp_path, samples, votes=3):
    """The refund-vote scenario with the support agent's samples of our own."""
    journal, run_id = MemoryJournal(), "r-vote-custom"
    config = flight.plan("support-desk", "refund-vote", run_id, votes=votes)
    clients = {
        ORDER_AGENT: ScriptedClient(REFUND_VOTE.scripts[ORDER_AGENT], ORDER_AGENT),
        SUPPORT_AGENT: ScriptedClient([*samples, *AFTER_VOTE], SUPPORT_AGENT),
    }
    finished = TEAMS["support-desk"].fly(
        Session(journal, run_id), config, clients, tmp_path, Services()
    )
    return [r.event for r in journal.read(f"run-{run_id}")], finished


def test_one_wrong_sample_is_outvoted_and_the_desk_refunds_once(fly_team):
    flown = fly_team("refund-vote", team="support-desk")
    assert flown.outcome.status == "done", flown.outcome.reason
    events = flown.events
    [vote] = [e for e in events if isinstance(e, VoteTaken)]
    assert (vote.agent, vote.task_id, vote.samples) == (SUPPORT_AGENT, "T2", 3)
    assert vote.verdicts == ["refund 4999 cents", "no refund", "refund 4999 cents"]
    assert vote.winner == "refund 4999 cents"
    assert vote.minority == [
        {
            "sample": 2,
            "verdict": "no refund",
            "reasons": "it was delivered and signed for: nothing to refund",
        }
    ]
    # One refund, after the vote, on the majority's amount; one effect, one at the provider.
    [refund] = refunds(events)
    assert events.index(refund) > events.index(vote)
    assert refund.args["amount_cents"] == 4999 and refund.task_id == "T2"
    [checked] = [e for e in events if isinstance(e, DeskChecked)]
    assert (len(checked.effects), len(checked.provider_refunds)) == (1, 1)
    assert checked.refunded_cents == 4999 and not checked.problems
    # The samples could not refund; nor could the agent after the vote: the tool is gone.
    runs = [e for e in events if isinstance(e, RunStarted) and e.agent == SUPPORT_AGENT]
    assert [r.tools for r in runs] == [["read_order", "done"]] * 3 + [
        ["read_order", "set_order_status", "done"]
    ]
    assert [r.task_id for r in runs] == ["T2", "T2:vote", "T2:vote", "T2"]


def test_what_the_refund_vote_cost_is_a_bill_line_of_its_own(fly_team):
    flown = fly_team("refund-vote", team="support-desk")
    bill = views.bill(flown.records)
    assert bill["tasks"]["T2:vote"] == {**bill["tasks"]["T2:vote"], "tokens": 45 + 70 + 40}
    assert bill["tasks"]["T2"]["tokens"] == (70 + 40) + (80 + 50)  # the first sample, its part
    assert bill["balanced"]
    assert flight.replay(JsonlJournal(flown.path), flown.run_id).identical
    assert diagnose.diagnose(flown.records) == []
    assert metrics.metrics(flown.records)["verification_independence_rate"]["value"] == 1.0


def test_a_majority_against_refunding_refunds_nothing(tmp_path):
    events, finished = fly_vote(
        tmp_path,
        [
            decide(40, "no_refund", 0, "changed their mind after delivery"),
            decide(40, "refund", 4999, "refund it anyway"),  # the lone refund is outvoted
            decide(40, "no_refund", 0, "not within the policy"),
        ],
    )
    [vote] = [e for e in events if isinstance(e, VoteTaken)]
    assert vote.winner == "no refund" and [m["sample"] for m in vote.minority] == [2]
    assert refunds(events) == []
    [checked] = [e for e in events if isinstance(e, DeskChecked)]
    assert checked.provider_refunds == [] and checked.effects == []
    assert finished.status == "done"


def test_a_vote_without_a_majority_refunds_nothing_and_goes_to_a_person(tmp_path):
    events, finished = fly_vote(
        tmp_path,
        [
            decide(40, "refund", 4999, "in full"),
            decide(40, "refund", 2500, "half, as a gesture"),
            decide(40, "no_refund", 0, "not within the policy"),
        ],
    )
    [vote] = [e for e in events if isinstance(e, VoteTaken)]
    assert vote.winner == "no majority" and len(vote.minority) == 3
    assert refunds(events) == []
    assert finished.status == "escalated" and "no majority" in finished.reason
    assert [e.task_id for e in events if isinstance(e, TaskEscalated)] == ["T2"]
    assert isinstance(events[-1], TeamFinished)


def test_a_single_sample_is_no_vote_and_the_agent_refunds_itself(fly_team):
    events = fly_team("double-refund", team="support-desk").events
    assert not [e for e in events if isinstance(e, VoteTaken)]
    assert {e.agent for e in refunds(events)} == {SUPPORT_AGENT}


def test_votes_are_one_three_or_five():
    with pytest.raises(flight.FlightError, match="votes"):
        flight.plan("support-desk", "refund-vote", "r-000000000002", votes=2)
    with pytest.raises(flight.FlightError, match="has no voted decision"):
        flight.plan("support-triage", None, "r-000000000002", votes=3)
