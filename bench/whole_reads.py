"""What the reads that took a whole stream, or the whole store, cost now, at 100 and 20,000
events (issue #15: no cost may grow with a run's length or a store's size).

    records_of        what a fork reads of its parent (runtime/fork.py), a run of 60 events
                      in its own streams, beside --sizes records of other runs in `worker-`,
                      `saga-` and `lease-` streams (10 a run)
    declare           a person's new version of an intent with --sizes versions declared
    current           the intent's current version
    history page      services.intents.page: GET /api/intents/{id}'s first page (100)
    live_at           the reconciler's read of a subject's live claims, --sizes claims of
                      other runs on it, each pair decided between (its ClaimsReconciled and
                      LiveClaimsNoted), the last pair by the reconciler itself, then three
                      claims since
    live_at after a ruling
                      the same read on a subject whose --sizes claims are pairs of other runs
                      a person ruled between (ClaimsReconciled alone, as rulings were written
                      before 2026-12-06: no note), then one conflict parked and ruled on
                      through services.review (its note)
    live_at after supersessions
                      the same read on a subject of --sizes claims: a pair the reconciler
                      decided, then one run's claim superseded again and again, each with its
                      note; "(no notes)" the same read of the same history without the
                      supersessions' notes (as claims were written before)
    park's claims     the desk reconciler's reads when the gate refuses its commit
                      (teams/desk/harness.py), on live_at's subject: the live claims (those the
                      rule decided between, the evidence's and the fallback's, are in hand);
                      "(before)" the live claims, and every claim ever made about the order
                      twice (the gate's evidence, and the claims to park when none is live)

Each beside the same read as it was before 2026-12-06 (every such stream of every run read
and picked out in Python; the intent's and the claims' streams read whole: "(before)"), in the
same process, with the journal rows each turns into records. The other runs' records are added
as the sizes go up (a store that grows), the intents' and claims' streams are one per size;
medians of --repeats rounds, and the ratio of the largest size's figure to the smallest's.
Production settings (DEBUG off); SQLite by default (WAL, synchronous=FULL, a file in a temp
dir), --postgres for a private PostgreSQL cluster with fsync on, VACUUM ANALYZEd after each
load.

    PYTHONPATH=. .venv/bin/python bench/whole_reads.py [--sizes 100,20000] [--postgres]
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for bench and tests.services, run as a script

from bench.production_env import setup  # noqa: E402
from bench.streams_setup import (  # noqa: E402
    caption,
    head,
    like_prefix,
    line,
    parser,
    settle,
    sizes_of,
    timed,
)

ARGS = parser(__doc__, "100,20000", "records, ascending").parse_args()
SIZES = sorted(sizes_of(ARGS.sizes))
setup("whole-reads", ARGS.postgres)

from django.core.management import call_command  # noqa: E402

from journal_store.journal import DjangoJournal  # noqa: E402
from runtime import fork, streams  # noqa: E402
from runtime.coordination.claims import Claims, Rules  # noqa: E402
from runtime.coordination.claims import claim_id as made_id  # noqa: E402
from runtime.coordination.gates import TASK, Intents  # noqa: E402
from runtime.coordination.noted import read_whole  # noqa: E402
from runtime.events import (  # noqa: E402
    ClaimAsserted,
    ClaimsReconciled,
    Event,
    IntentDeclared,
    LeaseGranted,
    LiveClaimsNoted,
    SagaStepCompleted,
    TeamStarted,
    ToolDispatched,
)
from runtime.journal import Batch, Recorded  # noqa: E402
from services import intents as service  # noqa: E402
from services import review  # noqa: E402

RUN = "r-forked"


def own(run: str, stream: str) -> Event:
    if stream.startswith("saga-"):
        return SagaStepCompleted(run_id=run, saga_id=f"refund-{run}", step="s", key="k")
    if stream.startswith("lease-"):
        return LeaseGranted(run_id=run, resource=stream[6:], holder="h", expires=1.0)
    return ToolDispatched(run_id=run, tool="t", args={})


def run_streams(run: str, each: int) -> list[Batch]:
    """A run's `worker-`, `saga-` and `lease-` streams, `each` records apiece."""
    names = (
        streams.worker(run, "S1", "w1"),
        f"saga-{streams.saga_id('refund', run)}",
        "lease-" + streams.resource(run, "fix", "T1"),
    )
    return [(name, [own(run, name) for _ in range(each)], 0) for name in names]


def seed_run(journal: DjangoJournal) -> None:
    """The run a fork is made of: its journal (a TeamStarted and 29 calls), and 10 records in
    each of its worker, saga and lease streams."""
    started = TeamStarted(run_id=RUN, team="repo-fix", scenario="s", task="t")
    calls = [ToolDispatched(run_id=RUN, tool="t", args={}) for _ in range(29)]
    journal.append_batches([(streams.journal(RUN), [started, *calls], 0), *run_streams(RUN, 10)])


def grow_others(journal: DjangoJournal, have: int, want: int) -> None:
    """Other runs' records in such streams, 10 a run (4, 3 and 3), up to `want`."""
    runs = [f"r-other{n:05d}" for n in range(have // 10, want // 10)]
    for start in range(0, len(runs), 50):
        batches: list[Batch] = []
        for run in runs[start : start + 50]:
            worker, saga, lease = run_streams(run, 3)
            batches += [(worker[0], [*worker[1], own(run, worker[0])], 0), saga, lease]
        journal.append_batches(batches)


def seed_streams(journal: DjangoJournal, size: int) -> None:
    """An intent with `size` versions declared; a subject with `size` claims of other runs."""
    intent = f"ticket-long-{size}"
    versions = [
        IntentDeclared(intent_id=intent, intent_version=n, statement=f"v{n}", by="p")
        for n in range(1, size + 1)
    ]
    subject = f"order:o-long-{size}"
    stream = Claims.stream(subject)
    older = claim(subject, "r-older", "refunded", 0, "order-agent")
    claims: list[Event] = [older]
    for n in range(size // 2 - 1):  # a pair that disagrees, decided, as the reconciler writes
        pair, decided = decided_pair(subject, n, "authority")
        noted = LiveClaimsNoted(
            subject=subject,
            predicate="status",
            live=[older.claim_id],
            at=[1],
            through=len(claims) + 3,
            others={},
        )
        claims += [*pair, decided, noted]
    for stream_name, events in ((Intents.stream(intent), versions), (stream, claims)):
        in_thousands(journal, stream_name, events)
    # The last pair decided by the reconciler itself, then three claims since its note.
    last = [
        claim(subject, "r-last", "refunded", size, "support-agent"),
        claim(subject, "r-last", "cancelled", size, "order-agent"),
    ]
    journal.append(stream, last, journal.version(stream))
    assert Claims(journal).reconcile(subject, "status", RULES).status == "decided"
    since = [claim(subject, f"r-since{n}", "cancelled", 0, "order-agent") for n in range(3)]
    journal.append(stream, since, journal.version(stream))
    assert Claims(journal).live_at(subject, "status") == live_whole(journal, subject)


RULES = Rules(authority={"status": {"order-agent": 2, "support-agent": 1}})
NO_RULE = Rules()  # nobody outranks anybody: a person rules


def decided_pair(subject: str, n: int, rule: str) -> tuple[list[ClaimAsserted], ClaimsReconciled]:
    """The `n`th pair of claims that disagree (a run's support agent and its order agent), and
    the decision for the order agent's by `rule`."""
    run = f"r-c{n // 5}"
    pair = [
        claim(subject, run, "refunded", n + 1, "support-agent"),
        claim(subject, run, "cancelled", n + 1, "order-agent"),
    ]
    decided = ClaimsReconciled(
        subject=subject,
        predicate="status",
        winner=pair[1].claim_id,
        losers=[pair[0].claim_id],
        rule=rule,
        value="cancelled",
    )
    return pair, decided


def in_thousands(journal: DjangoJournal, stream: str, events: Sequence[Event]) -> None:
    for start in range(0, len(events), 1_000):
        journal.append(stream, events[start : start + 1_000], journal.version(stream))


def seed_ruled(journal: DjangoJournal, size: int) -> None:
    """A subject whose claims are pairs a person ruled between (no note, as before), then one
    conflict parked and ruled on through the review service, which notes the live claims."""
    subject = f"order:o-ruled-{size}"
    stream = Claims.stream(subject)
    events: list[Event] = [claim(subject, "r-older", "refunded", 0, "order-agent")]
    for n in range(size // 3 - 1):
        pair, ruled = decided_pair(subject, n, "reviewer ann: she asked")
        events += [*pair, ruled]
    in_thousands(journal, stream, events)
    claims = Claims(journal)
    chosen = claims.claim(subject, "status", "cancelled", size, "a", "model", run_id="r-ruled")
    claims.claim(subject, "status", "refunded", size, "b", "model", run_id="r-ruled")
    outcome = claims.reconcile(subject, "status", NO_RULE, run_id="r-ruled")
    assert outcome.status == "parked" and outcome.conflict_id
    review.resolve(outcome.conflict_id, chosen.claim_id, "ann", "she asked first")
    assert isinstance(journal.read(stream)[-1].event, LiveClaimsNoted)
    assert Claims(journal).live_at(subject, "status") == live_whole(journal, subject)


def seed_superseded(journal: DjangoJournal, size: int, noted: bool) -> None:
    """A subject of `size` claims: a pair the reconciler decided (its note), then one run's
    claim superseded again and again, each with its note of the two live claims (the older
    one and itself), as Claims.claim writes them; without those notes when not `noted`."""
    subject = f"order:o-superseded-{size}{'' if noted else '-before'}"
    stream = Claims.stream(subject)
    older = claim(subject, "r-older", "refunded", 0, "order-agent")
    pair = [
        claim(subject, "r-pair", "refunded", 1, "support-agent"),
        claim(subject, "r-pair", "cancelled", 1, "order-agent"),
    ]
    journal.append(stream, [older, *pair], 0)
    assert Claims(journal).reconcile(subject, "status", RULES).status == "decided"
    events: list[Event] = []
    last: str | None = None
    at = journal.version(stream)
    for n in range(size - 5):
        value = f"v{n}"
        made = ClaimAsserted(
            run_id="r-mind",
            claim_id=made_id(subject, "status", "support-agent", value, 2, "r-mind"),
            subject=subject,
            predicate="status",
            value=value,
            based_on=2,
            source="model",
            by="support-agent",
            supersedes=last,
        )
        events.append(made)
        at += 1
        last = made.claim_id
        if noted and n > 0:  # the first supersedes nothing: no note with it
            events.append(
                LiveClaimsNoted(
                    run_id="r-mind",
                    subject=subject,
                    predicate="status",
                    live=[older.claim_id, made.claim_id],
                    at=[1, at],
                    through=at,
                    others={},
                )
            )
            at += 1
    in_thousands(journal, stream, events)
    assert Claims(journal).live_at(subject, "status") == live_whole(journal, subject)


def claim(subject: str, run: str, value: str, based_on: int, by: str) -> ClaimAsserted:
    return ClaimAsserted(
        run_id=run,
        claim_id=f"cl-{subject}-{run}-{by}-{based_on}",
        subject=subject,
        predicate="status",
        value=value,
        based_on=based_on,
        source="model",
        by=by,
    )


def live_whole(journal: DjangoJournal, subject: str) -> tuple[list[ClaimAsserted], int]:
    """Claims.live_at as it was before 2026-12-06: the subject's whole claims stream."""
    read = read_whole(journal, Claims.stream(subject), "status", None)
    return [r.event for r in read.claims if isinstance(r.event, ClaimAsserted)], read.version


def records_before(journal: DjangoJournal, run_id: str) -> list[Recorded]:
    """fork.records_of as it was before 2026-12-06: every `worker-` and `saga-` stream of
    every run, and every lease on the run's resources, read by prefix and picked out; each
    prefix read by the LIKE read_prefix was then (like_prefix), where read_prefix is now a
    range of names in byte order, a seek of an index."""
    found: list[Recorded] = list(journal.read(Intents.stream(TASK + run_id)))
    found += journal.read(streams.journal(run_id)) + journal.read(streams.breakers(run_id))
    for prefix in ("worker-", "saga-"):
        found += [r for r in like_prefix(journal, prefix) if streams.owned_by(r.stream, run_id)]
    found += like_prefix(journal, "lease-" + streams.resource(run_id, ""))
    return sorted(found, key=lambda r: r.position)


def main() -> None:
    call_command("migrate", verbosity=0)
    journal = DjangoJournal()
    seed_run(journal)
    expected = [(r.stream, r.position) for r in fork.records_of(journal, RUN)]
    assert len(expected) == 60, len(expected)

    def records(size: int) -> None:
        assert len(fork.records_of(journal, RUN)) == 60

    def records_whole(size: int) -> None:
        assert len(records_before(journal, RUN)) == 60

    def declare(size: int) -> None:
        Intents(journal).declare(f"ticket-long-{size}", "now this", "ana", "bench")

    def declare_before(size: int) -> None:
        """Intents.declare as it was: the stream read whole, the next version appended."""
        intent = f"ticket-long-{size}"
        history, at = Intents(journal).read(intent)
        event = IntentDeclared(
            intent_id=intent,
            intent_version=history[-1].intent_version + 1,
            statement="now this",
            by="ana",
        )
        journal.append(Intents.stream(intent), [event], at)

    def current(size: int) -> None:
        assert Intents(journal).current(f"ticket-long-{size}").version >= size

    def current_before(size: int) -> None:
        assert Intents(journal).history(f"ticket-long-{size}")[-1].intent_version >= size

    def page(size: int) -> None:
        assert len(service.page(f"ticket-long-{size}", 0, 100)[1]) == 100

    def page_before(size: int) -> None:
        assert len(Intents(journal).history(f"ticket-long-{size}")) >= size

    def live_at(size: int) -> None:
        assert len(Claims(journal).live_at(f"order:o-long-{size}", "status")[0]) == 4

    def live_at_before(size: int) -> None:
        assert len(live_whole(journal, f"order:o-long-{size}")[0]) == 4

    def ruled(size: int) -> None:
        assert len(Claims(journal).live_at(f"order:o-ruled-{size}", "status")[0]) == 1

    def ruled_before(size: int) -> None:
        """After a ruling that wrote no note, on a subject no rule decided on: the whole read."""
        assert len(live_whole(journal, f"order:o-ruled-{size}")[0]) == 1

    def superseded(size: int) -> None:
        assert len(Claims(journal).live_at(f"order:o-superseded-{size}", "status")[0]) == 2

    def superseded_before(size: int) -> None:
        subject = f"order:o-superseded-{size}-before"
        assert len(Claims(journal).live_at(subject, "status")[0]) == 2

    def parked(size: int) -> None:
        """The desk's reads when the gate refuses its commit: the live claims (the ones the rule
        decided between, and the gate's evidence among them, are in hand)."""
        assert len(Claims(journal).live(f"order:o-long-{size}", "status")) == 4

    def parked_before(size: int) -> None:
        """As they were, where no claim is live after the decision: the live claims, then every
        claim about the order for the gate's evidence and again for the claims to park."""
        about = f"order:o-long-{size}"
        claims = Claims(journal)
        assert [c for c in claims.all(about) if c.value == "cancelled"]
        assert len(claims.live(about, "status")) == 4 and len(claims.all(about)) >= size

    staged: dict[str, Callable[[int], Any]] = {
        "records_of": records,
        "records_of (before)": records_whole,
    }
    in_turns: dict[str, Callable[[int], Any]] = {
        "declare": declare,
        "declare (before)": declare_before,
        "current": current,
        "current (before)": current_before,
        "history page of 100": page,
        "history, every version (before)": page_before,
        "live_at": live_at,
        "live_at, the whole stream (before)": live_at_before,
        "live_at after a ruling": ruled,
        "live_at after a ruling (before)": ruled_before,
        "live_at after supersessions": superseded,
        "live_at after supersessions (no notes)": superseded_before,
        "park's claims": parked,
        "park's claims (before)": parked_before,
    }
    medians: dict[str, dict[int, float]] = {name: {} for name in [*staged, *in_turns]}
    rows: dict[str, dict[int, int]] = {name: {} for name in medians}

    def measure(works: dict[str, Callable[[int], Any]], sizes: list[int]) -> None:
        for name, work in works.items():
            found, counted = timed(work, sizes, ARGS.repeats)
            medians[name].update(found)
            rows[name].update(counted)

    # The other runs' records are the store's: grown between the sizes, records_of measured
    # at each. The intents' and claims' streams are one per size, measured in turns.
    have = 0
    for size in SIZES:
        started = time.perf_counter()
        grow_others(journal, have, size)
        have = size
        seed_streams(journal, size)
        seed_ruled(journal, size)
        seed_superseded(journal, size, True)
        seed_superseded(journal, size, False)
        settle()
        print(f"grew to {size:,} other runs' records, and streams of {size:,} in", end=" ")
        print(f"{time.perf_counter() - started:.1f} s")
        assert [(r.stream, r.position) for r in fork.records_of(journal, RUN)] == expected
        assert [(r.stream, r.position) for r in records_before(journal, RUN)] == expected
        measure(staged, [size])
    measure(in_turns, SIZES)
    caption(ARGS.repeats)
    head("records", SIZES, 36)
    for name in medians:
        line(name, medians[name], rows[name], 36)


if __name__ == "__main__":
    main()
