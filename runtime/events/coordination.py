"""Coordination between agents and the outside world: effects done once, facts changed by
compare-and-swap, claims and their reconciliation, intents and leases."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from runtime.events.base import ErrorInfo, Event
from runtime.events.times import Instant, Seconds

# --- side effects, once (stream `effect-<key>`) ------------------------------------------------


class EffectStarted(Event):
    """The first caller of an effect key won the right to perform it (version 1 of its stream).

    `request_hash` is the payload's fingerprint: the same key with another payload is refused.
    `lease` and `epoch` (v2) are the fence the performer wrote it under, when it was fenced (on
    the workers, the run's driver lease): while that lease stands the performer may still be
    waiting on the provider, and the effect reconciler does not take the provider's "unknown"
    for "it did not happen". v1 kept no fence: its default, None, says it was not recorded.

    `call` (v3) names the tool call that started it (runtime/tools.py `Call.ref`), where a tool
    call did: that call run again (a resumed step's, the worker dead before the outcome was
    written) passed the gate already and takes its effect over (EffectResumed), not judged at
    the gate again as a second mutation; another call under the same key is judged as before.
    v2 kept no call: its default, None, says none was recorded.
    """

    v: ClassVar[int] = 3
    kind: ClassVar[str] = "EffectStarted"
    key: str
    effect_type: str
    target: str
    request_hash: str
    intent_id: str | None = None
    intent_version: int | None = None
    lease: str | None = None
    epoch: int | None = None
    call: str | None = None


class EffectResumed(Event):
    """A new performer took over an effect found started and unsettled, to send it again under
    the same key: allowed only where the provider deduplicates on the key (it answers the
    key's first answer, and does the effect once), and only once the lease the effect was last
    taken under (the EffectStarted's fence, or the last EffectResumed's) no longer stands, so
    its performer is gone. `lease` and `epoch` are the new performer's fence: appended at the
    stream's version with a guard, so two resumers (or a resumer and the effect reconciler)
    cannot both act, and the reconciler sees a standing lease and leaves the effect to it.
    `after_lease`/`after_epoch` name the fence it took over from."""

    kind: ClassVar[str] = "EffectResumed"
    key: str
    lease: str
    epoch: int
    after_lease: str | None = None
    after_epoch: int | None = None


class EffectSucceeded(Event):
    kind: ClassVar[str] = "EffectSucceeded"
    key: str
    result: Any = None
    reconciled: bool = False  # settled by asking the provider, not by the caller


class EffectFailed(Event):
    kind: ClassVar[str] = "EffectFailed"
    key: str
    error: ErrorInfo
    reconciled: bool = False


class EffectReserved(Event):
    """An amount an effect holds of a total that effects on its target may not take past
    `limit` (an order's refunds, of what it was paid). Appended to `reserved-<target>` in the
    same write as the effect's EffectStarted, at the version of that stream its check read:
    a writer that lost the race reads the holds again and checks again. The hold stands until
    the effect is recorded as failed."""

    kind: ClassVar[str] = "EffectReserved"
    key: str
    target: str
    amount: int
    limit: int


# --- shared facts (stream `subject-<name>`) ----------------------------------------------------


class FactChanged(Event):
    """A fact's new value, written by compare-and-swap on the version it was decided from.

    `call` (v2) names the tool call that wrote it (runtime/tools.py `Call.ref`): the same call
    run again (a resumed step's, its ToolReturned never written) finds its own change here and
    answers as the first run did, where its compare-and-swap would lose to that very change.
    v1 kept no call: its default, None, says no tool call's (or not recorded)."""

    v: ClassVar[int] = 2
    kind: ClassVar[str] = "FactChanged"
    subject: str
    predicate: str
    value: Any
    based_on: int
    by: str
    intent_version: int | None = None
    call: str | None = None


class ClaimAsserted(Event):
    """Somebody's statement about a fact, with what it rests on. Claims are never overwritten:
    a later claim may supersede an earlier one, and both stay in the record.

    `call` (v2) names the tool call that asserted it (runtime/tools.py `Call.ref`): the same call
    run again asserts nothing more, it finds this claim. v1 kept no call: its default, None."""

    v: ClassVar[int] = 2
    kind: ClassVar[str] = "ClaimAsserted"
    claim_id: str
    subject: str
    predicate: str
    value: Any
    based_on: int
    source: Literal["state", "verifier", "model"]
    by: str
    evidence: dict[str, Any] = Field(default_factory=dict)
    supersedes: str | None = None
    call: str | None = None


class ClaimsReconciled(Event):
    """A rule decided between live claims; the losing claims stay visible."""

    kind: ClassVar[str] = "ClaimsReconciled"
    subject: str
    predicate: str
    winner: str
    losers: list[str]
    rule: str
    value: Any = None


# How many live claims a note may list: a fact with more (claims nobody decided between) is
# read whole, and its reading costs its answer anyway.
MAX_NOTED = 64


class LiveClaimsNoted(Event):
    """The reconciler's note, appended with its decision (same append, same expected version),
    of the fact's claims that are live after it: `live` their ids and `at` their versions in
    the claims stream, in order, through the stream's version `through`. A claim stays live
    until a later claim supersedes it or a decision names it, and a decision names only the
    claims it chose between, so without this nothing said "what came before is settled" and
    the live claims were read from the subject's whole stream (runtime/coordination/noted.py).

    `others` are the versions of the other predicates' last notes on the subject, carried
    forward, so that the stream's last note of any predicate leads to this predicate's."""

    kind: ClassVar[str] = "LiveClaimsNoted"
    subject: str
    predicate: str
    live: list[str] = Field(max_length=MAX_NOTED)
    at: list[int] = Field(max_length=MAX_NOTED)
    through: int = Field(ge=0)
    others: dict[str, int] = Field(default_factory=dict, max_length=MAX_NOTED)


# --- intents and leases ------------------------------------------------------------------------


class IntentDeclared(Event):
    """What a person wants done, with a version: work decided under an older version is stale."""

    kind: ClassVar[str] = "IntentDeclared"
    intent_id: str
    intent_version: int
    statement: str
    by: str
    reason: str = ""


class StaleWorkRejected(Event):
    """A mutation refused at the boundary: its intent was superseded, or its lease moved on."""

    kind: ClassVar[str] = "StaleWorkRejected"
    what: str
    gate: Literal["intent", "lease"]
    held: int
    current: int
    reason: str


class LeaseGranted(Event):
    """Ownership of a resource for a while. The version of this event is the lease's epoch.

    v2 carries the bookkeeping of the work the lease is taken for, so that the stream's last
    event alone answers "how many times was this started?" (runtime/coordination/leases.py):
    `at_version` names the work (a run's step: the run's version when it began; None for a
    lease that counts no work) and `attempt` is this start's number since the count was reset.
    """

    kind: ClassVar[str] = "LeaseGranted"
    v: ClassVar[int] = 2
    resource: str
    holder: str
    expires: Instant
    at_version: int | None = None
    attempt: int = 0  # 0: written by v1, which did not count


class LeaseRenewed(Event):
    """The holder extended its lease (a heartbeat). The epoch does not move: `epoch` names the
    grant it extends, and appends fenced by that epoch still pass."""

    kind: ClassVar[str] = "LeaseRenewed"
    resource: str
    holder: str
    expires: Instant
    epoch: int
    at_version: int | None = None
    attempt: int = 0


class LeaseReleased(Event):
    """The holder gave its lease back. v2 says which grant (`epoch`), what became of the work
    (`outcome`), and the attempts that count so far: a start that ended handing its work on
    (a step left "waiting" on specialists) is not counted against it. v3: how long the model
    endpoint that failed the work asked to be left alone (its Retry-After), if it said."""

    kind: ClassVar[str] = "LeaseReleased"
    v: ClassVar[int] = 3
    resource: str
    holder: str
    epoch: int | None = None  # None: written by v1
    outcome: str = ""
    at_version: int | None = None
    attempt: int = 0
    retry_after: Seconds | None = Field(default=None, ge=0, allow_inf_nan=False)  # None: unsaid


class LeaseClosed(Event):
    """Nobody may take the lease again: the work it was for is settled without its holder
    (a run gave a specialist's sub-task up). Written by whoever owns the work, not by a
    holder; a grant after it is refused, and a holder still at work is fenced out by it."""

    kind: ClassVar[str] = "LeaseClosed"
    resource: str
    by: str  # who closed it: the run whose sub-task it was
    reason: str


# --- in a run's own stream: what the harness found when it looked -----------------------------


class FactReconciled(Event):
    """The harness reconciled the live claims on a fact: they agreed, a rule decided (and the
    winning value was committed by compare-and-swap), or nobody could and a person must."""

    kind: ClassVar[str] = "FactReconciled"
    subject: str
    predicate: str
    status: Literal["agreed", "decided", "parked", "nothing"]
    value: Any = None
    rule: str = ""
    conflict_id: str | None = None
    fact_version: int | None = None  # the fact's version after any commit


class OrderPrepared(Event):
    """The support desk's order as the run found (or opened) it, and the intent it works for."""

    kind: ClassVar[str] = "OrderPrepared"
    order_id: str
    status: str
    amount_cents: int
    order_version: int
    intent_id: str
    intent_version: int


class DeskChecked(Event):
    """The harness's own look at the order, the ledger and the provider after the agents
    finished: the verdict rests on this, never on an agent's report."""

    kind: ClassVar[str] = "DeskChecked"
    order: dict[str, Any]
    refund_calls: int
    effects: list[dict[str, Any]]
    provider_refunds: list[dict[str, Any]]
    refunded_cents: int
    problems: list[str] = Field(default_factory=list)
