"""A delegation back to an agent on its chain, or past the depth limit, is refused with
DelegationRefused; a journal from before the limits shows the cycle its requests made."""

from __future__ import annotations

import pytest

from runtime import events as ev
from runtime.coordination.delegation import Delegations, Refused
from runtime.diagnose import diagnose
from runtime.journal import MemoryJournal
from runtime.session import Session
from tests.coordination.drills import flown, recorded, replay


def test_a_delegation_back_to_the_orchestrator_is_refused_and_the_researcher_keeps_it():
    run = flown("delegation-cycle")
    assert run.finished.status == "done"
    assert run.kinds() == ["WorkDelegated", "WorkDelegated", "DelegationRefused", "TeamFinished"]
    refused = run.events[2]
    assert (refused.by, refused.to, refused.rule) == ("researcher", "orchestrator", "cycle")
    assert refused.chain == ["orchestrator", "triager", "researcher"]
    [found] = diagnose(run.records)
    assert found["kind"] == "delegation_cycle"
    assert "orchestrator → triager → researcher → orchestrator" in found["summary"]
    assert replay(run)


def test_a_delegation_past_the_depth_limit_is_refused():
    run = flown("delegation-too-deep")
    assert run.finished.status == "done"
    refused = run.events[2]
    assert (refused.rule, refused.depth, refused.limit) == ("depth", 3, 2)
    [found] = diagnose(run.records)
    assert found["kind"] == "delegation_too_deep"
    assert replay(run)


def test_only_the_delegate_may_continue_a_delegation_and_nothing_is_written_otherwise():
    journal = MemoryJournal()
    chain = Delegations(Session(journal, "r-1"))
    first = chain.delegate("orchestrator", "triager")
    with pytest.raises(ValueError, match="researcher was not delegated"):
        chain.delegate("researcher", "coder", parent=first.delegation_id)
    with pytest.raises(Refused, match="already on the chain"):
        chain.delegate("triager", "triager", parent=first.delegation_id)
    assert [r.event.kind for r in journal.read("run-r-1")] == ["WorkDelegated", "DelegationRefused"]


def test_a_journal_from_before_the_limits_shows_the_requests_going_round():
    def request(sender, recipient):
        return ev.MessageSent(
            performative="request", sender=sender, recipient=recipient, task_id="T1"
        )

    records = recorded(
        [
            request("orchestrator", "triager"),
            request("triager", "researcher"),
            request("researcher", "orchestrator"),
        ]
    )
    [found] = diagnose(records)  # one task's cycle: a delegation cycle, not a deadlock
    assert found["kind"] == "delegation_cycle" and found["positions"] == [1, 2, 3]
    assert "nothing refused it" in found["summary"]
