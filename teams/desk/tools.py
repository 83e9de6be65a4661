"""The desk agents' tools, scoped to one run's order, with their guarantees in code.

set_order_status   a compare-and-swap on the version the agent decided from, recorded as a
                   claim first; a lost race comes back as OrderMoved with the order as it is
                   now, and after `attempts` losses the agent may not try again (Contended);
                   the claim, the change and a refusal at the gate name the call, which run
                   again (a resumed step's) answers as it first did: past the gate (its claim
                   made), it is not judged there again
issue_refund       through the effect ledger, keyed on (run, task, order, amount): a retry
                   after a timeout is the same refund, done once; it holds its amount of what
                   the order was paid in the same write as it starts, so refunds in flight
                   (another amount, another run on the order) count against the total too;
                   a refusal at the gate names the call, which run again answers it
both               mutations through the one gate (runtime/coordination/mutation.py):
                   the ticket's intent version, the driver's lease epoch (on the workers),
                   the agent's authority, evidence from the record, the derived key
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from runtime import errors
from runtime.coordination.claims import Claims
from runtime.coordination.effects import Ledger
from runtime.coordination.holds import hold, holds
from runtime.coordination.keys import effect_key, request_hash
from runtime.coordination.mutation import Authority, Evidence, Mutation, MutationGate
from runtime.events import ClaimAsserted, OrderPrepared, ToolReturned
from runtime.fenced import Fenced
from runtime.journal import Batch, Fence, WrongExpectedVersion
from runtime.session import Session
from runtime.tools import Call, Tool, ToolFailure, schema
from teams.desk.services import STATUSES, Desk, OrderMoved, RefundRefused, subject
from teams.desk.settings import DeskSettings

ORDER_AGENT, SUPPORT_AGENT = "order-agent", "support-agent"
RECONCILER = "reconciler"  # the harness, committing the value a rule decided
# Who may do what on the desk: the gate's authority check, given by the harness.
AUTHORITY = Authority.of(
    {
        "refund": {SUPPORT_AGENT},
        "set_status": {ORDER_AGENT, SUPPORT_AGENT},
        "reconcile": {RECONCILER},
    }
)


def gate_log(run_id: str) -> str:
    """The stream the desk's gate journals its refusals in (tools run live only)."""
    return f"gate-{run_id}"


@errors.replayable
class Contended(ToolFailure):
    """The agent lost every compare-and-swap it may try: a person settles it now."""


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
        self.gate = MutationGate(session.journal, AUTHORITY, gate_log(session.run_id))
        self.ledger = Ledger(session.journal, desk.outcomes, gate=self.gate)

    def read_order(self) -> dict[str, Any]:
        order = self.desk.orders.get(self.order_id)
        refunds = self.desk.payments.refunds(self.order_id)
        return {
            **order.public(),
            "refunded_cents": sum(r["amount_cents"] for r in refunds),
            "refunds": len(refunds),
        }

    @property
    def lease(self) -> Fence | None:
        """On the workers the run's journal is fenced by the driver's lease (its fence moves to
        each step's grant): what every mutation holds, read when it is made. A driver that lost
        the run is refused at the gate."""
        journal = self.session.journal
        return journal.fence if isinstance(journal, Fenced) else None

    def mutation(self, what: str, capability: str, evidence: Evidence) -> Mutation:
        return Mutation(
            what=what,
            actor=self.agent,
            capability=capability,
            intent=self.intent,
            lease=self.lease,
            evidence=(evidence,),
            run_id=self.session.run_id,
        )

    def read_before(self) -> Evidence:
        """The evidence a refund rests on: this agent read the order in this task (the record
        says so, whatever the agent's reason says)."""
        read = any(
            isinstance(e, ToolReturned)
            and e.agent == self.agent
            and e.task_id == self.task_id
            and e.tool == "read_order"
            and e.error is None
            for e in self.session.emitted
        )
        return Evidence(
            f"read_order by {self.agent} in {self.task_id}",
            read,
            f"{self.agent} never read order {self.order_id} in {self.task_id}: "
            "a refund is decided from the order as it stands",
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

    def set_order_status(
        self, status: str, based_on: int, evidence: str, call: Call | None = None
    ) -> dict[str, Any]:
        what = f"{self.agent} setting order {self.order_id} to {status}"
        # Run again under the same call (a resumed step's: the worker died before its
        # ToolReturned was written), it answers as its first run did. Its change, if it made
        # one, is found first: its compare-and-swap would now lose to that very change, and no
        # check since (the gate's, the losses') undoes what was written then.
        ref = call.ref if call is not None else None
        made = self.desk.orders.made_by(self.order_id, based_on, ref) if ref else None
        if made is not None:
            claim = self.claim(status, based_on, evidence, ref)  # the first run's, before it
            return {**made.public(), "changed": True, "claim_id": claim.claim_id}
        current = self.desk.orders.get(self.order_id)
        seen = Evidence(
            f"order {self.order_id} at version {based_on}",
            1 <= based_on <= current.version,
            f"order {self.order_id} never had version {based_on} (it is at {current.version})",
        )
        target, payload = subject(self.order_id), {"status": status, "based_on": based_on}
        key = effect_key(self.session.run_id, self.task_id, target, payload)
        mutation = replace(
            self.mutation(what, "set_status", seen),
            key=key,
            expected_key=key,
            request=request_hash("set_status", target, payload),
            call=ref,  # refused, it is refused once: run again, it answers that refusal
        )
        # Its claim, made after the gate, says its first run passed it: run again, it goes on
        # as that run went on, to its compare-and-swap under the guards it was given then, not
        # judged again (refused now, where the intent moved since, a call whose first run lost
        # its compare-and-swap would journal a refusal no uninterrupted run does).
        passed = ref is not None and self.claims.made_by(target, ref) is not None
        guards = self.gate.passed(mutation) if passed else self.gate.check(mutation)
        lost = self.losses()
        if lost >= self.settings.attempts:
            raise Contended(
                f"you lost {lost} compare-and-swaps on order {self.order_id}: the disagreement "
                "goes to a person; call done"
            )
        claim = self.claim(status, based_on, evidence, ref)
        current = self.desk.orders.get(self.order_id)
        if current.status == status and current.version == based_on:
            return {**current.public(), "changed": False, "claim_id": claim.claim_id}
        try:
            # Written only while the ticket's intent stands where the gate read it: a person
            # who superseded it since the check is not overruled by a write made under the old.
            order = self.desk.orders.set_status(
                self.order_id, status, based_on, self.agent, self.session.run_id, guards, ref
            )
        except WrongExpectedVersion as exc:
            self.gate.again(mutation, exc, guards)
        except OrderMoved as exc:
            if lost + 1 < self.settings.attempts:
                raise
            note = "That was your last attempt: stand by your claim or agree, and call done"
            raise OrderMoved(based_on, exc.current, note) from None
        return {**order.public(), "changed": True, "claim_id": claim.claim_id}

    def claim(self, status: str, based_on: int, evidence: str, ref: str | None) -> ClaimAsserted:
        """The agent's claim on the order's status, superseding its last live one in this run;
        under a call (`ref`) once: run again, the call is answered the claim it made."""
        about = subject(self.order_id)
        # The agent's own last live claim alone (Claims.last_live), not every run's live claims
        # on the order, read whole at every status change.
        mine = self.claims.last_live(about, "status", self.agent, self.session.run_id)
        return self.claims.claim(
            about,
            "status",
            status,
            based_on,
            self.agent,
            "model",
            {"text": evidence, "task": self.task_id},
            supersedes=mine.claim_id if mine is not None else None,
            run_id=self.session.run_id,
            call=ref,
        )

    def issue_refund(
        self, amount_cents: int, reason: str, call: Call | None = None
    ) -> dict[str, Any]:
        try:
            what = f"{self.agent} refunding {amount_cents} cents on {self.order_id}"
            target = subject(self.order_id)
            payload = {"amount_cents": amount_cents}
            # The key is the decision's, never the model's: the same refund decided again in
            # this task is the same key, whatever reason the agent gives this time.
            key = effect_key(self.session.run_id, self.task_id, target, payload)
            mutation = replace(
                self.mutation(what, "refund", self.read_before()),
                expected_key=key,
                call=call.ref if call is not None else None,  # refused, it is refused once
            )
            if not self.ledger.started(key):
                # A refusal this call was given already is its answer (run again by a resumed
                # step): the amount checked again might be refused in other words, the order
                # refunded since by somebody else.
                self.gate.refused_before(mutation)
                # An amount the order cannot take is said so before the gate's checks, as it
                # always was; the hold itself is checked again, and taken, with the start.
                self.reserve(key, amount_cents)
            receipt = self.ledger.perform(
                key,
                "refund",
                target,
                payload,
                lambda k: self.desk.payments.refund(k, self.order_id, amount_cents),
                run_id=self.session.run_id,
                mutation=mutation,
                reserve=lambda: self.reserve(key, amount_cents),
                # The payment provider deduplicates on the key (one refund per key, the same
                # receipt to every call): a refund left unsettled by a driver that died is sent
                # again by the one that took the run over, and recorded as it was made.
                resend=True,
            )
            return {"refund": receipt, "idempotency_key": key}
        finally:
            self.desk.release()  # this runs in the tool's own thread: give back its resources

    def reserve(self, key: str, amount_cents: int) -> Batch:
        """The refund's hold on what the order was paid, or RefundRefused. What counts: the
        provider's refunds, and the holds of refunds not recorded as failed that it does not
        have (yet): in flight, by this run or another on the same order (DeskSettings.order_id),
        under a key of their own. The holds are read first: a refund the provider makes after
        that read is one of theirs, and a hold taken after it makes the ledger ask again."""
        target = subject(self.order_id)
        at, held = holds(self.ledger, target)
        done = {r["key"]: r["amount_cents"] for r in self.desk.payments.refunds(self.order_id)}
        refunded = sum(done.values())
        in_flight = sum(amount for k, amount in held.items() if k not in done)
        paid = self.desk.orders.get(self.order_id).amount_cents
        if refunded + in_flight + amount_cents > paid:
            flight = f" and {in_flight} held for refunds in flight" if in_flight else ""
            raise RefundRefused(
                f"order {self.order_id} was paid {paid} cents, {refunded} are refunded "
                f"already{flight}: {amount_cents} more is too much"
            )
        return hold(target, key, amount_cents, paid, at, self.session.run_id)

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
                identified=True,  # told its call: run again, it answers as it first did
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
                    identified=True,  # told its call: refused, run again, it answers that
                )
            )
        return tools
