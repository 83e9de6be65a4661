"""Decisions on parked claim conflicts: exactly one decision per conflict, journalled.

A parked conflict is the stream `conflict-<id>`: ConflictParked at version 1, the decision at
version 2. Two reviewers deciding at once both append at expected version 1; the store lets
exactly one through and the other hears "already decided".

A decision commits the chosen value where the conflict says (its `commit`): a compare-and-swap
from the version the fact had when the conflict was parked, in the same transaction as the
decision. If the fact moved since, nothing is decided or committed (ConflictMoved): the reviewer
was looking at a world that no longer exists. The claims stay in the record, settled.

A decision is a person's mutation, and goes through the mutation gate first
(runtime/coordination/mutation.py), with its five checks: the intent the conflict was parked
under is still the current one (a person may have superseded it since), no lease fences it,
the person's role may rule (`reviewer`), the evidence holds (the conflict is parked, and the
fact is still at the version it was parked at: "the fact moved on" is refused here, before any
transaction), and its idempotency key is the ruling's id (the form's, or one derived from the
conflict, the choice and the person; what it asks holds the reason too): the same ruling
posted twice is applied once, and the second answer is the first's decision. Another reason
under the same key is not the same ruling: ConflictAlreadyDecided (RulingRepeated for a form's
id), saying who decided what and why, as for another person's ruling. A refusal
(RulingRefused, with the gate's MutationRefused) is journalled in the run's gate log
`gate-<run>` and nothing else is written. The intent's check is repeated in the decision's
transaction: its append is guarded by the intent's stream at the version the gate read, so a
person who supersedes the intent between the gate and the decision makes nothing be written
(the commit is undone with it), and the ruling, checked again, is refused (StaleRuling) as it
would have been had they been a moment quicker.

Where a value can be committed is a registry (services/commit_targets.py), keyed by the
commit's `service`: this module knows only the journal's own facts ("facts"); an app that parks
conflicts on its own state registers its commit function in its AppConfig.ready() (the support
desk's orders: desk/apps.py). A conflict naming a target nobody registered is refused
(UnknownCommitTarget), deciding nothing.

A conflict's claims are those live on the fact when it was parked, and the fact's claims stream
is shared by every run on its subject (two runs on one order): a conflict may hold another
run's claims, which that run's own conflict holds too. A ruling settles the claims it decided
on that stream, so a claim another conflict's ruling settled after this one was parked is no
longer offered (`claims_now`), and choosing it is refused (ClaimSettled). The check and the
decision are one step: the decision is appended to the claims stream at the version the check
read, so a ruling that settled the claim in between (say another reviewer rejecting both claims
of the other conflict, which commits nothing for the target's compare-and-swap to catch) makes
this one check again, and be refused, where both went in (the claim lost, then won).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from django.db import transaction

from journal_store import projection
from journal_store.journal import DjangoJournal
from runtime.coordination.claims import Claims, Settled
from runtime.coordination.facts import Facts
from runtime.coordination.keys import request_hash
from runtime.coordination.mutation import Authority, Evidence, GateRefused, Mutation, MutationGate
from runtime.events import (
    ClaimsReconciled,
    ConflictParked,
    ConflictResolved,
    Event,
    FactChanged,
    shown,
)
from runtime.journal import Guard, WrongExpectedVersion
from runtime.page_reads import read_back
from services.commit_targets import READERS as READERS
from services.commit_targets import TARGETS as TARGETS
from services.commit_targets import CommitTarget as CommitTarget
from services.commit_targets import Current as Current
from services.commit_targets import current_value as current_value
from services.commit_targets import current_values as current_values
from services.commit_targets import register_commit_target as register_commit_target
from services.conflict_errors import NONE as NONE  # the choice the callers send and test
from services.conflict_errors import (
    ClaimSettled,
    ClaimsMoved,
    ConflictAlreadyDecided,
    ConflictError,
    ConflictMoved,
    ConflictNotFound,
    RulingNotAllowed,
    RulingRepeated,
    UnknownCommitTarget,
    refusal,
)

ID_MAX = 64  # characters of a conflict's id (the queue's column)
RECHECKS = 20  # checks again of a ruling whose claims stream moved before its decision
REVIEWER = "reviewer"  # the role that rules on conflicts (the dashboard's reviewer permission)
RULINGS = Authority.of({"rule": {REVIEWER}})


def park(conflict: ConflictParked) -> None:
    """Put a conflict in the queue (the reconciler's last resort)."""
    DjangoJournal().append(f"conflict-{conflict.conflict_id}", [conflict], 0)
    projection.catch_up(["conflicts", "runs"])


def claim_choices(parked: ConflictParked) -> dict[str, Any]:
    """The values a reviewer may choose, by claim id (or index when a claim has no id)."""
    keys = claim_choices_of(parked.claims)
    return dict(zip(keys, [c.get("value") for c in parked.claims], strict=True))


def settled_since(
    subject: str, predicate: str, claims: list[dict[str, Any]], position: int, using: str
) -> dict[str, ClaimsReconciled]:
    """The conflict's claims (as parked, at journal position `position`) that a ruling settled
    since, by claim id, with the decision that settled them."""
    ids = claim_choices_of(claims)
    return Claims(DjangoJournal(using)).settled(subject, predicate, position, ids)


def claims_now(conflict: Any, using: str = "default") -> tuple[list[dict[str, Any]], list[str]]:
    """A conflict's claims (a queue row: its claims, run, subject, predicate, status and the
    position it was parked at) as the queue shows them, and what a ruling may choose now.
    Each claim names its run (claims parked before they carried it are the conflict's run's),
    and, while the conflict is open, `settled`: None, or the ruling on another conflict that
    settled it since (its run, its rule, whether the claim won); a settled claim is not among
    the choices. A decided conflict offers nothing."""
    return claims_now_of([conflict], using)[0]


def claims_now_of(
    conflicts: Sequence[Any], using: str = "default"
) -> list[tuple[list[dict[str, Any]], list[str]]]:
    """`claims_now` of each conflict, the rulings since each open one was parked read for all
    of them at once (Claims.settled_each): a page of cards costs a read, not one a card."""
    asks = [
        Settled(c.subject, c.predicate, c.position, claim_choices_of(c.claims))
        for c in conflicts
        if c.status == "open"
    ]
    settled = iter(Claims(DjangoJournal(using)).settled_each(asks))
    found = []
    for conflict in conflicts:
        is_open = conflict.status == "open"
        gone = next(settled) if is_open else {}
        shown_claims, choices = [], []
        for key, claim in zip(claim_choices_of(conflict.claims), conflict.claims, strict=True):
            by = gone.get(key)
            ruled_by = None
            if by is not None:
                ruled_by = {"run_id": by.run_id, "rule": by.rule, "won": by.winner == key}
            elif is_open:
                choices.append(key)
            run = claim.get("run_id") or conflict.run_id
            shown_claims.append({**claim, "run_id": run, "settled": ruled_by})
        found.append((shown_claims, [*choices, NONE] if is_open else []))
    return found


class Card(NamedTuple):
    """What a conflict's card shows beyond its row (the queue's page and the API's items):
    its claims now and the choices left (`claims_now`), and what its fact holds now (None:
    nothing holds it here)."""

    claims: list[dict[str, Any]]
    choices: list[str]
    current: Current | None


def cards_of(conflicts: Sequence[Any]) -> list[Card]:
    """The cards of a page of conflicts, in order: each card's reads made for the whole page
    at once (the rulings since each was parked, what each fact holds now), so that a page
    costs the same few reads however many conflicts it shows."""
    currents = current_values([(c.commit, c.subject, c.predicate) for c in conflicts])
    return [
        Card(claims, choices, current)
        for (claims, choices), current in zip(claims_now_of(conflicts), currents, strict=True)
    ]


def claim_choices_of(claims: list[dict[str, Any]]) -> list[str]:
    """The choices' keys of parked claims, in order: a claim's id (its index without one)."""
    return [str(c.get("claim_id", i)) for i, c in enumerate(claims)]


def decision_of(events: Iterable[Event]) -> ConflictResolved | None:
    """The decision taken on a conflict, from its stream's events after the parking (None:
    still open)."""
    return next((e for e in events if isinstance(e, ConflictResolved)), None)


def ruling_key(conflict_id: str, choice: str, by: str) -> str:
    """A ruling's id when its form sent none: the same person choosing the same claim on the
    same conflict is the same ruling (a double-click, a second POST). Its request holds the
    reason too (`ruled`): the same key with another reason is not the ruling taken."""
    return "rl-" + request_hash("rule", conflict_id, [choice, by])[:24]


def resolve(
    conflict_id: str,
    choice: str,
    by: str,
    reason: str,
    using: str = "default",
    *,
    ruling_id: str | None = None,
    role: str = REVIEWER,
) -> ConflictResolved:
    """Decide a parked conflict (see the module docstring); `role` is the signed-in person's
    (the gate's authority), `ruling_id` the ruling's idempotency key."""
    if len(conflict_id) > ID_MAX:  # before it is looked up: a 5,000-character one was quoted
        raise ConflictError(f"{shown(conflict_id)} is no conflict's id: at most {ID_MAX} long")
    journal = DjangoJournal(using)
    records = journal.read(f"conflict-{conflict_id}")
    events: list[Event] = [r.event for r in records]
    if not events or not isinstance(events[0], ConflictParked):
        raise ConflictNotFound(conflict_id)
    parked = events[0]
    choices = claim_choices(parked)
    if choice != NONE and choice not in choices:
        known = ", ".join([*choices, NONE])
        raise ConflictError(
            f"conflict {conflict_id} has no claim {shown(choice)}; choose one of {known}"
        )
    value = None if choice == NONE else choices[choice]
    key = ruling_id or ruling_key(conflict_id, choice, by)
    request = requested(conflict_id, choice, value, reason)
    decided = decision_of(events[1:])
    if decided is not None:
        if same_ruling(decided, key, by, request):
            return decided  # the same ruling again: it was applied once, here it is
        if decided.ruling_id != key or ruling_id is None or decided.by != by:
            # Another person's ruling (under its key too: a key is the client's to choose),
            # or the same person's derived key with another reason: either would be dropped
            # in silence if answered with the decision taken.
            raise ConflictAlreadyDecided(conflict_id, decided)
        # the form's ruling id for another choice or reason: the gate's idempotency check
        # refuses it (journalled in the gate log), saying what was decided
    parked_at = records[0].position
    try:
        at: int | None = None  # a ruling already decided is refused at the gate: no decision
        gone: dict[str, ClaimsReconciled] = {}
        if decided is None:
            at, gone = unsettled(journal, parked, choice, parked_at)
        target = committer(parked) if choice != NONE else None
        gate = MutationGate(
            journal,
            RULINGS,
            f"gate-{parked.run_id}",
            used=lambda k: (
                ruled(decided) if decided is not None and decided.ruling_id == k else None
            ),
        )
        mutation = ruling(journal, parked, choice, by, role, key, request, decided is not None)

        def checked() -> tuple[Guard, ...]:
            try:
                return gate.check(mutation)
            except GateRefused as exc:
                if decided is not None and exc.refused.check == "idempotency":
                    raise RulingRepeated(exc.refused, decided) from None
                raise refusal(exc.refused) from None

        guards = checked()
        for attempt in range(RECHECKS + 1):
            try:
                decision = decide(
                    journal,
                    parked,
                    target,
                    choice,
                    value,
                    by,
                    reason,
                    key,
                    using,
                    set(gone),
                    at,
                    guards,
                )
                break
            except (ClaimsMoved, WrongExpectedVersion):
                # Something was appended since the check: to the subject's claims (another
                # conflict's ruling, a run's claim), or to the intent (the decision's guard: a
                # person superseded it). Nothing of this ruling was written. Check again: refused
                # when its claim was settled or its intent superseded, else decided on what holds.
                if attempt == RECHECKS:
                    raise
                guards = checked()
                at, gone = unsettled(journal, parked, choice, parked_at)
    except ConflictError as exc:
        if decided is not None or isinstance(exc, RulingNotAllowed):
            raise
        # Another ruling went in after our read of the conflict (six posts at once): whatever
        # refused this one (the claim it settled, the fact it moved, version 2) is said as it.
        now = decision_of(r.event for r in journal.read(f"conflict-{conflict_id}", after=1))
        if now is None:
            raise  # still open: the refusal is this ruling's own
        if same_ruling(now, key, by, request):
            return now  # the same ruling, posted twice at once: applied once
        raise ConflictAlreadyDecided(conflict_id, now) from None
    projection.catch_up(["conflicts", "runs"], using=using)
    return decision


def same_ruling(decided: ConflictResolved, key: str, by: str, request: str) -> bool:
    """Whether `decided` is this person's ruling under `key` asking `request`, posted again.
    Its person too: another reviewer sending the same ruling id (a script's, a form's id
    copied) with the same choice and reason was answered the decision as their own, though
    the record names the first."""
    return decided.ruling_id == key and decided.by == by and ruled(decided) == request


def unsettled(
    journal: DjangoJournal, parked: ConflictParked, choice: str, position: int
) -> tuple[int, dict[str, ClaimsReconciled]]:
    """The version of the subject's claims stream, then which of the conflict's claims (parked
    at journal position `position`) a ruling settled since: the decision is appended at that
    version, so a ruling that settles one of them in between makes it check again. Refused
    (ClaimSettled) when `choice` is one of them. The version is read first: a decision that
    went in between the two reads is then in what was read, or makes the append check again."""
    at = journal.version(Claims.stream(parked.subject))
    gone = settled_since(parked.subject, parked.predicate, parked.claims, position, journal.using)
    if choice in gone:
        claim = parked.claims[claim_choices_of(parked.claims).index(choice)]
        named = {**claim, "run_id": claim.get("run_id") or parked.run_id}
        raise ClaimSettled(parked.conflict_id, named, gone[choice])
    return at, gone


def decide(
    journal: DjangoJournal,
    parked: ConflictParked,
    target: CommitTarget | None,
    choice: str,
    value: Any,
    by: str,
    reason: str,
    key: str,
    using: str,
    settled: set[str] | None = None,
    claims_at: int | None = None,
    guards: Sequence[Guard] = (),
) -> ConflictResolved:
    """Commit the chosen value and journal the decision, in one transaction. The decision
    settles the claims still open; those another ruling settled (`settled`) stay as it left
    them (naming them losers here would say this ruling decided against them). It is appended
    to the claims stream at `claims_at`, the version `settled` was read at: when the stream
    moved since, nothing is written (ClaimsMoved), for that read may be out of date. It is
    appended with the gate's `guards` (the intent's stream where the check read it): when
    the intent moved since, nothing is written (WrongExpectedVersion on that stream)."""
    conflict_id = parked.conflict_id
    choices = claim_choices(parked)
    with transaction.atomic(using=using):
        # The commit first, then the decision: the same lock order as every other writer of
        # the target (its row, say an order's, then the journal), so two cannot deadlock.
        committed = target(parked, value, by, journal) if target else None
        decision = ConflictResolved(
            run_id=parked.run_id,
            conflict_id=conflict_id,
            by=by,
            reason=reason,
            choice=choice,
            value=value,
            committed=committed,
            ruling_id=key,
        )
        stream = f"conflict-{conflict_id}"
        try:
            journal.append(stream, [decision], 1, guards=guards)
        except WrongExpectedVersion as exc:
            if exc.stream != stream:
                raise  # a guard's: the intent moved, and the commit above is undone with this
            raise ConflictAlreadyDecided(conflict_id) from None
        ids = [i for i in choices if i not in (settled or set())]
        if not ids:  # other rulings settled them all since: a decision on none says nothing
            return decision
        losers = [i for i in ids if i != choice]
        claims = Claims(journal)
        # The fact's live claims after the ruling, noted in its append (as a rule's decision
        # is): the next read of them starts there, not at the last rule's note or the stream's
        # start.
        note = (
            None
            if claims_at is None
            else claims.noted_after(
                parked.subject, parked.predicate, {choice, *losers}, parked.run_id, claims_at
            )
        )
        try:
            claims.settle(
                parked.subject,
                parked.predicate,
                choice,
                losers,
                f"reviewer {by}: {reason}",
                value,
                run_id=parked.run_id,
                expected=claims_at,
                note=note,
            )
        except WrongExpectedVersion as exc:
            raise ClaimsMoved(conflict_id, exc) from None
    return decision


def requested(conflict_id: str, choice: str, value: Any, reason: str) -> str:
    """What a ruling asks, as its key's request: the choice, its value and the reason."""
    asked = {"choice": choice, "value": value, "reason": reason}
    return request_hash("rule", f"conflict-{conflict_id}", asked)


def ruled(decision: ConflictResolved) -> str:
    """The request a recorded decision answered (what its ruling's key was used for)."""
    return requested(decision.conflict_id, decision.choice, decision.value, decision.reason)


def ruling(
    journal: DjangoJournal,
    parked: ConflictParked,
    choice: str,
    by: str,
    role: str,
    key: str,
    request: str,
    decided: bool = False,
) -> Mutation:
    """A person's ruling as the gate sees it: under the intent the conflict was parked under,
    by the person's role, on the evidence that the fact is still where it was parked (read
    from its subject stream, which moves in step with the target; not asked of a conflict
    already decided, where only the ruling's key is in question)."""
    named = (parked.commit or {}).get("intent")
    intent = (str(named["id"]), int(named["version"])) if isinstance(named, dict) else None
    # Rejecting every claim commits nothing, so no intent can be acted against; and once the
    # intent is superseded it is the only ruling left that can close the conflict.
    rejects = choice == NONE
    no_intent = ""
    if rejects:
        no_intent = "rejecting every claim commits nothing"
    elif intent is None:
        no_intent = "the conflict was parked under no intent"
    evidence = [Evidence(f"conflict {parked.conflict_id} parked", True)]
    stream = Facts.stream(parked.subject)
    now = journal.version(stream)
    if parked.commit and choice != NONE and not decided and now:
        version = int(parked.commit.get("version", 0))
        last = [
            r.event
            for r in journal.read(stream)
            if isinstance(r.event, FactChanged) and r.event.predicate == parked.predicate
        ]
        held = f"{parked.predicate} {last[-1].value!r}, set by {last[-1].by}" if last else "unset"
        evidence.append(
            Evidence(
                f"{parked.subject} at version {version}",
                now == version,
                f"{parked.subject.replace(':', ' ', 1)} moved since the conflict was parked at "
                f"version {version}: it is at version {now} now ({held}); look at it again",
            )
        )
    return Mutation(
        what=f"{by}'s ruling on conflict {parked.conflict_id} ({choice})",
        actor=role,
        capability="rule",
        intent=None if rejects else intent,
        key=key,
        request=request,
        evidence=tuple(evidence),
        run_id=parked.run_id,
        no_intent_because=no_intent,
    )


def committer(parked: ConflictParked) -> CommitTarget | None:
    """The commit function of the conflict's target; None when it commits nowhere."""
    if not parked.commit:
        return None
    kind = str(parked.commit.get("service"))
    if kind not in TARGETS:
        raise UnknownCommitTarget(parked.conflict_id, kind)
    return TARGETS[kind]


def commit_fact(
    parked: ConflictParked, value: Any, by: str, journal: DjangoJournal
) -> dict[str, Any]:
    """The "facts" target: the subject's fact in the journal, from the version it was parked at."""
    version = int(parked.commit.get("version", 0)) if parked.commit else 0
    try:
        new = Facts(journal).write(
            parked.subject, parked.predicate, value, version, f"reviewer:{by}"
        )
    except WrongExpectedVersion as exc:
        raise ConflictMoved(
            f"{parked.subject} moved since the conflict was parked ({exc}): look again"
        ) from None
    return {"service": "facts", "key": parked.subject, "version": new}


# How many of a subject's facts read_fact reads at a time, newest first.
FACT_WINDOW = 64


def read_fact(commit: dict[str, Any], subject: str, predicate: str) -> Current:
    """The "facts" target's current value: the subject's fact in the journal, its last change
    of `predicate`, at the subject's stream's version. Read back from the newest a window at a
    time, so that it costs the changes since the predicate last changed, where reading the
    stream whole cost the subject's history: each open conflict on the queue's page and API
    asks it of the order its claims are about."""
    return read_facts([(commit, subject, predicate)])[0]


def read_facts(asked: Sequence[tuple[dict[str, Any], str, str]]) -> list[Current]:
    """`read_fact` of each (commit, subject, predicate): each round reads the next window of
    every subject whose predicate's last change is not found yet, in one read of the journal
    (runtime/page_reads.py). Still a window at a time per subject, back to its last change:
    bounded by what changed since, never the subject's whole history."""
    journal = DjangoJournal()
    found: list[Current | None] = [None] * len(asked)
    tops: list[int] = [0] * len(asked)
    # (the asked fact, the version its next window is read back from: None, the stream's last)
    going: list[tuple[int, int | None]] = [(n, None) for n in range(len(asked))]
    while going:
        seeks = [
            (Facts.stream(str(asked[n][0].get("key") or asked[n][1])), until, FACT_WINDOW)
            for n, until in going
        ]
        more: list[tuple[int, int | None]] = []
        for (n, until), window in zip(going, read_back(journal, seeks), strict=True):
            if until is None:
                tops[n] = window[0].version if window else 0
            predicate = asked[n][2]
            for rec in window:  # newest first
                if isinstance(rec.event, FactChanged) and rec.event.predicate == predicate:
                    found[n] = Current(rec.event.value, tops[n], rec.event.by, True)
                    break
            else:
                lowest = window[-1].version if window else 0
                if lowest > 1:
                    more.append((n, lowest - 1))
        going = more
    return [f if f is not None else Current(None, tops[n], "", False) for n, f in enumerate(found)]


# keyed by subject
register_commit_target("facts", commit_fact, read_fact, name="subject", currents=read_facts)
