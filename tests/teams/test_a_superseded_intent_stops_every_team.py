"""Every team carries an intent with a version, and the mutation gate checks it: when a person
supersedes a run's intent while its agents work, repo-fix's merge, solo's delivery and triage's
refund are refused at the gate, nothing is merged, delivered or refunded, and the run says why.
Replay stays identical (the gate's decision is in the record)."""

from __future__ import annotations

import pytest

from runtime import flight, workspace
from runtime.coordination.gates import Intents
from runtime.diagnose import diagnose
from runtime.events import (
    EffectStarted,
    Integrated,
    IntentCarried,
    MutationRefused,
    SagaSettled,
)
from runtime.jsonl import JsonlJournal
from runtime.model import ScriptedClient
from runtime.session import Session
from runtime.team import Services
from teams import TEAMS

pytestmark = pytest.mark.slow


class ChangesHerMind(ScriptedClient):
    """An agent's model during whose first turn a person supersedes the run's intent."""

    def __init__(self, journal, run_id, responses, agent) -> None:
        super().__init__(responses, agent)
        self.journal, self.intent_id = journal, f"task-{run_id}"

    def complete(self, messages, tools):
        intents = Intents(self.journal)
        if intents.current(self.intent_id).version == 1:
            intents.declare(self.intent_id, "leave it as it is", "ann", "we ship next week")
        return super().complete(messages, tools)


def fly(team_name, scenario, agent, tmp_path, **settings):
    run_id = f"r-{scenario}"
    journal = JsonlJournal(tmp_path / "j.jsonl")
    config = flight.plan(team_name, scenario, run_id, **settings)
    team = TEAMS[team_name]
    scripts = team.scenarios[scenario].scripts
    clients = {a: ScriptedClient(scripts[a], a) for a in scripts}
    clients[agent] = ChangesHerMind(journal, run_id, scripts[agent], agent)
    finished = team.fly(Session(journal, run_id), config, clients, tmp_path, Services())
    records = flight.run_records(journal, run_id)
    events = [r.event for r in records]
    [carried] = [e for e in events if isinstance(e, IntentCarried)]
    assert (carried.intent_id, carried.intent_version) == (f"task-{run_id}", 1)
    return journal, run_id, finished, records, events, tmp_path / config.workspace


def test_repo_fix_does_not_merge_work_for_a_superseded_task(tmp_path):
    journal, run_id, finished, records, events, path = fly(
        "repo-fix", "first-flight", "reviewer", tmp_path
    )
    [refused] = [e for e in events if isinstance(e, MutationRefused)]
    assert (refused.check, refused.held, refused.current) == ("intent", 1, 2)
    assert finished.status == "escalated"
    assert "refused at the mutation gate (intent)" in finished.reason
    assert not [e for e in events if isinstance(e, Integrated)]
    assert workspace.git(path, "log", "--format=%s", "main").splitlines()[0] != "integrate T1"
    assert "mutation_refused" in {f["kind"] for f in diagnose(records)}
    assert flight.replay(journal, run_id).identical


def test_solo_does_not_deliver_work_for_a_superseded_task(tmp_path):
    journal, run_id, finished, _records, events, _ = fly("solo", "solo-fix", "coder", tmp_path)
    [refused] = [e for e in events if isinstance(e, MutationRefused)]
    assert (refused.check, refused.capability) == ("intent", "deliver")
    assert finished.status == "escalated" and "refused at the gate" in finished.reason
    assert flight.replay(journal, run_id).identical


def test_triage_does_not_refund_for_a_superseded_ticket(tmp_path):
    journal, run_id, _finished, _records, events, _ = fly(
        "support-triage", "refund-saga", "orders-worker", tmp_path
    )
    [saga] = [e for e in events if isinstance(e, SagaSettled)]
    assert saga.failed_step == "label" and "(intent)" in saga.error
    assert saga.completed == []  # no step was taken, so nothing needed undoing
    assert not [e for e in journal.read_prefix("effect-") if isinstance(e.event, EffectStarted)]
    [refused] = [r.event for r in journal.read(f"gate-{run_id}")]
    assert (refused.check, refused.capability) == ("intent", "refund")
    assert flight.replay(journal, run_id).identical
