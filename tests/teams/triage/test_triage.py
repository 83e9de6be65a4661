"""The support-triage team over three real MCP servers: specialists at once, each on its own
stream and tool belt, the broken policy server contained, and an answer that says DEGRADED."""

from __future__ import annotations

import itertools
import time

import pytest

from runtime import flight, views
from runtime.events import (
    AgentFinished,
    AnswerComposed,
    BreakerTripped,
    FindingUnsupported,
    RecoveryRouted,
    RunStarted,
    TeamFinished,
    ToolReturned,
    WorkerTimedOut,
)
from runtime.journal import MemoryJournal
from runtime.jsonl import JsonlJournal
from runtime.model import ModelClient, ModelResponse, ScriptedClient, call
from runtime.session import Session
from runtime.team import Services
from teams import TEAMS
from teams.triage.plan import BELTS, KB, ORDERS, POLICY, RETURNS
from teams.triage.scenarios import SCRIPTS
from teams.triage.services import TriageServices

pytestmark = pytest.mark.slow


def by_stream(journal):
    streams: dict[str, list] = {}
    for rec in journal.read_all():
        streams.setdefault(rec.stream, []).append(rec.event)
    return streams


def test_the_broken_policy_server_is_contained_and_the_answer_says_degraded(fly_team):
    flown = fly_team("broken-policy", team="support-triage")
    assert flown.outcome.status == "done"
    assert "DEGRADED" in flown.outcome.reason and "cached policy" in flown.outcome.reason
    journal = JsonlJournal(flown.path)
    streams = by_stream(journal)
    run = streams[f"run-{flown.run_id}"]
    [answer] = [e for e in run if isinstance(e, AnswerComposed)]
    assert answer.text.startswith("DEGRADED:") and "policy snapshot 2025-05" in answer.text
    assert "B2001" in answer.text and "KB-104" in answer.text
    # The made-up finding never reaches the answer: its cited result does not say KB-999.
    [unsupported] = [e for e in run if isinstance(e, FindingUnsupported)]
    assert unsupported.missing == ["KB-999"] and "KB-999" not in answer.text
    # The policy server failed every call: its breaker tripped, recovery fell back. The trip
    # names its run (a store keeps an event naming none under no run: no finding, no audit).
    [tripped] = [e for e in run if isinstance(e, BreakerTripped)]
    assert (tripped.breaker, tripped.run_id) == ("tools:policy", flown.run_id)
    [routed] = [e for e in run if isinstance(e, RecoveryRouted)]
    assert routed.worker_id == POLICY and routed.action["action"] == "fallback"

    # Disjoint tool belts: each specialist was offered its own tools and nothing else.
    workers = {s: e for s, e in streams.items() if s.startswith("worker-")}
    assert len(workers) == 3
    offered = {}
    for events in workers.values():
        started = next(e for e in events if isinstance(e, RunStarted))
        offered[started.agent] = set(started.tools) - {"done"}
    # (the returns specialist takes only parts handed on: none in this run)
    assert offered == {worker: set(belt) for worker, belt in BELTS.items() if worker != RETURNS}
    # Really concurrent: the specialists' runs overlap in time.
    spans = sorted(
        (
            next(e.t for e in events if isinstance(e, RunStarted)),
            next(e.t for e in events if isinstance(e, AgentFinished)),
        )
        for events in workers.values()
    )
    assert any(later[0] < earlier[1] for earlier, later in itertools.pairwise(spans))

    bill = views.bill(flight.run_records(journal, flown.run_id))
    assert set(bill["agents"]) == {ORDERS, KB, POLICY} and bill["balanced"]
    assert flight.replay(journal, flown.run_id).identical


class Hangs(ModelClient):
    """A specialist whose model never answers in time."""

    def complete(self, messages, tools) -> ModelResponse:
        time.sleep(4)
        return call("done", 10, worker_id=KB, status="failed", reason="budget")


def fly_with(tmp_path, clients, **settings):
    run_id = "r-triage"
    config = flight.plan("support-triage", "broken-policy", run_id, **settings)
    team = TEAMS["support-triage"]
    chosen = {
        a: clients.get(a) or ScriptedClient(team.scenarios["broken-policy"].scripts.get(a, []), a)
        for a in team.agents
    }
    journal = MemoryJournal()
    finished = team.fly(Session(journal, run_id), config, chosen, tmp_path, Services())
    return journal, finished


def test_a_hung_specialist_misses_its_deadline_and_is_retried_once_then_degraded(tmp_path):
    journal, finished = fly_with(tmp_path, {KB: Hangs()}, deadline=0.8)
    assert isinstance(finished, TeamFinished) and finished.status == "done"
    events = [r.event for r in journal.read("run-r-triage")]
    timeouts = [e for e in events if isinstance(e, WorkerTimedOut)]
    assert [e.task_id for e in timeouts] == ["S2", "S2r"]  # the retry had twice the time
    assert all(e.worker_id == KB and e.elapsed >= e.deadline_seconds for e in timeouts)
    assert "kb-worker failed twice (budget)" in finished.reason
    assert "policy" in finished.reason  # and the policy fallback still stands


def test_a_specialist_cannot_call_a_tool_outside_its_belt(tmp_path):
    nosy = ScriptedClient(
        [
            call("orders.lookup_order", 50, order_id="B2001"),  # not on the kb belt
            *SCRIPTS[KB],
        ],
        KB,
    )
    journal, finished = fly_with(tmp_path, {KB: nosy})
    kb_stream = next(s for s in by_stream(journal) if s.endswith("-S2-kb-worker"))
    [refused, *_] = [e for e in by_stream(journal)[kb_stream] if isinstance(e, ToolReturned)]
    assert refused.tool == "orders.lookup_order" and refused.error.type == "UnknownTool"
    assert finished.status == "done"


def test_a_server_down_from_the_start_is_routed_around(tmp_path):
    from runtime.events import WorkerHandedOff
    from runtime.mcp.client import McpServer, McpSurface
    from teams.triage.surface import support_servers

    def surface():
        dead = McpServer("policy", ("/nonexistent/policy-server",))
        return McpSurface([*support_servers(("orders", "kb")), dead])

    run_id = "r-down"
    config = flight.plan("support-triage", "broken-policy", run_id)
    team = TEAMS["support-triage"]
    clients = {a: ScriptedClient(SCRIPTS.get(a, []), a) for a in team.agents}
    journal = MemoryJournal()
    finished = team.fly(
        Session(journal, run_id),
        config,
        clients,
        tmp_path,
        Services(provided=(TriageServices(mcp=surface),)),
    )
    events = [r.event for r in journal.read(f"run-{run_id}")]
    handed = [e.handoff["worker_id"] for e in events if isinstance(e, WorkerHandedOff)]
    assert handed == [ORDERS, KB]  # nobody was sent to a server that is down
    assert finished.status == "done" and "server policy is degraded" in finished.reason
    assert not journal.read_prefix(f"worker-{run_id}-S3")


def test_the_refund_saga_undoes_its_steps_in_reverse_once_even_when_asked_again(fly_team):
    import sqlite3

    from runtime.events import SagaSettled
    from runtime.fanout.saga import Saga

    flown = fly_team("refund-saga", team="support-triage")
    journal = JsonlJournal(flown.path)
    [settled] = [e for e in flown.events if isinstance(e, SagaSettled)]
    assert settled.completed == ["label", "credit"] and settled.failed_step == "record"
    assert settled.compensated == ["credit", "label"]  # the reverse of the order they were done
    assert "BreakerOpen" in settled.error  # policy's breaker had tripped during the fan-out
    assert "undone: credit, label" in flown.outcome.reason

    [book] = flown.path.parent.glob(f"**/{flown.run_id}*.orders-book.sqlite3")
    operations = sqlite3.connect(book).execute("SELECT kind FROM operation ORDER BY at").fetchall()
    assert [kind for (kind,) in operations] == ["label", "credit", "reversal", "void"]

    # A resumed saga (a fresh object on the same journal) asked to compensate again finds
    # every compensation recorded and calls nothing.
    again = Saga(journal, settled.saga_id, flown.run_id)
    again.undo("label", lambda key, done: pytest.fail("voided twice"))
    again.undo("credit", lambda key, done: pytest.fail("reversed twice"))
    assert again.compensate(reason="asked again") == []
    assert flight.replay(journal, flown.run_id).identical


def test_a_replay_long_after_the_deadlines_still_replays_identically(tmp_path):
    journal = JsonlJournal(tmp_path / "j.jsonl")
    config = flight.plan("support-triage", "broken-policy", "r-late", deadline=2.0)
    outcome = flight.fly(journal, config, "r-late", tmp_path)
    assert outcome.status == "done"
    assert not [r for r in journal.read("run-r-late") if isinstance(r.event, WorkerTimedOut)]
    time.sleep(2.1)  # every deadline has passed: a replay must not time anybody out
    assert flight.replay(journal, "r-late").identical


def test_a_runaway_specialist_trips_the_runs_spend_breaker(fly_team):
    from runtime.events import ModelFailed, WorkerReported

    flown = fly_team("runaway-spend", team="support-triage")
    journal = JsonlJournal(flown.path)
    run = [r.event for r in journal.read(f"run-{flown.run_id}")]
    [tripped] = [e for e in run if isinstance(e, BreakerTripped) and e.breaker.startswith("spend:")]
    assert tripped.reason == "spend rate" and tripped.rates["tokens_per_second"] > 150
    records = flight.run_records(journal, flown.run_id)
    refused = [r.event for r in records if isinstance(r.event, ModelFailed)]
    assert refused and all(e.error.type == "SpendRefused" for e in refused)
    assert KB in {e.agent for e in refused}  # the spender was stopped mid-run
    kb = next(
        e.report for e in run if isinstance(e, WorkerReported) and e.report["worker_id"] == KB
    )
    assert (kb["status"], kb["reason"]) == ("failed", "breaker")  # not its own refusal
    routed = [e for e in run if isinstance(e, RecoveryRouted) and e.worker_id == KB]
    assert routed[0].action["action"] == "escalate"  # no cache, and a retry meets the breaker
    spent = views.bill(records)["agents"][KB]["tokens"]
    assert spent < 6 * 1200  # the script would have spent 7,200 and more
    # The others may have been refused too (the breaker is the run's): whatever was answered,
    # the answer says what is missing.
    [answer] = [e for e in run if isinstance(e, AnswerComposed)]
    assert answer.degraded and "kb-worker escalated" in answer.degraded
    assert "kb-worker escalated" in flown.outcome.reason
    assert flight.replay(journal, flown.run_id).identical


def test_the_trace_of_a_triage_run_shows_its_specialists_side_by_side(fly_team):
    from runtime import otel

    flown = fly_team("broken-policy", team="support-triage")
    trace = otel.otlp_trace(flight.run_records(JsonlJournal(flown.path), flown.run_id))
    spans = [s for rs in trace["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]

    def attribute(span, key):
        return next((a["value"] for a in span["attributes"] if a["key"] == key), {})

    agents = {
        attribute(s, "gen_ai.agent.name").get("stringValue"): s
        for s in spans
        if attribute(s, "gen_ai.operation.name").get("stringValue") == "invoke_agent"
    }
    assert {ORDERS, KB, POLICY} <= set(agents)
    windows = sorted(
        (int(agents[a]["startTimeUnixNano"]), int(agents[a]["endTimeUnixNano"]))
        for a in (ORDERS, KB, POLICY)
    )
    assert any(later[0] < earlier[1] for earlier, later in itertools.pairwise(windows))
    tools = [
        s
        for s in spans
        if attribute(s, "gen_ai.operation.name").get("stringValue") == "execute_tool"
    ]
    assert {attribute(s, "gen_ai.tool.name")["stringValue"] for s in tools} >= {
        "orders.lookup_order",
        "kb.search",
        "policy.check_refund_policy",
    }
