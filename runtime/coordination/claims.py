"""Claims and conflicts: disagreements become records, not silent overwrites.

Agents assert claims (subject, predicate, value, who, based on which version, on what evidence,
superseding which earlier claim) in the stream `claims-<subject>`. Two live claims on the same
fact from the same version with different values are a conflict. The reconciler applies
deterministic rules first:

    source     authoritative state beats a verifier, which beats a model's judgement
    authority  a configurable ranking of who may say what, per predicate

and parks what the rules cannot decide — both sides with their evidence — for a person. Having
no safe way to decide is an allowed outcome (HUMAN_REQUIRED), not an error. Which rule applies
depends on the kind of conflict (runtime/coordination/conflicts.py: state, evidence, ownership,
authority, verification, plan, intent, resource), and the parked conflict carries its kind.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from runtime.coordination.calls import written_since
from runtime.coordination.conflicts import SOURCE_RANK, ConflictType, classify, resolve
from runtime.coordination.keys import canonical
from runtime.coordination.noted import claim, note_after, note_claimed, read_live, read_to_note
from runtime.events import ClaimAsserted, ClaimsReconciled, ConflictParked, Event, LiveClaimsNoted
from runtime.journal import (
    Journal,
    Recorded,
    SeekingJournal,
    WrongExpectedVersion,
    append_next,
    read_run_of_kind,
)
from runtime.page_reads import read_of_kinds

__all__ = ["SOURCE_RANK", "Claims", "ConflictType", "Outcome", "Rules", "conflict_type"]

# The decisions Claims.settled asks for at a time: few first (most conflicts have none since
# they were parked, or the first one settles them), more while it has to go on.
FIRST_PAGE, LAST_PAGE = 8, 512
RECHECKS = 20  # readings again of claims whose stream moved before a rule's decision went in


@dataclass(frozen=True)
class Rules:
    """Per predicate, who ranks above whom (a higher number decides). Unlisted: rank 0."""

    authority: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    def rank(self, predicate: str, who: str) -> int:
        ranks = self.authority.get(predicate, {})
        return ranks.get(who, ranks.get(who.split("-")[0], 0))


@dataclass(frozen=True)
class Outcome:
    """What reconciling one fact came to."""

    status: Literal["agreed", "decided", "parked", "nothing"]
    value: Any = None
    rule: str = ""
    conflict_id: str | None = None
    # Decided: the claims the rule decided between, in journal order (no longer live): what
    # a person is given when the winner cannot be committed, without reading them again.
    decided: tuple[ClaimAsserted, ...] = ()


def claim_id(
    subject: str, predicate: str, by: str, value: Any, based_on: int, run_id: str = ""
) -> str:
    """The same claim asserted again by the same run has the same id; asserted by another run
    (the same agent's name, value and version on a subject runs share, such as an order), it is
    another claim. Without the run, two runs' claims had one id: a conflict listed both under
    it, and settling one settled the other. Claims made outside a run keep the id they had."""
    parts: list[Any] = [subject, predicate, by, value, based_on]
    if run_id:
        parts.append(run_id)
    return "cl-" + hashlib.sha256(canonical(parts).encode()).hexdigest()[:16]


def made_by(records: list[Recorded], call: str) -> ClaimAsserted | None:
    for rec in records:
        if isinstance(rec.event, ClaimAsserted) and rec.event.call == call:
            return rec.event
    return None


class Settled(NamedTuple):
    """What `Claims.settled` is asked: the decisions on a fact after a journal position, by the
    claim each settled; with `claims`, those claims' alone."""

    subject: str
    predicate: str
    after: int = 0
    claims: Collection[str] | None = None


def gather(
    records: list[Recorded],
    predicate: str,
    wanted: set[str] | None,
    found: dict[str, ClaimsReconciled],
) -> bool:
    """Add a page of the decisions on a subject to `found`, the first to settle each claim of
    `predicate` (of `wanted` alone, unless None); whether every wanted claim is found, after
    which nothing read later can change what was found."""
    for rec in records:
        e = rec.event
        if isinstance(e, ClaimsReconciled) and e.predicate == predicate:
            for claim in (e.winner, *e.losers):
                if wanted is None or claim in wanted:
                    found.setdefault(claim, e)
        if wanted is not None and wanted <= found.keys():
            return True
    return False


class Claims:
    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    @staticmethod
    def stream(subject: str) -> str:
        return f"claims-{subject}"

    def all(self, subject: str) -> list[ClaimAsserted]:
        return [
            r.event
            for r in self.journal.read(self.stream(subject))
            if isinstance(r.event, ClaimAsserted)
        ]

    def claim(
        self,
        subject: str,
        predicate: str,
        value: Any,
        based_on: int,
        by: str,
        source: Literal["state", "verifier", "model"],
        evidence: dict[str, Any] | None = None,
        supersedes: str | None = None,
        run_id: str = "",
        call: str | None = None,
    ) -> ClaimAsserted:
        """The claim, appended. With `call` (the tool call asserting it, `Call.ref`), once per
        call: the same call run again (a resumed step's) is answered the claim its first run
        asserted, whatever it now says it supersedes (that first claim, as often as not, which
        a claim with the same id superseding would take out of the live claims altogether)."""
        event = ClaimAsserted(
            run_id=run_id,
            claim_id=claim_id(subject, predicate, by, value, based_on, run_id),
            subject=subject,
            predicate=predicate,
            value=value,
            based_on=based_on,
            source=source,
            by=by,
            evidence=evidence or {},
            supersedes=supersedes,
            call=call,
        )
        stream = self.stream(subject)
        if supersedes is not None and supersedes == event.claim_id:
            # The same claim asserted again (one agent, run, value and version: one id), as an
            # agent setting a status twice from one version does. Superseding itself would
            # take it out of the live claims altogether; it stands as it was first asserted.
            # Among the run's claims alone: the id names the run (`claim_id`).
            for rec in reversed(read_run_of_kind(self.journal, run_id, stream, event.kind)):
                if isinstance(rec.event, ClaimAsserted) and rec.event.claim_id == supersedes:
                    return rec.event
        if call is None and supersedes is None:
            append_next(self.journal, stream, [event])
            return event
        for attempt in range(RECHECKS + 1):
            # The version first: a claim of the same call landing after it moves it. A claim
            # superseding another is appended with the note of the fact's live claims after it
            # (read here, at that version, when the fact has a note or a short stream), so that
            # a claim superseded again and again is read from its last note, not from every
            # supersession since the fact's last decision.
            read = None if supersedes is None else read_to_note(self.journal, stream, predicate)
            at = self.journal.version(stream) if read is None else read.version
            if call is not None:
                made = self.made_by(subject, call)
                if made is not None:
                    return made
            note = None if read is None else note_claimed(self.journal, stream, read, event)
            try:
                # At the version read: a claim of the same call landing in between is found.
                self.journal.append(stream, [event] if note is None else [event, note], at)
            except WrongExpectedVersion:
                if attempt < RECHECKS:
                    continue
                if call is not None:
                    raise
                # Contended every time: the claim goes in without its note (the note is
                # what makes the read short, not what makes it right).
                append_next(self.journal, stream, [event])
            return event
        raise AssertionError("unreachable: the last attempt returns or raises")

    def made_by(self, subject: str, call: str) -> ClaimAsserted | None:
        """The claim the tool call `call` (`Call.ref`) asserted on the subject, if any: of the
        claims asserted since the call was dispatched (runtime/coordination/calls.py), not the
        subject's whole history, which every run on it adds to."""
        stream = self.stream(subject)
        return made_by(written_since(self.journal, stream, ClaimAsserted.kind, call), call)

    def live(self, subject: str, predicate: str) -> list[ClaimAsserted]:
        """Claims nobody superseded and no decision settled, newest last."""
        return self.live_at(subject, predicate)[0]

    def last_live(self, subject: str, predicate: str, by: str, run_id: str) -> ClaimAsserted | None:
        """The last of `live`'s claims that `by` asserted in run `run_id` (what an agent's next
        claim supersedes), read from the run's own claims and the decisions since the first of
        them, not the subject's whole stream, which every run on it adds to and which `live`
        read at every status change.

        The same answer, because of who writes what: a claim supersedes only a claim of its own
        run (the desk supersedes the agent's last claim in its run, found here), and a claim's
        id names its run (`claim_id`), so whether one of the run's claims was superseded is
        in the run's claims alone; a decision names only claims asserted before it (the live
        claims a rule decided between, or a parked conflict's), so those that settled one of
        them come after the first of them."""
        stream = self.stream(subject)
        own = [  # (position, claim) of the run's claims on the fact, in order
            (r.position, r.event)
            for r in read_run_of_kind(self.journal, run_id, stream, ClaimAsserted.kind)
            if isinstance(r.event, ClaimAsserted) and r.event.predicate == predicate
        ]
        superseded = {c.supersedes for _, c in own if c.supersedes}
        mine = [c for _, c in own if c.by == by and c.claim_id not in superseded]
        if not mine:
            return None
        ids = {c.claim_id for c in mine}
        first = next(at for at, c in own if c.claim_id in ids)
        settled = self.settled(subject, predicate, first - 1, ids)
        live = [c for c in mine if c.claim_id not in settled]
        return live[-1] if live else None

    def live_at(self, subject: str, predicate: str) -> tuple[list[ClaimAsserted], int]:
        """The live claims (as `live`) and the claims stream's version they were read at: a
        decision taken on them is appended at that version (`reconcile`). Read from the fact's
        last note of its live claims on (runtime/coordination/noted.py), not the subject's
        whole stream, where the reconciler has noted them."""
        read = read_live(self.journal, self.stream(subject), predicate)
        return [claim(r) for r in read.claims], read.version

    def noted_after(
        self, subject: str, predicate: str, decided: set[str], run_id: str, at: int
    ) -> LiveClaimsNoted | None:
        """The note of the fact's live claims after a decision on `decided` appended at the
        claims stream's version `at` (a person's ruling: services/review.py), to go in the
        same append; None when the stream has moved from `at` (that append is refused anyway)
        or the live claims are more than a note lists."""
        read = read_live(self.journal, self.stream(subject), predicate)
        if read.version != at:
            return None
        return note_after(read, subject, predicate, decided, run_id)

    def settled(
        self,
        subject: str,
        predicate: str,
        after: int = 0,
        claims: Collection[str] | None = None,
    ) -> dict[str, ClaimsReconciled]:
        """The decisions on the fact recorded after journal position `after`, by the claim
        each settled (the first to settle it); with `claims`, those claims' alone. The stream
        is the subject's, shared by every run on it, so a conflict parked at `after` learns
        here which of its claims a ruling on another conflict decided since: its own record of
        them does not change.

        Only the decisions after `after` are read, asked of the journal by kind (a database
        seeks them by an index): not the claims, nor what was decided before. With `claims`,
        reading stops at the decision that settled the last of them: what comes after cannot
        change what was found. A page of conflict cards then costs what was decided since each
        was parked, not the subject's whole history."""
        return self.settled_each([Settled(subject, predicate, after, claims)])[0]

    def settled_each(self, asks: Sequence[Settled]) -> list[dict[str, ClaimsReconciled]]:
        """`settled` of each ask, read together: each round reads the next page of every ask
        still going in one read of the journal where it can (runtime/page_reads.py), so a
        page of conflict cards costs a read or two, not one a card."""
        found: list[dict[str, ClaimsReconciled]] = [{} for _ in asks]
        wanted = [None if a.claims is None else set(a.claims) for a in asks]
        # A journal that reads by kind reads a page at a time; one that would read the whole
        # stream for every page (a file, a list) reads it once.
        first: int | None = FIRST_PAGE if isinstance(self.journal, SeekingJournal) else None
        # (the ask, the position its next page is read after, the page's size)
        going = [(n, a.after, first) for n, a in enumerate(asks) if wanted[n] != set()]
        while going:
            seeks = [(self.stream(asks[n].subject), after, page) for n, after, page in going]
            pages = read_of_kinds(self.journal, ClaimsReconciled.kind, seeks)
            more: list[tuple[int, int, int | None]] = []
            for (n, _, page), records in zip(going, pages, strict=True):
                done = gather(records, asks[n].predicate, wanted[n], found[n])
                if not done and page is not None and len(records) == page:
                    more.append((n, records[-1].position, min(page * 2, LAST_PAGE)))
            going = more
        return found

    def settle(
        self,
        subject: str,
        predicate: str,
        winner: str,
        losers: list[str],
        rule: str,
        value: Any,
        run_id: str = "",
        expected: int | None = None,
        note: LiveClaimsNoted | None = None,
    ) -> None:
        """Record a decision between claims: the winner and the losers stop being live (and
        stay in the record). With `expected`, only while the claims stream is at that version
        (WrongExpectedVersion otherwise): a decision taken on what the stream held when it was
        read, which another decision since may have changed. With `note`, the fact's live
        claims after it, in the same append."""
        decided = ClaimsReconciled(
            run_id=run_id,
            subject=subject,
            predicate=predicate,
            winner=winner,
            losers=losers,
            rule=rule,
            value=value,
        )
        events: list[Event] = [decided] if note is None else [decided, note]
        if expected is None:
            append_next(self.journal, self.stream(subject), events)
        else:
            self.journal.append(self.stream(subject), events, expected)

    def conflicts(self, subject: str, predicate: str) -> list[tuple[ClaimAsserted, ClaimAsserted]]:
        """Pairs of live claims from the same version that disagree."""
        return disagreeing(self.live(subject, predicate))

    def reconcile(
        self,
        subject: str,
        predicate: str,
        rules: Rules,
        run_id: str = "",
        commit: dict[str, Any] | None = None,
    ) -> Outcome:
        """Decide by rule when a rule decides; otherwise park the conflict for a person
        (`commit` tells the review queue where a chosen value goes).

        A rule's decision is appended at the claims stream's version the live claims were read
        at. A person's ruling on another conflict over the same claims (the subject's stream
        is shared by its runs), or a new claim, may land in between: appended at any version,
        the decision then named a claim the ruling rejected as the winner, and the claim lost
        and then won. Instead the stream having moved means reading the claims again. So too
        before parking: a conflict whose claims a ruling settled meanwhile would wait in the
        queue for a person only to be refused when ruled on."""
        for attempt in range(RECHECKS + 1):
            read = read_live(self.journal, self.stream(subject), predicate)
            live, at = [claim(r) for r in read.claims], read.version
            if not live:
                return Outcome("nothing")
            pairs = disagreeing(live)
            if not pairs:
                return Outcome("agreed", live[-1].value)
            contenders = {c.claim_id: c for pair in pairs for c in pair}
            ordered = [c for c in live if c.claim_id in contenders]  # in journal order
            _, decision = resolve(ordered, rules)
            if decision is None:
                if attempt < RECHECKS and self.journal.version(self.stream(subject)) != at:
                    continue  # decided or claimed meanwhile: what is left to park may differ
                return self.park(subject, predicate, ordered, run_id, commit)
            first = decision.winner
            losers = [c.claim_id for c in ordered if c.claim_id != first.claim_id]
            try:
                self.settle(
                    subject,
                    predicate,
                    first.claim_id,
                    losers,
                    decision.rule,
                    first.value,
                    run_id,
                    expected=at,
                    note=note_after(read, subject, predicate, {first.claim_id, *losers}, run_id),
                )
            except WrongExpectedVersion:
                if attempt == RECHECKS:
                    raise
                continue
            return Outcome("decided", first.value, decision.rule, decided=tuple(ordered))
        raise AssertionError("unreachable: the last attempt returns or raises")

    def park(
        self,
        subject: str,
        predicate: str,
        claims: list[ClaimAsserted],
        run_id: str,
        commit: dict[str, Any] | None = None,
    ) -> Outcome:
        """Put the conflict in the review queue (stream `conflict-<id>`), once per set of claims."""
        ids = sorted(c.claim_id for c in claims)
        conflict_id = (
            "cf-" + hashlib.sha256(canonical([subject, predicate, ids]).encode()).hexdigest()[:16]
        )
        parked = ConflictParked(
            run_id=run_id,
            conflict_id=conflict_id,
            subject=subject,
            predicate=predicate,
            conflict_type=conflict_type(claims),
            claims=[
                {
                    "claim_id": c.claim_id,
                    "value": c.value,
                    "agent": c.by,
                    "run_id": c.run_id,
                    "based_on": c.based_on,
                    "source": c.source,
                    "evidence": c.evidence,
                }
                for c in claims
            ],
            commit=commit,
        )
        stream = f"conflict-{conflict_id}"
        if self.journal.version(stream) == 0:
            # Another step may park these same claims meanwhile: once is what counts.
            with suppress(WrongExpectedVersion):
                self.journal.append(stream, [parked], 0)
        return Outcome("parked", None, "HUMAN_REQUIRED: no rule decides", conflict_id)


def disagreeing(live: list[ClaimAsserted]) -> list[tuple[ClaimAsserted, ClaimAsserted]]:
    """Pairs of the live claims, from the same version, that disagree."""
    return [
        (a, b)
        for i, a in enumerate(live)
        for b in live[i + 1 :]
        if a.based_on == b.based_on and canonical(a.value) != canonical(b.value)
    ]


def conflict_type(claims: list[ClaimAsserted]) -> ConflictType:
    """What kind of disagreement this is (runtime/coordination/conflicts.py), for the policy
    that settles it and for the reviewer who gets what no policy settles."""
    return classify(claims)
