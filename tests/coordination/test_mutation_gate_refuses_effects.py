"""The mutation gate in front of the effect ledger: each of its five checks refuses on its own,
with a typed refusal naming the check, and the effect is neither started nor performed."""

from __future__ import annotations

from dataclasses import replace

import pytest

from runtime.coordination.effects import Ledger
from runtime.coordination.gates import Intents
from runtime.coordination.keys import effect_key
from runtime.coordination.leases import Leases
from runtime.coordination.mutation import (
    Authority,
    Evidence,
    GateRefused,
    Mutation,
    MutationGate,
)
from runtime.events import MutationRefused
from runtime.journal import MemoryJournal

LOG = "gate-r-1"
READ = Evidence("read_order by support-agent in T2", True)


@pytest.fixture
def world():
    journal = MemoryJournal()
    Intents(journal).declare("ticket-o-1", "refund the broken kettle", by="ann")
    lease = Leases(journal).acquire("order:o-1", "driver-1", ttl=60)
    gate = MutationGate(journal, Authority.of({"refund": {"support-agent"}}), LOG)
    ledger = Ledger(journal, gate=gate)
    key = effect_key("r-1", "T2", "order:o-1", {"amount_cents": 4999})
    mutation = Mutation(
        what="support-agent refunding 4999 cents on o-1",
        actor="support-agent",
        capability="refund",
        intent=("ticket-o-1", 1),
        lease=lease.fence,
        evidence=(READ,),
        expected_key=key,
        run_id="r-1",
    )
    calls: list[str] = []

    def refund(payload, mutation, key=key):
        return ledger.perform(
            key,
            "refund",
            "order:o-1",
            payload,
            lambda k: calls.append(k) or {"refund_id": "rf-1"},
            run_id="r-1",
            mutation=mutation,
        )

    return journal, mutation, refund, calls, key


def superseded(journal, mutation):
    Intents(journal).declare("ticket-o-1", "replace it instead", by="ann", reason="customer")
    return mutation


def taken_over(journal, mutation):
    leases = Leases(journal)
    leases.release(leases.current("order:o-1"), outcome="crashed")
    leases.acquire("order:o-1", "driver-2", ttl=60)
    return mutation


def by_the_wrong_agent(journal, mutation):
    return replace(mutation, actor="order-agent")


def without_evidence(journal, mutation):
    return replace(mutation, evidence=(Evidence("read_order", False, "never read the order"),))


def with_a_made_up_key(journal, mutation):
    return replace(mutation, expected_key="fx-" + "0" * 40)


@pytest.mark.parametrize(
    "breaks, check, names",
    [
        (superseded, "intent", "version 1 of intent ticket-o-1"),
        (taken_over, "lease", "carries epoch 1 of lease-order:o-1, which stands at epoch"),
        (by_the_wrong_agent, "authority", "order-agent may not refund"),
        (without_evidence, "evidence", "never read the order"),
        (with_a_made_up_key, "idempotency", "keys are derived, never made up"),
    ],
)
def test_each_failed_check_refuses_the_effect_by_name_and_starts_nothing(
    world, breaks, check, names
):
    journal, mutation, refund, calls, _ = world
    with pytest.raises(GateRefused, match=names) as refused:
        refund({"amount_cents": 4999}, breaks(journal, mutation))
    assert refused.value.refused.check == check
    assert f"({check})" in str(refused.value)
    [logged] = [r.event for r in journal.read(LOG)]
    assert isinstance(logged, MutationRefused) and logged.check == check
    assert logged.actor and logged.capability == "refund" and logged.reason
    assert journal.read_prefix("effect-") == []  # no effect started
    assert calls == []  # the provider was never asked


def test_a_key_used_for_another_request_is_refused_and_the_first_effect_stands(world):
    journal, mutation, refund, calls, key = world
    assert refund({"amount_cents": 4999}, mutation) == {"refund_id": "rf-1"}
    before = journal.read(f"effect-{key}")
    with pytest.raises(GateRefused, match="one key, one request") as refused:
        refund({"amount_cents": 1}, mutation)
    assert refused.value.refused.check == "idempotency"
    assert journal.read(f"effect-{key}") == before and calls == [key]
    # the same request again is the same effect, read back, not a refusal
    assert refund({"amount_cents": 4999}, mutation) == {"refund_id": "rf-1"} and calls == [key]


def test_a_gated_ledger_refuses_an_effect_that_carries_no_mutation(world):
    journal, _, refund, calls, _ = world
    with pytest.raises(ValueError, match="carries no mutation"):
        refund({"amount_cents": 4999}, None)
    assert journal.read_prefix("effect-") == [] and calls == []


def test_a_mutation_for_no_intent_is_refused_at_the_intent_check(world):
    _, mutation, refund, calls, _ = world
    with pytest.raises(GateRefused, match="names no intent") as refused:
        refund({"amount_cents": 4999}, replace(mutation, intent=None))
    assert refused.value.refused.check == "intent" and calls == []
