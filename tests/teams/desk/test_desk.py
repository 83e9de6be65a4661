"""The support desk flown on the command line's services: orders as subject streams in the
run's journal, refunds at a slow file-backed provider that deduplicates on our key."""

from __future__ import annotations

import pytest

from runtime import flight
from runtime.coordination.claims import Claims
from runtime.coordination.gates import Intents
from runtime.events import (
    ClaimsReconciled,
    ConflictParked,
    DeskChecked,
    EffectStarted,
    Event,
    FactReconciled,
    MutationRefused,
    ToolReturned,
)
from runtime.journal import MemoryJournal
from runtime.jsonl import JsonlJournal
from runtime.model import ModelClient, ScriptedClient, call
from runtime.session import Session
from runtime.team import Services
from teams import TEAMS
from teams.desk.local import FilePayments, JournalOrders
from teams.desk.tools import ORDER_AGENT, SUPPORT_AGENT


def returned(events, tool, agent=None) -> list[ToolReturned]:
    return [
        e
        for e in events
        if isinstance(e, ToolReturned) and e.tool == tool and (agent is None or e.agent == agent)
    ]


def order_id_of(run_id: str) -> str:
    return "o-" + run_id.removeprefix("r-")


def fly_desk(tmp_path, scripts, scenario="lost-update", clients=None, journal=None, **desk):
    """Fly the desk with scripts of our own (the scenario's settings otherwise)."""
    journal = journal or MemoryJournal()
    run_id = "r-custom"
    config = flight.plan("support-desk", scenario, run_id, desk=desk or None)
    team = TEAMS["support-desk"]
    given = clients or {}
    chosen: dict[str, ModelClient] = {
        a: given.get(a) or ScriptedClient(scripts.get(a, team.scenarios[scenario].scripts[a]), a)
        for a in team.agents
    }
    session = Session(journal, run_id)
    finished = team.fly(session, config, chosen, tmp_path, Services())
    return journal, run_id, finished


def test_a_timed_out_refund_retried_is_one_refund_and_one_effect(fly_team):
    flown = fly_team("double-refund", team="support-desk")
    assert flown.outcome.status == "done", flown.outcome.reason
    first, second = returned(flown.events, "issue_refund")
    assert first.error is not None and first.error.type == "ToolTimeout"
    # The retry finds the first attempt in flight (or, on a slow machine, finished): either way
    # it does not refund again.
    assert (second.error and second.error.type == "EffectInProgress") or second.result["refund"]
    [checked] = [e for e in flown.events if isinstance(e, DeskChecked)]
    assert checked.refund_calls == 2
    assert [e["status"] for e in checked.effects] == ["succeeded"]
    assert len(checked.provider_refunds) == 1 and checked.refunded_cents == 4999
    assert checked.order["status"] == "refunded" and checked.order["version"] == 2
    journal = JsonlJournal(flown.path)
    started = [r for r in journal.read_prefix("effect-") if isinstance(r.event, EffectStarted)]
    assert len(started) == 1 and started[0].event.run_id == flown.run_id
    provider = FilePayments(flown.path.parent / "payments.sqlite3")
    assert provider.refunds(order_id_of(flown.run_id)) == [
        {"key": started[0].event.key, "amount_cents": 4999}
    ]
    assert flight.replay(journal, flown.run_id).identical


def test_two_decisions_from_one_version_overwrite_nothing_and_park_a_conflict(fly_team):
    flown = fly_team("lost-update", team="support-desk")
    assert flown.outcome.status == "escalated"
    assert flown.outcome.reason.startswith("HUMAN_REQUIRED")
    [won] = returned(flown.events, "set_order_status", ORDER_AGENT)
    [lost] = returned(flown.events, "set_order_status", SUPPORT_AGENT)
    assert won.result["status"] == "shipped" and won.result["version"] == 2
    assert lost.error is not None and lost.error.type == "OrderMoved"
    assert "decided from version 1, it is at version 2" in lost.error.message
    assert "'shipped', set by order-agent" in lost.error.message
    journal = JsonlJournal(flown.path)
    order_id = order_id_of(flown.run_id)
    order = JournalOrders(journal).get(order_id)
    assert (order.status, order.version) == ("shipped", 2)  # the loser overwrote nothing
    [reconciled] = [e for e in flown.events if isinstance(e, FactReconciled)]
    assert reconciled.status == "parked"
    [parked] = [r.event for r in journal.read(f"conflict-{reconciled.conflict_id}")]
    assert isinstance(parked, ConflictParked)
    assert {(c["agent"], c["value"], c["based_on"]) for c in parked.claims} == {
        (ORDER_AGENT, "shipped", 1),
        (SUPPORT_AGENT, "cancelled", 1),
    }
    assert parked.commit == {
        "service": "orders",
        "key": order_id,
        "version": 2,
        "intent": {"id": f"ticket-{order_id}", "version": 1},  # a ruling is gated on it
    }
    assert flight.replay(journal, flown.run_id).identical


def test_the_loser_that_decides_again_from_the_new_version_leaves_no_conflict(fly_team):
    flown = fly_team("re-decide", team="support-desk")
    assert flown.outcome.status == "done", flown.outcome.reason
    journal = JsonlJournal(flown.path)
    assert not journal.read_prefix("conflict-")
    claims = Claims(journal)
    about = f"order:{order_id_of(flown.run_id)}"
    first, second = [c for c in claims.all(about) if c.by == SUPPORT_AGENT]
    assert second.supersedes == first.claim_id and second.based_on == 2
    assert [c.value for c in claims.live(about, "status")] == ["shipped", "shipped"]


def test_a_rule_that_ranks_one_agent_higher_decides_and_commits_by_cas(fly_team):
    flown = fly_team(
        "lost-update",
        team="support-desk",
        desk={"authority": {"status": {"support-agent": 2, "order-agent": 1}}},
    )
    assert flown.outcome.status == "done", flown.outcome.reason
    assert "authority on status: support-agent over order-agent" in flown.outcome.reason
    journal = JsonlJournal(flown.path)
    order_id = order_id_of(flown.run_id)
    order = JournalOrders(journal).get(order_id)
    assert (order.status, order.version, order.updated_by) == ("cancelled", 3, "reconciler")
    decided = [
        r.event
        for r in journal.read(f"claims-order:{order_id}")
        if isinstance(r.event, ClaimsReconciled)
    ]
    assert len(decided) == 1 and decided[0].value == "cancelled" and len(decided[0].losers) == 1


def test_after_the_last_lost_race_the_agent_may_not_try_again(tmp_path):
    support = [
        call("set_order_status", 10, status="cancelled", based_on=1, evidence="customer"),
        call("set_order_status", 10, status="cancelled", based_on=2, evidence="insisting"),
        call("done", 10, outcome="disputed", summary="a person decides"),
    ]
    journal, run_id, finished = fly_desk(
        tmp_path, {SUPPORT_AGENT: support, **_order_agent_ships()}, attempts=1
    )
    first, second = returned(journal_events(journal, run_id), "set_order_status", SUPPORT_AGENT)
    assert first.error.type == "OrderMoved" and "last attempt" in first.error.message
    assert second.error.type == "Contended" and "goes to a person" in second.error.message
    assert finished.status == "escalated"  # the surviving claims disagree: a person decides
    assert JournalOrders(journal).get(order_id_of(run_id)).status == "shipped"


class SupersedesTheTicket(ScriptedClient):
    """The order agent's model, during whose turn a person changes the ticket's intent."""

    def __init__(self, journal, responses, agent) -> None:
        super().__init__(responses, agent)
        self.journal = journal

    def complete(self, messages, tools):
        intents = Intents(self.journal)
        intent = intents.current(f"ticket-{order_id_of('r-custom')}")
        if intent.version == 1:
            intents.declare(intent.intent_id, "Do not refund: replace it", "ann", "customer")
        return super().complete(messages, tools)


def test_work_under_a_superseded_intent_is_rejected_at_the_boundary(tmp_path):
    journal = MemoryJournal()
    support = [
        call("issue_refund", 10, amount_cents=4999, reason="broken"),
        call("done", 10, outcome="refused", summary="the ticket changed"),
    ]
    order = [call("read_order", 10), call("done", 10, outcome="unchanged", summary="-")]
    _, run_id, finished = fly_desk(
        tmp_path,
        {SUPPORT_AGENT: support},
        scenario="double-refund",
        clients={ORDER_AGENT: SupersedesTheTicket(journal, order, ORDER_AGENT)},
        journal=journal,
    )
    [refund] = returned(journal_events(journal, run_id), "issue_refund")
    assert refund.error.type == "GateRefused"
    assert "(intent)" in refund.error.message
    assert "version 1 of intent ticket-o-custom" in refund.error.message
    assert not journal.read_prefix("effect-")  # nothing was started
    [rejected] = [r.event for r in journal.read(f"gate-{run_id}")]
    assert isinstance(rejected, MutationRefused) and rejected.check == "intent"
    assert (rejected.held, rejected.current) == (1, 2)
    assert finished.status == "done"


def test_a_refund_larger_than_what_was_paid_is_refused_before_it_starts(tmp_path):
    support = [
        call("issue_refund", 10, amount_cents=5000, reason="broken"),
        call("done", 10, outcome="refused", summary="too much"),
    ]
    journal, run_id, _ = fly_desk(tmp_path, {SUPPORT_AGENT: support}, scenario="double-refund")
    [refund] = returned(journal_events(journal, run_id), "issue_refund")
    assert refund.error.type == "RefundRefused" and "4999 cents" in refund.error.message
    assert not journal.read_prefix("effect-")


@pytest.mark.parametrize(
    ("desk", "problem"),
    [
        ({"order_id": "has spaces"}, "settings.desk.order_id"),
        ({"provider_latency": -1}, "settings.desk.provider_latency"),
        ({"colour": "red"}, "unexpected field 'settings.desk.colour'"),
    ],
)
def test_bad_desk_settings_are_refused_by_name(desk, problem):
    with pytest.raises(flight.FlightError, match=problem.replace(".", r"\.")):
        flight.plan("support-desk", "double-refund", "r-1", desk=desk)


def test_an_event_cannot_name_a_payload_field_after_the_journal_s_placement():
    with pytest.raises(TypeError, match="version"):

        class Clashing(Event):
            version: int


def _order_agent_ships():
    return {
        ORDER_AGENT: [
            call("set_order_status", 10, status="shipped", based_on=1, evidence="scan"),
            call("done", 10, outcome="updated", summary="shipped"),
        ]
    }


def journal_events(journal, run_id) -> list[Event]:
    return [r.event for r in journal.read(f"run-{run_id}")]
