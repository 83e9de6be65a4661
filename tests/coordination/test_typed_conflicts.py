"""Conflicts are typed, and each type has its own policy: a rule over the record decides, or the
conflict goes to the human review queue with its type."""

from __future__ import annotations

import pytest

from runtime.coordination.claims import Claims, Rules
from runtime.coordination.conflicts import POLICIES, TYPES
from runtime.events import ClaimsReconciled, ConflictParked
from runtime.journal import MemoryJournal

RULES = Rules({"status": {"order": 2, "support": 1}, "may_refund": {"lead": 3}})

# (predicate, [(by, value, source, evidence)], kind, decided value or None: parked)
CASES = [
    (
        "status",
        [("order-agent", "shipped", "model", {}), ("support-agent", "cancelled", "model", {})],
        "state",
        "shipped",
    ),
    (
        "status",
        [("warehouse", "shipped", "state", {}), ("support-agent", "cancelled", "model", {})],
        "evidence",
        "shipped",
    ),
    (
        "owner",
        [
            ("coder-a", "coder-a", "model", {"epoch": 3}),
            ("coder-b", "coder-b", "model", {"epoch": 4}),
        ],
        "ownership",
        "coder-b",
    ),
    (
        "may_refund",
        [("lead", True, "model", {}), ("support-agent", False, "model", {})],
        "authority",
        True,
    ),
    (
        "verdict",
        [("reviewer", "accept", "verifier", {}), ("tester", "reject", "verifier", {})],
        "verification",
        None,
    ),
    (
        "plan",
        [
            ("coder-a", "patch the parser", "model", {"verifier": "suite", "score": 0.9}),
            ("coder-b", "rewrite the parser", "model", {"verifier": "suite", "score": 0.4}),
        ],
        "plan",
        "patch the parser",
    ),
    (
        "status",
        [
            ("support-agent", "refunded", "model", {"intent_version": 1}),
            ("order-agent", "replaced", "model", {"intent_version": 2}),
        ],
        "intent",
        "replaced",
    ),
    (
        "workspace",
        [("coder-a", "coder-a", "model", {}), ("coder-b", "coder-b", "model", {})],
        "resource",
        "coder-a",
    ),
]


def test_every_type_the_issue_names_has_a_policy():
    assert set(TYPES) == {
        "state",
        "evidence",
        "ownership",
        "authority",
        "verification",
        "plan",
        "intent",
        "resource",
    }
    assert set(POLICIES) == set(TYPES) and all(p.rule for p in POLICIES.values())


@pytest.mark.parametrize("predicate, claims, kind, decided", CASES, ids=[c[2] for c in CASES])
def test_each_conflict_is_typed_and_settled_by_its_policy_or_parked_with_its_type(
    predicate, claims, kind, decided
):
    journal = MemoryJournal()
    store = Claims(journal)
    for by, value, source, evidence in claims:
        store.claim("x:1", predicate, value, 1, by, source, evidence, run_id="r-1")
    outcome = store.reconcile("x:1", predicate, RULES, run_id="r-1")
    events = [r.event for r in journal.read("claims-x:1")]
    if decided is None:
        assert outcome.status == "parked" and outcome.rule.startswith("HUMAN_REQUIRED")
        [parked] = [r.event for r in journal.read(f"conflict-{outcome.conflict_id}")]
        assert isinstance(parked, ConflictParked) and parked.conflict_type == kind
        assert not any(isinstance(e, ClaimsReconciled) for e in events)  # nothing decided
    else:
        assert (outcome.status, outcome.value) == ("decided", decided)
        [settled] = [e for e in events if isinstance(e, ClaimsReconciled)]
        assert settled.value == decided and settled.rule
        assert not journal.read_prefix("conflict-")  # nothing parked for a person


def test_a_policy_without_what_it_reads_parks_the_conflict_with_its_type():
    journal = MemoryJournal()
    store = Claims(journal)
    # two plans scored by different verifiers: the scores do not compare
    store.claim("x:1", "plan", "a", 1, "coder-a", "model", {"verifier": "suite", "score": 0.9})
    store.claim("x:1", "plan", "b", 1, "coder-b", "model", {"verifier": "lint", "score": 0.1})
    outcome = store.reconcile("x:1", "plan", RULES)
    assert outcome.status == "parked"
    [parked] = [r.event for r in journal.read(f"conflict-{outcome.conflict_id}")]
    assert parked.conflict_type == "plan"


def test_a_state_conflict_between_equals_goes_to_a_person():
    journal = MemoryJournal()
    store = Claims(journal)
    store.claim("x:1", "status", "shipped", 1, "clerk-1", "model")
    store.claim("x:1", "status", "lost", 1, "clerk-2", "model")
    outcome = store.reconcile("x:1", "status", RULES)
    [parked] = [r.event for r in journal.read(f"conflict-{outcome.conflict_id}")]
    assert (outcome.status, parked.conflict_type) == ("parked", "state")
