"""The support desk: an order agent and a support agent working on one order.

The order agent keeps the order's status true to the warehouse feed; the support agent answers
the customer's ticket, and may refund through a slow payment provider. Both start from the same
snapshot of the order, taken when the ticket arrived, so they can disagree. What keeps them
honest is in the tools, not the prompts:

    set_order_status   a compare-and-swap on the version the agent decided from, recorded as a
                       claim first; a lost race comes back as OrderMoved with the order as it is
                       now, and after `attempts` losses the agent may not try again
    issue_refund       through the effect ledger, keyed on (run, task, order, amount): a retry
                       after a timeout is the same refund, done once
    both               refused once a person has superseded the ticket's intent

Tools act on the ticket's order only: an agent cannot name another order. After the agents
finish, the harness waits for refunds in flight, reconciles the claims on the order's status
(a rule decides, or the conflict is parked for a person: HUMAN_REQUIRED), and checks the order,
the ledger and the provider itself before it gives a verdict.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from runtime import errors, loop
from runtime.budget import Budget
from runtime.coordination.claims import Claims, Rules
from runtime.coordination.effects import Ledger, effect_key
from runtime.coordination.gates import Intents
from runtime.events import (
    DeskChecked,
    EffectFailed,
    EffectSucceeded,
    FactReconciled,
    OrderPrepared,
    TaskEscalated,
    TeamFinished,
    ToolDispatched,
    ToolReturned,
)
from runtime.model import ModelClient, ModelError, call
from runtime.session import Session
from runtime.teams.base import DeskSettings, FlightConfig, Scenario, Services, Team, Verdict, start
from runtime.teams.desk_services import (
    STATUSES,
    Desk,
    OrderMoved,
    RefundRefused,
    local_desk,
    subject,
)
from runtime.tools import Tool, Toolbox, ToolFailure, schema

ORDER_AGENT, SUPPORT_AGENT = "order-agent", "support-agent"

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


@errors.replayable
class Contended(ToolFailure):
    """The agent lost every compare-and-swap it may try: a person settles it now."""


# --- the agents' tools -----------------------------------------------------------------------


class DeskTools:
    """The tools of one agent on one task, scoped to the run's order."""

    def __init__(
        self,
        session: Session,
        desk: Desk,
        settings: DeskSettings,
        prepared: OrderPrepared,
        agent: str,
        task_id: str,
    ) -> None:
        self.session = session
        self.desk = desk
        self.settings = settings
        self.order_id = prepared.order_id
        self.intent = (prepared.intent_id, prepared.intent_version)
        self.agent = agent
        self.task_id = task_id
        self.claims = Claims(session.journal)
        self.ledger = Ledger(session.journal, desk.outcomes)

    def read_order(self) -> dict[str, Any]:
        order = self.desk.orders.get(self.order_id)
        refunds = self.desk.payments.refunds(self.order_id)
        return {
            **order.public(),
            "refunded_cents": sum(r["amount_cents"] for r in refunds),
            "refunds": len(refunds),
        }

    def check_intent(self, what: str) -> None:
        Intents(self.session.journal).check(
            self.intent[0],
            self.intent[1],
            what,
            f"stale-{self.session.run_id}",
            run_id=self.session.run_id,
        )

    def losses(self) -> int:
        """Compare-and-swaps this agent lost in this run (from the record, so a resumed run
        counts what happened before the crash too)."""
        return sum(
            1
            for e in self.session.emitted
            if isinstance(e, ToolReturned)
            and e.agent == self.agent
            and e.tool == "set_order_status"
            and e.error is not None
            and errors.recorded_as(e.error, OrderMoved)
        )

    def set_order_status(self, status: str, based_on: int, evidence: str) -> dict[str, Any]:
        self.check_intent(f"{self.agent} setting order {self.order_id} to {status}")
        lost = self.losses()
        if lost >= self.settings.attempts:
            raise Contended(
                f"you lost {lost} compare-and-swaps on order {self.order_id}: the disagreement "
                "goes to a person; call done"
            )
        about = subject(self.order_id)
        mine = [
            c
            for c in self.claims.live(about, "status")
            if c.by == self.agent and c.run_id == self.session.run_id
        ]
        claim = self.claims.claim(
            about,
            "status",
            status,
            based_on,
            self.agent,
            "model",
            {"text": evidence, "task": self.task_id},
            supersedes=mine[-1].claim_id if mine else None,
            run_id=self.session.run_id,
        )
        current = self.desk.orders.get(self.order_id)
        if current.status == status and current.version == based_on:
            return {**current.public(), "changed": False, "claim_id": claim.claim_id}
        try:
            order = self.desk.orders.set_status(
                self.order_id, status, based_on, self.agent, self.session.run_id
            )
        except OrderMoved as exc:
            if lost + 1 < self.settings.attempts:
                raise
            note = "That was your last attempt: stand by your claim or agree, and call done"
            raise OrderMoved(based_on, exc.current, note) from None
        return {**order.public(), "changed": True, "claim_id": claim.claim_id}

    def issue_refund(self, amount_cents: int, reason: str) -> dict[str, Any]:
        try:
            self.check_intent(f"{self.agent} refunding {amount_cents} cents on {self.order_id}")
            target = subject(self.order_id)
            payload = {"amount_cents": amount_cents}
            # The key is the decision's, never the model's: the same refund decided again in
            # this task is the same key, whatever reason the agent gives this time.
            key = effect_key(self.session.run_id, self.task_id, target, payload)
            if not self.ledger.recorded(key):
                order = self.desk.orders.get(self.order_id)
                refunded = sum(r["amount_cents"] for r in self.desk.payments.refunds(self.order_id))
                if refunded + amount_cents > order.amount_cents:
                    raise RefundRefused(
                        f"order {self.order_id} was paid {order.amount_cents} cents and "
                        f"{refunded} are refunded already: {amount_cents} more is too much"
                    )
            receipt = self.ledger.perform(
                key,
                "refund",
                target,
                payload,
                lambda k: self.desk.payments.refund(k, self.order_id, amount_cents),
                run_id=self.session.run_id,
                intent=self.intent,
            )
            return {"refund": receipt, "idempotency_key": key}
        finally:
            self.desk.release()  # this runs in the tool's own thread: give back its resources

    def tools(self) -> list[Tool]:
        status = {"type": "string", "enum": list(STATUSES)}
        tools = [
            Tool(
                "read_order",
                "The order this ticket is about: status, amount, version, refunds so far.",
                schema({}),
                self.read_order,
                timeout=None,
            ),
            Tool(
                "set_order_status",
                "Set the order's status, as decided from version `based_on` of the order. "
                "Refused (OrderMoved) if the order changed since: read it again and decide again.",
                schema(
                    {
                        "status": status,
                        "based_on": {"type": "integer", "minimum": 0},
                        "evidence": {"type": "string", "maxLength": 1000},
                    },
                    ["status", "based_on", "evidence"],
                ),
                self.set_order_status,
                timeout=None,
            ),
        ]
        if self.agent == SUPPORT_AGENT:
            tools.append(
                Tool(
                    "issue_refund",
                    "Refund the customer through the payment provider. The provider is slow; "
                    "repeating the same refund is safe (it is done once).",
                    schema(
                        {
                            "amount_cents": {"type": "integer", "minimum": 1},
                            "reason": {"type": "string", "maxLength": 1000},
                        },
                        ["amount_cents", "reason"],
                    ),
                    self.issue_refund,
                    timeout=self.settings.tool_timeout,
                    retry_safe=False,
                )
            )
        return tools


# --- the harness -------------------------------------------------------------------------------


def open_order(session: Session, desk: Desk, settings: DeskSettings, task: str) -> dict[str, Any]:
    order_id = settings.order_id or "o-" + session.run_id.removeprefix("r-")
    order = desk.orders.open(order_id, settings.amount_cents, settings.opening_status, "desk")
    intents = Intents(session.journal)
    intent_id = f"ticket-{order_id}"
    try:
        intent = intents.current(intent_id)
    except KeyError:
        intent = intents.declare(intent_id, task, by="desk")
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
    effects: list[dict[str, Any]] = []
    problems: list[str] = []
    for key in keys:
        recorded = ledger.wait(key, settings.settle_seconds)
        if not recorded:
            continue  # refused before it started (bad amount, stale intent)
        outcome = recorded[1] if len(recorded) > 1 else None
        status = (
            "succeeded"
            if isinstance(outcome, EffectSucceeded)
            else "failed"
            if isinstance(outcome, EffectFailed)
            else "in flight"
        )
        effects.append({"key": key, "status": status})
        if status == "in flight":
            problems.append(
                f"refund {key} is still in flight after {settings.settle_seconds:g} s: the "
                "effect reconciler settles it once the provider can say what happened"
            )
    ours = {e["key"] for e in effects}
    provider = [r for r in desk.payments.refunds(order_id)]
    done_by_us = [r for r in provider if r["key"] in ours]
    succeeded = {e["key"] for e in effects if e["status"] == "succeeded"}
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
        "effects": effects,
        "provider_refunds": provider,
        "refunded_cents": refunded,
        "problems": problems,
    }


def reconcile_status(
    session: Session, desk: Desk, settings: DeskSettings, order_id: str
) -> dict[str, Any]:
    """Reconcile the claims on the order's status; commit a rule's winner by compare-and-swap."""
    about = subject(order_id)
    claims = Claims(session.journal)
    current = desk.orders.get(order_id)
    commit = {"service": "orders", "key": order_id, "version": current.version}
    outcome = claims.reconcile(
        about, "status", Rules(settings.authority), session.run_id, commit=commit
    )
    version = current.version
    if outcome.status == "decided" and outcome.value != current.status:
        try:
            version = desk.orders.set_status(
                order_id, str(outcome.value), current.version, "reconciler", session.run_id
            ).version
        except ToolFailure:
            # It moved while we decided: what was decided no longer applies as is.
            live = claims.live(about, "status") or claims.all(about)
            parked = claims.park(about, "status", live[-2:], session.run_id, commit)
            return {
                "subject": about,
                "predicate": "status",
                "status": "parked",
                "rule": "the order moved while the rule's winner was committed",
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


def snapshot(prepared: OrderPrepared) -> str:
    return (
        f"order {prepared.order_id} at version {prepared.order_version}: "
        f"status {prepared.status!r}, paid {prepared.amount_cents} cents"
    )


def fly(
    session: Session,
    config: FlightConfig,
    clients: dict[str, ModelClient],
    root: Path,
    services: Services,
) -> TeamFinished:
    start(session, config)
    settings = config.desk or DeskSettings()
    make = services.desk or (
        lambda journal, where, s: local_desk(journal, where, s.provider_latency)
    )
    desk = make(session.journal, root, settings)
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
    for name, system, task_id, task in work:
        agent = loop.Agent(
            name,
            clients[name],
            Toolbox(DeskTools(session, desk, settings, prepared, name, task_id).tools()),
            system,
            max_turns=config.max_turns,
            retries=config.retries,
            window=config.window,
            done=loop.done_tool(REPORT, ["outcome", "summary"]),
        )
        try:
            results[name] = loop.run(agent, task, session, budget, task_id=task_id)
        except ModelError as exc:
            reason = f"the {name}'s model failed: {exc}"
            escalated = session.new(TeamFinished, status="escalated", reason=reason)
            session.emit(
                session.new(TaskEscalated, task_id=task_id, reason=reason, last_error=str(exc)),
                escalated,
            )
            return escalated
    reconciled = session.activity(
        FactReconciled, lambda: reconcile_status(session, desk, settings, prepared.order_id)
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


def verdict(
    results: dict[str, loop.AgentResult], reconciled: FactReconciled, checked: DeskChecked
) -> tuple[Verdict, str]:
    stopped = [(n, r.status) for n, r in results.items() if r.status != "done"]
    if stopped:
        name, why = stopped[0]
        return why, f"the {name} stopped: {why}"
    if checked.problems:
        in_flight = any("in flight" in p for p in checked.problems)
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


# --- scenarios --------------------------------------------------------------------------------

DOUBLE_REFUND = Scenario(
    name="double-refund",
    description="The refund times out and the support agent retries it: one refund, one effect.",
    template="orders",
    task="My parcel arrived broken. Please refund me in full. (order delivered two days ago)",
    settings={
        "desk": {
            "opening_status": "delivered",
            "feed": "Delivered two days ago, signed for by the customer. Nothing since.",
            "provider_latency": 1.0,
            "tool_timeout": 0.3,
        }
    },
    scripts={
        ORDER_AGENT: [
            call("read_order", 60),
            call("done", 40, outcome="unchanged", summary="delivered; nothing new to record"),
        ],
        SUPPORT_AGENT: [
            call("read_order", 70),
            call("issue_refund", 110, amount_cents=4999, reason="arrived broken"),
            call(
                "issue_refund", 90, amount_cents=4999, reason="the first attempt timed out: retry"
            ),
            call(
                "set_order_status",
                80,
                status="refunded",
                based_on=1,
                evidence="refunded in full: the parcel arrived broken",
            ),
            call("done", 50, outcome="refunded", summary="refunded 4999 cents once, status set"),
        ],
    },
)

LOST_UPDATE = Scenario(
    name="lost-update",
    description="Both agents decide the order's status from the same version and disagree: "
    "one write wins, the other is refused, and the conflict is parked for a person.",
    template="orders",
    task="09:10 — please cancel my order, I picked the wrong size.",
    settings={"desk": {"feed": "09:12 — parcel handed to the carrier (scan DHL-7731)."}},
    scripts={
        ORDER_AGENT: [
            call(
                "set_order_status",
                70,
                status="shipped",
                based_on=1,
                evidence="carrier scan DHL-7731 at 09:12",
            ),
            call("done", 40, outcome="updated", summary="shipped at 09:12 per the carrier scan"),
        ],
        SUPPORT_AGENT: [
            call(
                "set_order_status",
                80,
                status="cancelled",
                based_on=1,
                evidence="the customer asked to cancel at 09:10, before dispatch",
            ),
            call("read_order", 50),
            call(
                "done",
                60,
                outcome="disputed",
                summary="the customer cancelled at 09:10, before the 09:12 dispatch: my claim "
                "stands and a person should decide",
            ),
        ],
    },
)

RE_DECIDE = Scenario(
    name="re-decide",
    description="As lost-update, but the support agent re-reads the order and decides again "
    "from the new version: no conflict is left.",
    template="orders",
    task=LOST_UPDATE.task,
    settings=LOST_UPDATE.settings,
    scripts={
        ORDER_AGENT: LOST_UPDATE.scripts[ORDER_AGENT],
        SUPPORT_AGENT: [
            LOST_UPDATE.scripts[SUPPORT_AGENT][0],
            call("read_order", 50),
            call(
                "set_order_status",
                60,
                status="shipped",
                based_on=2,
                evidence="it shipped at 09:12; the customer can return it instead",
            ),
            call("done", 40, outcome="unchanged", summary="too late to cancel: offered a return"),
        ],
    },
)

DESK = Team(
    name="support-desk",
    agents=(ORDER_AGENT, SUPPORT_AGENT),
    scenarios={s.name: s for s in (DOUBLE_REFUND, LOST_UPDATE, RE_DECIDE)},
    fly=fly,
    desk=True,
)
