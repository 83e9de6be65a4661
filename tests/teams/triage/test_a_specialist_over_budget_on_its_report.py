"""A specialist whose done turn spends its allowance: the work was done and paid for, so its
report reaches the parent, marked over budget under the specialist's name; the run's own
budget is not said to be spent."""

from __future__ import annotations

from runtime import flight, views
from runtime.events import AgentFinished, BudgetExhausted, WorkerReported
from runtime.journal import MemoryJournal
from runtime.model import ModelResponse, ScriptedClient
from runtime.session import Session
from runtime.team import Services
from teams import TEAMS
from teams.triage.plan import KB
from teams.triage.scenarios import SCRIPTS

RUN = "r-over"


def fly(tmp_path, clients):
    config = flight.plan("support-triage", "broken-policy", RUN)
    team = TEAMS["support-triage"]
    chosen = {
        a: clients.get(a) or ScriptedClient(team.scenarios["broken-policy"].scripts.get(a, []), a)
        for a in team.agents
    }
    journal = MemoryJournal()
    finished = team.fly(Session(journal, RUN), config, chosen, tmp_path, Services())
    return journal, finished


def test_a_report_on_the_turn_that_spent_the_allowance_reaches_the_parent_marked(tmp_path):
    search, done = SCRIPTS[KB]
    allowance = max(200, flight.plan("support-triage", "broken-policy", RUN).allowance // 4)
    # The report's turn alone costs more than the specialist's whole allowance.
    costly: ModelResponse = done.model_copy(
        update={"usage": done.usage.model_copy(update={"total": allowance + 100})}
    )
    journal, finished = fly(tmp_path, {KB: ScriptedClient([search, costly], KB)})
    assert finished.status == "done"
    by_stream: dict[str, list] = {}
    for rec in journal.read_all():
        by_stream.setdefault(rec.stream, []).append(rec.event)
    [kb] = [events for s, events in by_stream.items() if s.endswith("-kb-worker")]
    assert any(isinstance(e, AgentFinished) for e in kb)  # its done was taken
    # Nobody's allowance is said to be exhausted: not the run's, not the specialist's halt.
    everything = [e for events in by_stream.values() for e in events]
    assert not [e for e in everything if isinstance(e, BudgetExhausted)]

    reported = [e for e in by_stream[f"run-{RUN}"] if isinstance(e, WorkerReported)]
    [kb_report] = [e.report for e in reported if e.report["worker_id"] == KB]
    assert kb_report["status"] == "ok" and kb_report["findings"]
    spent = search.usage.total + allowance + 100
    assert kb_report["tokens"] == spent
    assert kb_report["degraded"] == (
        f"over budget: {KB}'s allowance {allowance:,} tokens, spent {spent:,} "
        "on the turn it reported"
    )
    bill = views.bill(flight.run_records(journal, RUN))
    assert bill["agents"][KB]["tokens"] == spent
    assert flight.replay(journal, RUN).identical


def test_a_breach_before_its_report_halts_the_specialist_under_its_own_name(tmp_path):
    search, done = SCRIPTS[KB]
    allowance = max(200, flight.plan("support-triage", "broken-policy", RUN).allowance // 4)
    costly = search.model_copy(
        update={"usage": search.usage.model_copy(update={"total": allowance})}
    )
    journal, _ = fly(tmp_path, {KB: ScriptedClient([costly, done], KB)})
    halts = [r.event for r in journal.read_all() if isinstance(r.event, BudgetExhausted)]
    assert [(h.agent, h.ledger, h.spent, h.allowance) for h in halts] == [
        (KB, KB, allowance, allowance)
    ]
    assert halts[0].said() == f"its allowance {allowance:,} tokens, spent {allowance:,}"
