"""The support-triage flight: list the tools, plan, fan out, settle, refund, answer."""

from __future__ import annotations

from pathlib import Path

from runtime import workspace
from runtime.coordination.carried import carry
from runtime.coordination.mutation import Evidence
from runtime.events import BreakerReset, BreakerTripped, TeamFinished, TeamStarted, ToolsListed
from runtime.fanout.contracts import Handoff, Report
from runtime.fanout.engine import Crew, failed, fan_out, hand_off, replayed, worker_stream
from runtime.fanout.settle import Answer, settle
from runtime.model import ModelClient
from runtime.session import Session
from runtime.team import FlightConfig, Services, start
from runtime.turn_boundary import boundary
from teams.triage import eligible
from teams.triage.answer import compose
from teams.triage.belt import Belt
from teams.triage.onward import Onward
from teams.triage.plan import (
    BELTS,
    POLICY,
    POLICY_RULES,
    customer_of,
    handoffs,
    order_of,
    orders_of,
    unavailable,
)
from teams.triage.saga import refund
from teams.triage.services import TriageServices
from teams.triage.settings import TriageSettings
from teams.triage.specialist import work
from teams.triage.spend import Metered, spend_breaker
from teams.triage.surface import default_surface


def delegated(
    session: Session,
    settings: TriageSettings,
    planned: list[tuple[str, Handoff]],
    reports: dict[str, Report],
    crew: Crew,
    config: FlightConfig,
    belt: Belt,
) -> tuple[list[tuple[str, Handoff]], dict[str, Answer]]:
    """Settle the round's reports, deciding first which parts each specialist may hand on
    (teams/triage/onward.py); the parts allowed are handed off, run and settled as a round of
    their own, and so on until a round hands nothing on (the depth limit bounds the rounds)."""
    chains = Onward(session, BELTS, settings.delegation_depth, order_of(config.task))
    everything = list(planned)
    answers: dict[str, Answer] = {}
    todo = planned
    while todo:
        parts = [part for sub_id, handoff in todo for part in chains.decide(sub_id, handoff)]
        for sub_id, handoff in todo:
            report, note, cached = settle(
                session, sub_id, handoff, reports[sub_id], crew, POLICY_RULES, config.park
            )
            answers[sub_id] = (report, chains.noted(sub_id, note), cached)
        if not parts:
            break
        boundary(session)
        for sub_id, handoff in parts:
            hand_off(session, sub_id, handoff, crew)
        boundary(session)
        seen = len(belt.events)
        reports = fan_out(session, parts, crew)
        replayed(session, (BreakerTripped, BreakerReset), belt.events[seen:])
        everything += parts
        todo = parts
    return everything, answers


def fly(
    session: Session,
    config: FlightConfig,
    clients: dict[str, ModelClient],
    root: Path,
    services: Services,
) -> TeamFinished:
    settings = TriageSettings.of(config)
    start(session, config)
    # The day the ticket came, which the refund's return window is judged on: the setting's,
    # or the day the run started by its journal (a resume or a replay reads the same day).
    begun = next(e for e in reversed(session.emitted) if isinstance(e, TeamStarted))
    received_on = settings.received_on or eligible.day_of(begun.t)
    intent = carry(session, config.task)
    book = workspace.located(root, f"{config.workspace}.orders-book.sqlite3")
    belt = Belt(services.of(TriageServices).mcp or (lambda: default_surface(book)), session.run_id)
    try:
        menu = session.activity(ToolsListed, belt.listing)
        belt.specs = menu.tools
        planned = handoffs(
            config.task,
            steps=min(config.max_turns, 8),
            tokens=max(200, config.allowance // 4),
            deadline=settings.deadline,
            delegate=settings.delegate,
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
            cap=settings.parallel,
            dispatch=services.dispatch,
            release=services.release,
            outages=services.outages,
        )
        # The flight's boundaries, where an operator's stop is honoured (and resumed past):
        # before any specialist is sent, on every look at their reports (a step waiting on
        # them elsewhere comes back here), and before money moves.
        boundary(session)
        for sub_id, handoff in sent:
            hand_off(session, sub_id, handoff, crew)
        boundary(session)
        reports = {**skipped, **fan_out(session, sent, crew)}
        replayed(session, (BreakerTripped, BreakerReset), list(belt.events))
        if settings.delegate:
            planned, answers = delegated(session, settings, planned, reports, crew, config, belt)
        else:
            answers = {
                sub_id: settle(
                    session, sub_id, handoff, reports[sub_id], crew, POLICY_RULES, config.park
                )
                for sub_id, handoff in planned
            }
        orders = orders_of(config.task)
        boundary(session)
        refunded = (
            refund(
                session,
                belt,
                orders,
                intent,
                customer_of(config.task),
                received_on,
                verdict(session, orders, planned, answers),
            )
            if settings.refund and orders
            else None
        )
        return compose(session, planned, answers, refunded)
    finally:
        belt.close()  # after the answer: stopping the servers takes a few hundred ms


def verdict(
    session: Session,
    orders: list[str],
    planned: list[tuple[str, Handoff]],
    answers: dict[str, Answer],
) -> Evidence:
    """The policy specialist's verdict on the refund, from its settled part and its own tool
    results (its stream, and a retry's, whose calls its findings may cite)."""
    part = next(((sub_id, h) for sub_id, h in planned if h.worker_id == POLICY), None)
    if part is None:
        return eligible.policy_verdict(" or ".join(orders), None, None, [])
    sub_id, handoff = part
    events = [
        record.event
        for run_as in (sub_id, f"{sub_id}r", f"{sub_id}p")  # settle's retry and a person's
        for record in session.source.read(worker_stream(session.run_id, run_as, POLICY))
    ]
    return eligible.policy_verdict(" or ".join(orders), handoff, answers.get(sub_id), events)
