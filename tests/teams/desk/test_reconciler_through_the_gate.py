"""The desk's reconciler commits a rule's winner through the mutation gate: when a person
supersedes the ticket's intent while the agents work, the commit is refused (intent), nothing
is written to the order, and the conflict goes to a person naming the gate's reason."""

from __future__ import annotations

from runtime import flight
from runtime.coordination.gates import Intents
from runtime.events import ConflictParked, FactChanged, FactReconciled, MutationRefused
from runtime.jsonl import JsonlJournal
from runtime.model import ScriptedClient
from teams import TEAMS
from teams.desk.tools import RECONCILER, SUPPORT_AGENT
from tests.teams.desk.test_desk import fly_desk, order_id_of

# The support agent outranks the order agent on the status: the rule decides for its
# "cancelled", which the reconciler then commits over the order agent's "shipped".
SUPPORT_DECIDES = {"status": {SUPPORT_AGENT: 2, "order-agent": 1}}


class ChangesHerMind(ScriptedClient):
    """The support agent's model, during whose last turn a person supersedes the ticket."""

    def __init__(self, journal, intent_id, responses, agent) -> None:
        super().__init__(responses, agent)
        self.journal, self.intent_id = journal, intent_id

    def complete(self, messages, tools):
        if self.position == len(self.script) - 1:
            Intents(self.journal).declare(
                self.intent_id, "keep the order as it is", "ann", "the customer called back"
            )
        return super().complete(messages, tools)


def test_a_reconciler_commit_under_a_superseded_intent_is_refused_and_parked(tmp_path):
    journal = JsonlJournal(tmp_path / "j.jsonl")
    order_id = order_id_of("r-custom")
    scripts = TEAMS["support-desk"].scenarios["lost-update"].scripts
    mind = ChangesHerMind(journal, f"ticket-{order_id}", scripts[SUPPORT_AGENT], SUPPORT_AGENT)
    desk = dict(TEAMS["support-desk"].scenarios["lost-update"].settings["desk"])
    _, run_id, finished = fly_desk(
        tmp_path,
        {},
        clients={SUPPORT_AGENT: mind},
        journal=journal,
        **desk,
        authority=SUPPORT_DECIDES,
    )
    events = [r.event for r in journal.read(f"run-{run_id}")]
    [reconciled] = [e for e in events if isinstance(e, FactReconciled)]
    assert reconciled.status == "parked"
    assert reconciled.rule.startswith("the gate refused the reconciler's commit (intent)")
    [refused] = [r.event for r in journal.read(f"gate-{run_id}")]
    assert isinstance(refused, MutationRefused)
    assert (refused.actor, refused.capability, refused.check) == (RECONCILER, "reconcile", "intent")
    assert (refused.held, refused.current) == (1, 2)
    # nothing written: the order is as the order agent left it, and no reconciler wrote
    changes = [r.event for r in journal.read(f"subject-order:{order_id}")]
    assert [e.value for e in changes if isinstance(e, FactChanged)][-1] == "shipped"
    assert not [e for e in changes if isinstance(e, FactChanged) and e.by == RECONCILER]
    # the person's ruling will be checked against the intent the conflict was parked under
    [parked] = [r.event for r in journal.read(f"conflict-{reconciled.conflict_id}")]
    assert isinstance(parked, ConflictParked)
    assert parked.commit["intent"] == {"id": f"ticket-{order_id}", "version": 1}
    assert finished.status == "escalated" and "HUMAN_REQUIRED" in finished.reason
    assert flight.replay(journal, run_id).identical
