"""The support-triage team: specialists in parallel over real MCP tool servers.

A ticket is split into independent sub-tasks, each handed to one specialist with a brief it
cannot see past (objective, resolved inputs, its tool belt, step and token budgets, a report
contract, a deadline). The specialists run at once, each on a stream of its own
(`worker-<run>-<sub-task>`), and are collected with a deadline. What comes back is checked
before it is believed:

    report       typed (ok | failed, with a reason code); a broken report is a failure
    findings     each must cite one of the worker's own tool calls and agree with its result
    recovery     a failed sub-task is routed on its reason code: a bigger budget, a cached
                 fallback, or escalation; an answer built on a fallback says DEGRADED and why
    breakers     each tool server sits behind a circuit breaker on its failure rate; a tripped
                 breaker refuses calls at once and is journalled

The answer is composed by the harness from verified findings only; the verdict is "done" when
every sub-task was answered (degraded or not) and "failed" when none was.
"""

from __future__ import annotations

import dataclasses
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from runtime import errors, loop, streams, workspace
from runtime.budget import Budget
from runtime.events import (
    AnswerComposed,
    BreakerReset,
    BreakerTripped,
    Event,
    SagaSettled,
    TeamFinished,
    ToolsListed,
)
from runtime.fanout import contracts
from runtime.fanout.breakers import BreakerOpen, CircuitBreaker, SpendBreaker
from runtime.fanout.contracts import Handoff, Reason, Report
from runtime.fanout.engine import Crew, failed, fan_out, hand_off, replayed
from runtime.fanout.routing import Cached, RecoveryPolicy
from runtime.fanout.saga import Saga
from runtime.fanout.settle import Answer, settle
from runtime.model import ModelClient, ModelError, ModelResponse, call
from runtime.session import Session
from runtime.teams.base import FlightConfig, Scenario, Services, Team, start
from runtime.tools import Tool

ORDERS, KB, POLICY = "orders-worker", "kb-worker", "policy-worker"
BELTS = {
    ORDERS: ["orders.lookup_order", "orders.list_orders"],
    KB: ["kb.search"],
    POLICY: ["policy.check_refund_policy", "policy.policy_for"],
}
SYSTEM = (
    "You are a support specialist with a narrow brief. Use only your tools, cite the id of the "
    "tool call behind every finding, and finish by calling done with your report."
)
REPORT = loop.done_tool(
    {
        "worker_id": {"type": "string"},
        "status": {"enum": ["ok", "failed"]},
        "findings": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "claim": {"type": "string"},
                    "source_call_id": {"type": "string"},
                    "source_tool": {"type": "string"},
                },
                "required": ["claim", "source_call_id", "source_tool"],
            },
        },
        "reason": {"enum": ["budget", "tool_error", "ambiguous", "refused", None]},
        "degraded": {"type": ["string", "null"]},
    },
    required=["worker_id", "status"],
)
# What the policy specialist falls back on when the policy service fails: a snapshot of the
# refund rules, dated, so the answer can say what it rests on.
POLICY_SNAPSHOT = Cached(
    source="policy snapshot 2025-05 (cached copy of the refund rules)",
    text="Damaged items reported within 14 days of delivery are refunded in full to the "
    "original payment method; no return is needed when a photo shows the damage.",
)
SPEND_WINDOW = 10.0  # seconds over which the spend rate is judged
ORDER_ID = re.compile(r"\b[A-Z]\d{4}\b")


def handoffs(task: str, steps: int, tokens: int, deadline: float) -> list[tuple[str, Handoff]]:
    """The plan: three independent sub-tasks, each with its own resolved inputs."""
    found = ORDER_ID.search(task)
    order = {"order_id": found.group(0)} if found else {}
    plan = [
        (ORDERS, "Find the order's status, items and any note about the customer's problem."),
        (KB, "Find the help articles that apply to this ticket."),
        (POLICY, "Say whether refunding this order's total is within the refund policy."),
    ]
    return [
        (
            f"S{n}",
            Handoff(
                worker_id=worker,
                objective=objective,
                inputs={"ticket": task, **(order if worker != KB else {})},
                allowed_tools=BELTS[worker],
                max_steps=steps,
                max_tokens=tokens,
                return_contract="findings that each cite the tool call they rest on",
                deadline_seconds=deadline,
            ),
        )
        for n, (worker, objective) in enumerate(plan, 1)
    ]


class Belt:
    """The run's tools, from what the servers listed; calls go to a surface started on first
    use (never in a replay, whose results all come from the journal), behind one breaker per
    server."""

    def __init__(self, open_surface: Callable[[], Any]) -> None:
        self.specs: list[dict[str, Any]] = []
        self.open_surface = open_surface
        self.surface: Any = None
        self.lock = threading.Lock()
        self.breakers: dict[str, CircuitBreaker] = {}
        self.events: list[Event] = []

    def breaker(self, server: str) -> CircuitBreaker:
        with self.lock:
            if server not in self.breakers:
                self.breakers[server] = CircuitBreaker(
                    f"tools:{server}",
                    window=6,
                    min_calls=2,
                    max_failure_rate=0.5,
                    cool_down=30.0,
                    on_event=self.events.append,
                )
            return self.breakers[server]

    def opened(self) -> Any:
        with self.lock:
            if self.surface is None:
                self.surface = self.open_surface()
            return self.surface

    def listing(self) -> dict[str, Any]:
        surface = self.opened()
        return {"tools": [t.spec() for t in surface.tools()], "degraded": surface.degraded()}

    def call(self, name: str, args: dict[str, Any]) -> Any:
        """The tool, behind its server's breaker (open: refused at once, a ToolFailure, so an
        observation)."""
        surface = self.opened()
        return self.breaker(name.split(".", 1)[0]).call(lambda: surface.call(name, args))

    def tools(self) -> list[Tool]:
        return [
            Tool(
                s["name"],
                s.get("description", ""),
                s["parameters"],
                lambda _name=s["name"], **args: self.call(_name, args),
                timeout=20.0,
            )
            for s in self.specs
        ]

    def close(self) -> None:
        if self.surface is not None:
            self.surface.close()


@errors.replayable
class SpendRefused(ModelError):
    """The run's spend breaker is open: no more model calls for now."""


class Metered(ModelClient):
    """A specialist's model, behind the run's spend breaker: a call is refused while the
    breaker is open, and every answer's tokens count toward the run's rate and cap."""

    def __init__(self, client: ModelClient, breaker: SpendBreaker) -> None:
        self.client = client
        self.breaker = breaker

    def complete(self, messages: Any, tools: Any) -> ModelResponse:
        try:
            self.breaker.allow()
        except BreakerOpen as exc:
            raise SpendRefused(str(exc)) from None
        response = self.client.complete(messages, tools)
        self.breaker.record(response.usage.total)
        return response


def spend_breaker(config: FlightConfig, run_id: str, belt: Belt, spent: int = 0) -> Any:
    """The run's spend breaker: a rate (when the run sets one) and the allowance as a cap.
    `spent` seeds it with what the run spent before (a specialist on another worker)."""
    breaker = SpendBreaker(
        run_id,
        max_rate=config.spend_rate,
        window_seconds=SPEND_WINDOW,
        cap=config.allowance,
        on_event=belt.events.append,
    )
    breaker.spent = spent
    return breaker


def default_surface(book: str | None = None) -> Any:
    """The three MCP servers; the orders server keeps its book of credits and labels at
    `book` (or MINUTES_ORDERS_BOOK: servers get no environment of ours unless given)."""
    from runtime.mcp.client import McpSurface, support_servers

    book = book or os.environ.get("MINUTES_ORDERS_BOOK")
    servers = [
        dataclasses.replace(s, env={"MINUTES_ORDERS_BOOK": book})
        if s.name == "orders" and book
        else s
        for s in support_servers()
    ]
    return McpSurface(servers)


def refund(session: Session, belt: Belt, order_id: str) -> SagaSettled:
    """Carry out the refund as a saga: a return label, a store credit, and the decision on
    record with the policy service. If a step fails, the steps before it are undone, last
    first, each once (the saga's ledger keys survive a crash and a replay)."""

    def work() -> dict[str, Any]:
        saga = Saga(session.journal, streams.saga_id("refund", session.run_id), session.run_id)
        order = belt.call("orders.lookup_order", {"order_id": order_id})["order"]
        steps = [
            (
                "label",
                lambda key: belt.call(
                    "orders.create_return_label", {"order_id": order_id, "key": key}
                ),
                lambda key, done: belt.call(
                    "orders.void_return_label", {"label_id": done["label_id"], "key": key}
                ),
            ),
            (
                "credit",
                lambda key: belt.call(
                    "orders.issue_credit",
                    {"order_id": order_id, "amount_cents": order["total_cents"], "key": key},
                ),
                lambda key, done: belt.call(
                    "orders.reverse_credit", {"credit_id": done["credit_id"], "key": key}
                ),
            ),
            (
                "record",
                lambda key: belt.call(
                    "policy.record_decision",
                    {"order_id": order_id, "decision": "refund in full", "key": key},
                ),
                lambda key, done: None,  # the last step: nothing after it to fail
            ),
        ]
        for name, action, undo in steps:
            try:
                saga.step(name, action, undo, payload={"order_id": order_id})
            except Exception as exc:  # any failure turns the saga back
                error = f"{type(exc).__name__}: {exc}"
                saga.compensate(reason=error, failed_step=name)
                return {
                    "saga_id": saga.saga_id,
                    "completed": saga.completed,
                    "compensated": saga.compensated,
                    "failed_step": name,
                    "error": error,
                }
        return {"saga_id": saga.saga_id, "completed": saga.completed}

    return session.activity(SagaSettled, work)


def unavailable(handoff: Handoff, degraded: dict[str, str]) -> str | None:
    """Why none of the specialist's tools can work (every server on its belt is degraded)."""
    servers = {name.split(".", 1)[0] for name in handoff.allowed_tools}
    if servers and servers <= set(degraded):
        return "; ".join(f"server {s} is degraded: {degraded[s]}" for s in sorted(servers))
    return None


def work(
    sub: Session,
    sub_id: str,
    handoff: Handoff,
    client: ModelClient,
    belt: Belt,
) -> Report:
    """One specialist on its own stream (`sub`), from its brief alone; always a typed report.
    On a stream that already holds its whole run, this reads the report back without acting."""
    budget = Budget(handoff.max_tokens)
    agent = loop.Agent(
        handoff.worker_id,
        client,
        contracts.toolbox(handoff, belt.tools()),
        SYSTEM,
        max_turns=handoff.max_steps,
        done=REPORT,
    )
    try:
        result = loop.run(agent, contracts.brief(handoff), sub, budget, task_id=sub_id)
    except ModelError as exc:
        if isinstance(exc, SpendRefused):  # replayed too: the type is registered
            return failed(handoff, "refused", 0, budget.spent, f"spending stopped: {exc}")
        return failed(handoff, "tool_error", 0, budget.spent, f"its model failed: {exc}")
    if result.status != "done" or result.report is None:
        reason: Reason = "ambiguous" if result.status == "inconclusive" else "budget"
        return failed(handoff, reason, result.turns, budget.spent, f"it stopped: {result.status}")
    raw = {**result.report, "steps": result.turns, "tokens": budget.spent}
    try:
        return contracts.parse_report(raw, handoff)
    except contracts.ContractError as exc:
        return failed(handoff, "ambiguous", result.turns, budget.spent, f"a broken report: {exc}")


def fly(
    session: Session,
    config: FlightConfig,
    clients: dict[str, ModelClient],
    root: Path,
    services: Services,
) -> TeamFinished:
    start(session, config)
    book = str(workspace.located(root, f"{config.workspace}.orders-book.sqlite3"))
    belt = Belt(services.mcp or (lambda: default_surface(book)))
    try:
        menu = session.activity(ToolsListed, belt.listing)
        belt.specs = menu.tools
        planned = handoffs(
            config.task,
            steps=min(config.max_turns, 8),
            tokens=max(200, config.allowance // 4),
            deadline=config.deadline,
        )
        # Route around servers that were down from the start: a specialist whose whole belt
        # is on them is not sent to fail; its sub-task goes straight to recovery.
        skipped = {
            sub_id: failed(handoff, "tool_error", 0, 0, why)
            for sub_id, handoff in planned
            if (why := unavailable(handoff, menu.degraded))
        }
        sent = [(sub_id, h) for sub_id, h in planned if sub_id not in skipped]
        spend = spend_breaker(config, session.run_id, belt)
        metered: dict[str, ModelClient] = {a: Metered(c, spend) for a, c in clients.items()}
        crew = Crew(
            run=lambda sub, sub_id, h: work(sub, sub_id, h, metered[h.worker_id], belt),
            cap=config.parallel,
            dispatch=services.dispatch,
            release=services.release,
        )
        for sub_id, handoff in sent:
            hand_off(session, sub_id, handoff, crew)
        reports = {**skipped, **fan_out(session, sent, crew)}
        replayed(session, (BreakerTripped, BreakerReset), list(belt.events))
        answers = {
            sub_id: settle(
                session, sub_id, handoff, reports[sub_id], crew, POLICY_RULES, config.park
            )
            for sub_id, handoff in planned
        }
        order = ORDER_ID.search(config.task)
        refunded = refund(session, belt, order.group(0)) if config.refund and order else None
        return compose(session, planned, answers, refunded)
    finally:
        belt.close()  # after the answer: stopping the servers takes a few hundred ms


POLICY_RULES = RecoveryPolicy(fallbacks={POLICY: POLICY_SNAPSHOT}, budget_retries=1)


def compose(
    session: Session,
    planned: list[tuple[str, Handoff]],
    answers: dict[str, Answer],
    refunded: SagaSettled | None = None,
) -> TeamFinished:
    """The answer, from verified findings and named fallbacks only; DEGRADED says what gave."""
    lines: list[str] = []
    sources: list[str] = []
    notes: list[str] = []
    answered = 0
    for sub_id, _ in planned:
        report, note, cached = answers[sub_id]
        if note:
            notes.append(note)
        if report.ok and report.findings:
            answered += 1
            lines += [f"- {f.claim} [{f.source_tool} {f.source_call_id}]" for f in report.findings]
            sources += [f.source_call_id for f in report.findings]
        elif cached is not None:
            answered += 1
            lines.append(f"- {cached.text} [{cached.source}]")
            sources.append(cached.source)
    if refunded is not None and refunded.failed_step is None:
        lines.append(f"- Refunded: {', '.join(refunded.completed)} done [{refunded.saga_id}]")
    elif refunded is not None:
        undone = ", ".join(refunded.compensated) or "nothing"
        notes.append(
            f"the refund did not go through ({refunded.failed_step} failed: {refunded.error}); "
            f"undone: {undone}"
        )
    degraded = "; ".join(notes) or None
    text = "\n".join(lines) or "No part of the ticket could be answered."
    if degraded:
        text = f"DEGRADED: {degraded}\n{text}"
    session.emit(session.new(AnswerComposed, text=text, degraded=degraded, sources=sources))
    if answered == 0:
        status, reason = (
            "failed",
            "no sub-task was answered" + (f": {degraded}" if degraded else ""),
        )
    elif degraded:
        status, reason = "done", f"answered, DEGRADED: {degraded}"
    else:
        status, reason = "done", "answered from verified findings"
    finished = session.new(
        TeamFinished,
        status=status,
        reason=reason,
        summary={"answered": answered, "sub_tasks": len(planned), "degraded": degraded},
    )
    session.emit(finished)
    return finished


TICKET = (
    "From grace@example.com: the desk lamp from order B2001 arrived with a cracked shade. "
    "Can I get my money back?"
)


def report_of(worker: str, findings: list[tuple[str, str, str]], **extra: Any) -> Any:
    return call(
        "done",
        60,
        worker_id=worker,
        status="ok",
        findings=[{"claim": c, "source_call_id": i, "source_tool": t} for c, i, t in findings],
        **extra,
    )


SCRIPTS = {
    ORDERS: [
        call("orders.lookup_order", 90, order_id="B2001"),
        report_of(
            ORDERS,
            [
                (
                    "Order B2001 was delivered on 2025-04-18: one desk lamp, 3900 cents.",
                    "orders-worker-1-1",
                    "orders.lookup_order",
                ),
                (
                    "The order notes the lamp arrived with a cracked shade.",
                    "orders-worker-1-1",
                    "orders.lookup_order",
                ),
            ],
        ),
    ],
    KB: [
        call("kb.search", 80, query="damaged item refund"),
        report_of(
            KB,
            [
                (
                    "KB-104 (Damaged or broken items): report damage within 14 days of delivery "
                    "with a photo.",
                    "kb-worker-1-1",
                    "kb.search",
                ),
                (
                    "KB-999 says damaged lamps are replaced the same day.",  # made up: dropped
                    "kb-worker-1-1",
                    "kb.search",
                ),
            ],
        ),
    ],
    POLICY: [
        call("policy.check_refund_policy", 90, order_id="B2001", amount_cents=3900),
        call("policy.policy_for", 70, topic="damaged items"),
        call(
            "done",
            50,
            worker_id=POLICY,
            status="failed",
            reason="tool_error",
            degraded="the policy service refused every call",
        ),
    ],
}

TRIAGE = Scenario(
    name="broken-policy",
    description="Three specialists at once; the policy server fails every call, so the answer "
    "rests on a cached policy and says DEGRADED; one made-up finding is dropped.",
    template="parse-empty",
    task=TICKET,
    scripts=SCRIPTS,
)

REFUND_SAGA = Scenario(
    name="refund-saga",
    description="As broken-policy, then the refund as a saga: label and credit go through, "
    "recording the decision at policy fails, so the credit and the label are undone, in "
    "reverse, once each.",
    template="parse-empty",
    task=TICKET,
    scripts=SCRIPTS,
    settings={"refund": True},
)

RUNAWAY_SPEND = Scenario(
    name="runaway-spend",
    description="The knowledge-base specialist keeps searching with long, expensive answers: "
    "the run's spend breaker trips, its next call is refused, and the sub-task is escalated.",
    template="parse-empty",
    task=TICKET,
    scripts={
        **SCRIPTS,
        KB: [call("kb.search", 1200, query=f"damaged item refund, try {n}") for n in range(6)]
        + [SCRIPTS[KB][-1]],
    },
    settings={"spend_rate": 150.0, "allowance": 40_000},
)

SUPPORT_TRIAGE = Team(
    name="support-triage",
    agents=(ORDERS, KB, POLICY),
    scenarios={s.name: s for s in (TRIAGE, REFUND_SAGA, RUNAWAY_SPEND)},
    fly=fly,
)
