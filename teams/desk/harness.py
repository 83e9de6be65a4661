"""The support desk's flight: open the ticket's order, run both agents, then check the world.

After the agents finish, the harness waits for refunds in flight, reconciles the claims on the
order's status (a rule decides, or the conflict is parked for a person: HUMAN_REQUIRED), and
checks the order, the ledger and the provider itself before it gives a verdict.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from runtime import loop, streams
from runtime.budget import Budget
from runtime.coordination.claims import Claims, Rules
from runtime.coordination.effect_records import outcome_of
from runtime.coordination.effects import Ledger
from runtime.coordination.facts import Facts
from runtime.coordination.gates import Intents
from runtime.coordination.keys import effect_key, request_hash
from runtime.coordination.livelock import Watch
from runtime.coordination.mutation import Evidence, GateRefused, Mutation, MutationGate
from runtime.events import (
    ClaimAsserted,
    DeskChecked,
    EffectFailed,
    EffectSucceeded,
    Event,
    FactReconciled,
    LivelockDetected,
    MutationRefused,
    OrderPrepared,
    TaskEscalated,
    TeamFinished,
    ToolDispatched,
    ToolReturned,
)
from runtime.fenced import Fenced
from runtime.flight import FlightError
from runtime.journal import Guard, Journal, WrongExpectedVersion
from runtime.model import ModelClient, ModelError
from runtime.session import Session
from runtime.status import Verdict
from runtime.team import FlightConfig, Services, start
from runtime.tools import Toolbox, ToolFailure
from teams.desk import vote
from teams.desk.local import local_desk
from teams.desk.services import Desk, DeskServices, OrderMissing, subject
from teams.desk.settings import DeskSettings, SupportDeskSettings
from teams.desk.tools import (
    AUTHORITY,
    ORDER_AGENT,
    RECONCILER,
    SUPPORT_AGENT,
    DeskTools,
    gate_log,
)

ORDER_SYSTEM = (
    "You are the order agent of a shop's support desk. You keep one order's status true to "
    "what the warehouse reports. Read the order, set its status with set_order_status when the "
    "warehouse feed says it changed (pass the version you decided from as based_on), or leave "
    "it. If the order moved under you, read it again and decide again. Then call done."
)
SUPPORT_SYSTEM = (
    "You are the support agent of a shop's support desk. You answer one customer's ticket "
    "about one order: read the order, refund with issue_refund when the ticket warrants it "
    "(a retry of the same refund is safe: it is the same refund), and set the order's status "
    "with set_order_status (pass the version you decided from as based_on). If the order moved "
    "under you, read it again and decide again, or stand by your decision: a person will "
    "settle it. Then call done."
)

REPORT = {
    "outcome": {
        "type": "string",
        "enum": ["updated", "unchanged", "refunded", "disputed", "refused"],
        "description": "what became of your part",
    },
    "summary": {"type": "string", "description": "what you did and why"},
}


class EffectCheck(BaseModel):
    """What became of one refund the agents asked for, as the harness found it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    status: Literal["succeeded", "failed", "in flight"]


def open_order(session: Session, desk: Desk, settings: DeskSettings, task: str) -> dict[str, Any]:
    order_id = settings.order_id or "o-" + session.run_id.removeprefix("r-")
    order = desk.orders.open(order_id, settings.amount_cents, settings.opening_status, "desk")
    intents = Intents(session.journal)
    intent_id = f"ticket-{order_id}"
    try:
        intent = intents.current(intent_id)
    except KeyError:
        try:
            # Version 1 or nothing: a run that finds the ticket declared meanwhile (another
            # run of this order) takes theirs as it took the order, and supersedes nothing.
            intent = intents.declare(intent_id, task, by="desk", based_on=0)
        except WrongExpectedVersion:
            intent = intents.current(intent_id)
    return {
        "order_id": order.order_id,
        "status": order.status,
        "amount_cents": order.amount_cents,
        "order_version": order.version,
        "intent_id": intent.intent_id,
        "intent_version": intent.version,
    }


def refund_keys(session: Session, order_id: str) -> list[str]:
    """The effect keys of every refund this run's agents asked for, recomputed from the record:
    keys are derived, so the harness needs nothing from the agents to find them."""
    keys: list[str] = []
    for e in session.emitted:
        if isinstance(e, ToolDispatched) and e.tool == "issue_refund" and e.args:
            amount = e.args.get("amount_cents")
            key = effect_key(
                session.run_id, e.task_id or "", subject(order_id), {"amount_cents": amount}
            )
            if key not in keys:
                keys.append(key)
    return keys


def check_desk(
    session: Session, desk: Desk, settings: DeskSettings, order_id: str
) -> dict[str, Any]:
    ledger = Ledger(desk.outcomes)
    keys = refund_keys(session, order_id)
    effects: list[EffectCheck] = []
    problems: list[str] = []
    for key in keys:
        recorded = ledger.wait(key, settings.settle_seconds)
        if not recorded:
            continue  # refused before it started (bad amount, stale intent)
        outcome = outcome_of(recorded)  # last: after the start and any takings over
        effect = EffectCheck(
            key=key,
            status="succeeded"
            if isinstance(outcome, EffectSucceeded)
            else "failed"
            if isinstance(outcome, EffectFailed)
            else "in flight",
        )
        effects.append(effect)
        if effect.status == "in flight":
            problems.append(
                f"refund {key} is still in flight after {settings.settle_seconds:g} s: the "
                "effect reconciler settles it once the provider can say what happened"
            )
    ours = {e.key for e in effects}
    provider = [r for r in desk.payments.refunds(order_id)]
    done_by_us = [r for r in provider if r["key"] in ours]
    succeeded = {e.key for e in effects if e.status == "succeeded"}
    if {r["key"] for r in done_by_us} != succeeded and not problems:
        problems.append(
            "the provider's refunds and the ledger disagree: "
            f"provider {sorted(r['key'] for r in done_by_us)}, ledger {sorted(succeeded)}"
        )
    order = desk.orders.get(order_id)
    refunded = sum(r["amount_cents"] for r in provider)
    if refunded > order.amount_cents:
        problems.append(f"refunded {refunded} cents on an order of {order.amount_cents}")
    calls = sum(
        1 for e in session.emitted if isinstance(e, ToolDispatched) and e.tool == "issue_refund"
    )
    return {
        "order": order.public(),
        "refund_calls": calls,
        "effects": [e.model_dump() for e in effects],
        "provider_refunds": provider,
        "refunded_cents": refunded,
        "problems": problems,
    }


def reconcile_status(
    session: Session, desk: Desk, settings: DeskSettings, prepared: OrderPrepared
) -> dict[str, Any]:
    """Reconcile the claims on the order's status; commit a rule's winner through the mutation
    gate (the ticket's intent, the driver's lease, the reconciler's authority, the claim it
    rests on, the derived key), then by compare-and-swap. A commit the gate refuses, or that
    the order moved under, is parked for a person instead."""
    order_id = prepared.order_id
    about = subject(order_id)
    claims = Claims(session.journal)
    current = desk.orders.get(order_id)
    # Where a person's ruling goes, and the intent it is made under (the ruling's gate checks
    # it is still the current one: services/review.py).
    commit = {
        "service": "orders",
        "key": order_id,
        "version": current.version,
        "intent": {"id": prepared.intent_id, "version": prepared.intent_version},
    }
    outcome = claims.reconcile(
        about, "status", Rules(settings.authority), session.run_id, commit=commit
    )
    version = current.version
    if outcome.status == "decided" and outcome.value != current.status:
        value = str(outcome.value)
        decided = list(outcome.decided)
        refused, guards = gate_commit(session, prepared, about, value, current.version, decided)
        why: str | None = None
        if refused is None:
            try:
                version = desk.orders.set_status(
                    order_id, value, current.version, RECONCILER, session.run_id, guards
                ).version
            except ToolFailure:
                why = "the order moved while the rule's winner was committed"
            except WrongExpectedVersion:
                # The ticket's intent was superseded after the gate's check (its guard): the
                # gate is asked again, and refuses it as it would have a moment later.
                refused, _ = gate_commit(session, prepared, about, value, current.version, decided)
                why = "the ticket's intent moved while the rule's winner was committed"
        if refused is not None:
            why = f"the gate refused the reconciler's commit ({refused.check}): {refused.reason}"
        if why is not None:
            # What was decided does not apply as is: a person decides, between the claims
            # still live, or else those the rule decided between (in hand: the subject's
            # whole claims stream, every run's, was read for them).
            live = claims.live(about, "status") or decided
            parked = claims.park(about, "status", live[-2:], session.run_id, commit)
            return {
                "subject": about,
                "predicate": "status",
                "status": "parked",
                "rule": why,
                "conflict_id": parked.conflict_id,
                "fact_version": desk.orders.get(order_id).version,
            }
    return {
        "subject": about,
        "predicate": "status",
        "status": outcome.status,
        "value": outcome.value,
        "rule": outcome.rule,
        "conflict_id": outcome.conflict_id,
        "fact_version": version,
    }


def gate_commit(
    session: Session,
    prepared: OrderPrepared,
    about: str,
    value: str,
    based_on: int,
    decided: list[ClaimAsserted],
) -> tuple[MutationRefused | None, tuple[Guard, ...]]:
    """The gate's refusal of the reconciler's commit (journalled in the run's gate log, as the
    tools' are), or None and the guards its write carries: it may go ahead. Its evidence is
    the claim of the value among those the rule `decided` between (the winner), not among
    every claim ever made about the order."""
    journal = session.journal
    payload = {"status": value, "based_on": based_on}
    key = effect_key(session.run_id, "reconcile", about, payload)
    claimed = [c for c in decided if c.predicate == "status" and c.value == value]
    mutation = Mutation(
        what=f"the reconciler setting order {prepared.order_id} to {value}",
        actor=RECONCILER,
        capability="reconcile",
        intent=(prepared.intent_id, prepared.intent_version),
        key=key,
        expected_key=key,
        request=request_hash("reconcile", about, payload),
        lease=journal.fence if isinstance(journal, Fenced) else None,
        evidence=(
            Evidence(
                f"a claim on {about}'s status of {value!r}",
                bool(claimed),
                f"no agent claimed {value!r} for {about}'s status",
            ),
        ),
        run_id=session.run_id,
    )
    try:
        return None, MutationGate(journal, AUTHORITY, gate_log(session.run_id)).check(mutation)
    except GateRefused as exc:
        return exc.refused, ()


def snapshot(prepared: OrderPrepared) -> str:
    return (
        f"order {prepared.order_id} at version {prepared.order_version}: "
        f"status {prepared.status!r}, paid {prepared.amount_cents} cents"
    )


def desk_of(journal: Journal, root: Path, settings: DeskSettings, services: Services) -> Desk:
    """The desk's world on this host: the one it provides (the workers': the database), or
    the command line's (orders in the journal, refunds in a file under `root`)."""
    make = services.of(DeskServices).desk or (
        lambda journal, where, s: local_desk(journal, where, s.provider_latency)
    )
    return make(journal, root, settings)


def ready(
    journal: Journal, run_id: str, config: FlightConfig, root: Path, services: Services
) -> str | None:
    """Why the run cannot go on live here (Team.ready): its order, read as its tools and its
    checks read it, is not whole in this journal or on this host. A run exported from a store
    carries its own writes to the order, not the order's opening (no run's): its fork was
    written, then its desk stopped at the first read of the order, and nothing could drive
    it. An order the run has not opened yet is no reason: its flight opens it."""
    settings = SupportDeskSettings.of(config).desk
    records = journal.read(streams.journal(run_id))
    prepared = next((r.event for r in records if isinstance(r.event, OrderPrepared)), None)
    order_id = (
        prepared.order_id
        if prepared is not None
        else settings.order_id or "o-" + run_id.removeprefix("r-")
    )
    try:
        desk_of(journal, root, settings, services).orders.get(order_id)
    except FlightError as exc:  # changes to the order, and not its opening
        return str(exc)
    except OrderMissing:
        if prepared is not None:
            return (
                f"order {order_id}: the run opened it and works on it, and there is no such "
                "order here, so its desk cannot go on here"
            )
    return None


def fly(
    session: Session,
    config: FlightConfig,
    clients: dict[str, ModelClient],
    root: Path,
    services: Services,
) -> TeamFinished:
    start(session, config)
    settings = SupportDeskSettings.of(config).desk
    desk = desk_of(session.journal, root, settings, services)
    prepared = session.activity(
        OrderPrepared, lambda: open_order(session, desk, settings, config.task)
    )
    budget = Budget(config.allowance)
    seen = snapshot(prepared)
    work = [
        (
            ORDER_AGENT,
            ORDER_SYSTEM,
            "T1",
            f"Warehouse feed: {settings.feed}\nWhen the feed came in: {seen}.",
        ),
        (
            SUPPORT_AGENT,
            SUPPORT_SYSTEM,
            "T2",
            f"Customer ticket: {config.task}\nWhen the ticket came in: {seen}.",
        ),
    ]
    results: dict[str, loop.AgentResult] = {}
    team = SupportDeskSettings.of(config)
    watch = Watch(session)
    for round_no in range(1, team.rounds + 1):
        wrote = status_writes(session)
        for name, system, task_id, task in work:
            if round_no > 1:
                task = f"{task}\n{AGAIN.format(n=round_no)}"
            ended = turn(
                session,
                config,
                clients,
                budget,
                desk,
                settings,
                prepared,
                results,
                name,
                system,
                task_id,
                task,
                votes=team.votes if round_no == 1 else 1,
            )
            if ended is not None:
                return ended
            # A boundary of the loop: the order's status flipping back and forth between the
            # agents (each write a proper compare-and-swap) is no progress; stop there.
            stopped = watch.check(status_changes(session, prepared.order_id))
            if stopped is not None:
                return livelocked(session, budget, stopped)
        if status_writes(session) == wrote:
            break  # a round that changed nothing: the agents have settled
    reconciled = session.activity(
        FactReconciled, lambda: reconcile_status(session, desk, settings, prepared)
    )
    checked = session.activity(
        DeskChecked, lambda: check_desk(session, desk, settings, prepared.order_id)
    )
    status, reason = verdict(results, reconciled, checked)
    finished = session.new(
        TeamFinished,
        status=status,
        reason=reason,
        summary={
            "order": checked.order,
            "refund_calls": checked.refund_calls,
            "effects": len(checked.effects),
            "provider_refunds": len(checked.provider_refunds),
            "spent": budget.spent,
            "allowance": budget.allowance,
        },
    )
    session.emit(finished)
    return finished


AGAIN = (
    "Round {n}: the other agent may have changed the order since your last turn. Read it "
    "again and decide again from its current version (or leave it), then call done."
)


def turn(
    session: Session,
    config: FlightConfig,
    clients: dict[str, ModelClient],
    budget: Budget,
    desk: Desk,
    settings: DeskSettings,
    prepared: OrderPrepared,
    results: dict[str, loop.AgentResult],
    name: str,
    system: str,
    task_id: str,
    task: str,
    votes: int,
) -> TeamFinished | None:
    """One agent's turn, its result in `results`; the run's end when its model failed or its
    refund vote found no majority, else None."""
    tools = DeskTools(session, desk, settings, prepared, name, task_id)
    toolbox = tools.tools()
    try:
        if name == SUPPORT_AGENT and votes > 1:
            # The refund is a critical decision: the vote takes it, then the agent does
            # the rest of its part without the refund tool.
            decided = vote.take(session, clients[name], tools, config, budget, task, votes)
            if decided.winner == vote.NO_MAJORITY:
                return no_majority(session, budget, votes)
            done = (
                None
                if decided.amount_cents is None
                else vote.refund(session, tools, config, decided)
            )
            task = f"{task}\n{vote.told(decided, votes, done)}"
            toolbox = [t for t in toolbox if t.name != "issue_refund"]
        agent = loop.Agent(
            name,
            clients[name],
            Toolbox(toolbox),
            system,
            max_turns=config.max_turns,
            retries=config.retries,
            window=config.window,
            done=loop.done_tool(REPORT, ["outcome", "summary"]),
        )
        results[name] = loop.run(agent, task, session, budget, task_id=task_id)
    except ModelError as exc:
        reason = f"the {name}'s model failed: {exc}"
        escalated = session.new(TeamFinished, status="escalated", reason=reason)
        session.emit(
            session.new(TaskEscalated, task_id=task_id, reason=reason, last_error=str(exc)),
            escalated,
        )
        return escalated
    return None


def status_writes(session: Session) -> int:
    """The order's status changes this run's agents made (from the run's own events, so a
    replay counts the same)."""
    return sum(
        1
        for e in session.emitted
        if isinstance(e, ToolReturned) and e.tool == "set_order_status" and e.error is None
    )


def status_changes(session: Session, order_id: str) -> list[Event]:
    """The order's fact changes, for the livelock watch (live only: a replay reads the watch's
    recorded decision back)."""
    if not session.live:
        return []
    return [r.event for r in session.journal.read(Facts.stream(subject(order_id)))]


def livelocked(session: Session, budget: Budget, stopped: LivelockDetected) -> TeamFinished:
    """The loop stopped by the livelock watch: a person decides."""
    return escalated(session, budget, f"LIVELOCK: {stopped.reason}")


def no_majority(session: Session, budget: Budget, votes: int) -> TeamFinished:
    """A refund vote without a majority refunds nothing: a person decides."""
    reason = f"the {votes} samples of the refund decision have no majority: a person decides"
    return escalated(session, budget, reason, task_id=vote.TASK)


def escalated(
    session: Session, budget: Budget, reason: str, task_id: str | None = None
) -> TeamFinished:
    """The run ends escalated: the task goes to a person, and the run says why."""
    finished = session.new(
        TeamFinished,
        status="escalated",
        reason=reason,
        summary={"spent": budget.spent, "allowance": budget.allowance},
    )
    where = {} if task_id is None else {"task_id": task_id}
    session.emit(session.new(TaskEscalated, reason=reason, **where), finished)
    return finished


def verdict(
    results: dict[str, loop.AgentResult], reconciled: FactReconciled, checked: DeskChecked
) -> tuple[Verdict, str]:
    stopped = [(n, r.status) for n, r in results.items() if r.status != "done"]
    if stopped:
        name, why = stopped[0]
        return loop.ending(why), f"the {name} stopped: {why}"
    if checked.problems:
        # Typed, not read off the problems' wording: a refund still in flight is for the
        # reconciler and a person (escalated); any other problem is a failure.
        checks = [EffectCheck.model_validate(e) for e in checked.effects]
        in_flight = any(c.status == "in flight" for c in checks)
        return ("escalated" if in_flight else "failed"), "; ".join(checked.problems)
    if reconciled.status == "parked":
        return "escalated", (
            f"HUMAN_REQUIRED: the agents disagree on {reconciled.subject}'s "
            f"{reconciled.predicate} and no rule decides; conflict {reconciled.conflict_id} "
            "waits for a person"
        )
    effects = len(checked.effects)
    return "done", (
        f"order {checked.order['order_id']} is {checked.order['status']!r} at version "
        f"{checked.order['version']}; {checked.refund_calls} refund calls, {effects} "
        f"effect{'s' if effects != 1 else ''}, {len(checked.provider_refunds)} refund"
        f"{'s' if len(checked.provider_refunds) != 1 else ''} at the provider"
        + (f"; {reconciled.rule}" if reconciled.status == "decided" else "")
    )
