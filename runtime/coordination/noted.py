"""A fact's live claims, read from its last note (LiveClaimsNoted) on, not from the subject's
whole claims stream, which every run on the subject adds to.

A claim stays live until a later claim supersedes it or a decision (ClaimsReconciled) names it,
and a decision names only the claims it chose between: nothing in the stream said "what came
before is settled". The reconciler now says it: with each decision it appends, in the same
append at the same expected version, a note of the fact's claims live after it (their ids and
versions, at most MAX_NOTED of them; a fact with more gets no note). Reading the live claims
is then the stream's last note of the fact, the claims it lists (by their versions), and the
claims and decisions on the fact since it (by kind, which a database seeks by an index).

The same answer as the whole read, because of who writes what: a decision names only claims
asserted before it and a claim supersedes only one asserted before it (Claims.last_live), so
every claim the stream had settled by the note was asserted before it and is not among the
note's. A claim asserted after the note under the id of such a claim (the same run, agent,
value and version: `claim_id`) is as settled as the first was, and is found so among its run's
own claims before the note. A stream with no note of the fact (written before notes, or
whose live claims were too many) is read whole, as it always was.
"""

from __future__ import annotations

from dataclasses import dataclass

from runtime.events import ClaimAsserted, ClaimsReconciled, LiveClaimsNoted
from runtime.events.coordination import MAX_NOTED
from runtime.fenced import claims_index
from runtime.journal import (
    Journal,
    Recorded,
    last_of_kind,
    read_at_versions,
    read_between,
    read_of_kind,
    read_run_of_kind,
)

EVER = 2**62  # a journal position past any the stream will reach: every claim before it
# The longest claims stream a superseding claim reads whole to note a fact never noted: after
# that first note it reads from the note, as the reconciler does (read_to_note).
SHORT = 2 * MAX_NOTED


@dataclass(frozen=True)
class LiveRead:
    """The live claims of a fact, as read."""

    claims: list[Recorded]  # their records, in journal order
    version: int  # the claims stream's version they were read at
    last_note: Recorded | None  # the stream's last note of any fact: what a new note carries on


def notes(journal: Journal, stream: str, predicate: str) -> tuple[Recorded | None, Recorded | None]:
    """The stream's last note of any fact, and the last note of this one (or None): the last
    note is this fact's, or names the version of this fact's last (`others`)."""
    last = last_of_kind(journal, stream, LiveClaimsNoted.kind)
    if last is None or not isinstance(last.event, LiveClaimsNoted):
        return None, None
    if last.event.predicate == predicate:
        return last, last
    at = last.event.others.get(predicate)
    if at is None:
        return last, None
    found = read_between(journal, stream, at - 1, at)
    noted = found[0].event if found else None
    if isinstance(noted, LiveClaimsNoted) and noted.predicate == predicate:
        return last, found[0]
    return last, None


def read_whole(journal: Journal, stream: str, predicate: str, last: Recorded | None) -> LiveRead:
    claims: list[Recorded] = []
    settled: set[str] = set()
    version = 0
    for rec in journal.read(stream):
        e, version = rec.event, rec.version
        if isinstance(e, ClaimAsserted) and e.predicate == predicate:
            claims.append(rec)
            if e.supersedes:
                settled.add(e.supersedes)
        elif isinstance(e, ClaimsReconciled) and e.predicate == predicate:
            settled.update([e.winner, *e.losers])
    return LiveRead([r for r in claims if claim(r).claim_id not in settled], version, last)


def read_live(journal: Journal, stream: str, predicate: str) -> LiveRead:
    """The fact's live claims from its last note on; the whole stream when it has none."""
    read = read_live_within(journal, stream, predicate, None)
    assert read is not None  # with no bound, always read
    return read


def read_to_note(journal: Journal, stream: str, predicate: str) -> LiveRead | None:
    """The fact's live claims, for the note a claim superseding another appends with it: read
    from the fact's last note, or whole while the stream is at most SHORT records long. None
    when the fact has no note and its stream is longer: a status change on a subject that
    many runs claimed would read them all, where it appended its claim and read nothing."""
    return read_live_within(journal, stream, predicate, SHORT)


def read_live_within(
    journal: Journal, stream: str, predicate: str, whole_at_most: int | None
) -> LiveRead | None:
    last, note = notes(journal, stream, predicate)
    # After the note: every record at or below it is there, and nothing read below is past it.
    version = journal.version(stream)
    if note is None and whole_at_most is not None and version > whole_at_most:
        return None
    if note is None or not isinstance(note.event, LiveClaimsNoted):
        return read_whole(journal, stream, predicate, last)
    noted = read_at_versions(journal, stream, note.event.at)
    if [(r.event.kind, getattr(r.event, "claim_id", None)) for r in noted] != [
        (ClaimAsserted.kind, c) for c in note.event.live
    ] or any(claim(r).predicate != predicate for r in noted):
        # A note that does not say what the stream holds is not read from.
        return read_whole(journal, stream, predicate, last)
    since = [
        r
        for r in read_of_kind(journal, stream, ClaimAsserted.kind, note.position)
        if r.version <= version and claim(r).predicate == predicate
    ]
    settled = {c.supersedes for c in map(claim, since) if c.supersedes}
    for rec in read_of_kind(journal, stream, ClaimsReconciled.kind, note.position):
        e = rec.event
        if rec.version <= version and isinstance(e, ClaimsReconciled) and e.predicate == predicate:
            settled.update([e.winner, *e.losers])
    listed = set(note.event.live)
    settled |= asserted_before(journal, stream, note.position, [claim(r) for r in since], listed)
    live = [r for r in [*noted, *since] if claim(r).claim_id not in settled]
    return LiveRead(live, version, last)


def asserted_before(
    journal: Journal,
    stream: str,
    position: int | None,
    claims: list[ClaimAsserted],
    listed: set[str],
) -> set[str]:
    """The ids of these claims, not among the note's, that a claim before the note (journal
    `position`; None: any claim the stream holds) already had: settled then, since not live at
    the note. Asked of the claims' id index where the journal has one (a ClaimsJournal, or a
    fenced writer's over one: runtime/fenced.py), else
    looked for among each run's own claims (a claim's id names its run), not the stream's."""
    wanted: dict[str, set[str]] = {}
    for c in claims:
        if c.claim_id not in listed:
            wanted.setdefault(c.run_id, set()).add(c.claim_id)
    if not wanted:
        return set()
    if (indexed := claims_index(journal)) is not None:
        ids = sorted(set().union(*wanted.values()))
        named = indexed.claims_named(stream, ids, EVER if position is None else position)
        return {claim(rec).claim_id for rec in named}
    found: set[str] = set()
    for run_id, ids_of_run in wanted.items():
        for rec in read_run_of_kind(journal, run_id, stream, ClaimAsserted.kind):
            if (position is None or rec.position < position) and claim(rec).claim_id in ids_of_run:
                found.add(claim(rec).claim_id)
    return found


def note_after(
    read: LiveRead, subject: str, predicate: str, decided: set[str], run_id: str
) -> LiveClaimsNoted | None:
    """The note to append after a decision on `decided` taken on `read` (the decision lands at
    read.version + 1): the claims still live, or None when they are more than a note lists."""
    live = [(claim(r).claim_id, r.version) for r in read.claims if claim(r).claim_id not in decided]
    return note_of(read, subject, predicate, live, run_id)


def note_claimed(
    journal: Journal, stream: str, read: LiveRead, made: ClaimAsserted
) -> LiveClaimsNoted | None:
    """The note to append after the claim `made`, asserted on `read` (it lands at read.version
    + 1): read's claims but the one it supersedes, and itself unless it is settled as it lands.
    It is when it supersedes itself, or when a claim under its id (the same run, agent, value
    and version) was asserted before and is not live: settled then, as the whole read says."""
    live = [
        (claim(r).claim_id, r.version) for r in read.claims if claim(r).claim_id != made.supersedes
    ]
    if made.claim_id != made.supersedes and (
        made.claim_id in {claim(r).claim_id for r in read.claims}
        or not asserted_before(journal, stream, None, [made], set())
    ):
        live.append((made.claim_id, read.version + 1))
    return note_of(read, made.subject, made.predicate, live, made.run_id)


def note_of(
    read: LiveRead, subject: str, predicate: str, live: list[tuple[str, int]], run_id: str
) -> LiveClaimsNoted | None:
    """The note of the fact's live claims (id and version, in order) after the event appended
    at read.version + 1 with it; None when they are more than a note lists."""
    if len(live) > MAX_NOTED:
        return None
    others: dict[str, int] = {}
    last = read.last_note
    if last is not None and isinstance(last.event, LiveClaimsNoted):
        others = dict(last.event.others)
        others[last.event.predicate] = last.version
    others.pop(predicate, None)
    if len(others) > MAX_NOTED:  # the facts noted longest ago are read whole again, until noted
        others = dict(sorted(others.items(), key=lambda kv: kv[1])[-MAX_NOTED:])
    return LiveClaimsNoted(
        run_id=run_id,
        subject=subject,
        predicate=predicate,
        live=[i for i, _ in live],
        at=[v for _, v in live],
        through=read.version + 1,
        others=others,
    )


def claim(rec: Recorded) -> ClaimAsserted:
    assert isinstance(rec.event, ClaimAsserted), rec.event.kind
    return rec.event
