"""What a tool call's checks cost as the gate's log and a subject's claims stream grow, at 100
and 20,000 events.

A tool that knows its call asks, on every run of it, whether the call was refused at the gate
already (MutationGate.refused_before, and `once` inside every `check`), and the desk's status
change whether the call made its claim already (Claims.made_by). The gate's log (gate-<run>)
grows with the run's refused calls; the subject's claims stream with every run on the order.

    refused_before    the gate's answer for a call dispatched after --sizes refusals of other
                      calls in its log (none of them its own)
    made_by           the claims stream's answer for a call dispatched after --sizes claims of
                      other calls on the subject (none of them its own)
    check             MutationGate.check of a call (nothing refused: its checks pass) over
                      such a log
    last_live         the claim the desk's status change supersedes (Claims.last_live: the
                      agent's last live claim in its run), on a subject with --sizes claims of
                      other runs and two of the run's (the first superseded by the second)
    intent check      the gate's intent check (MutationGate.judge, its other checks passing)
                      of a mutation under an intent with --sizes declared versions
    passed            MutationGate.passed of a call under that intent's version before the
                      latest (the guard: the stream's version that declared it)
    carried intent    the intent check of a run's own intent nobody superseded (its version is
                      the run's IntentCarried), the run's stream --sizes events long

Each beside the same read as it was before 2026-12-06 (the log, the claims stream, the intent's
stream or the run's read whole, what was wanted looked for in Python: "whole stream
(before)"), in the same process; with the journal rows each turns into records.

Medians of --repeats rounds, the sizes taken in turns, and the ratio of the largest size's
figure to the smallest's. Production settings (DEBUG off); SQLite by default (WAL,
synchronous=FULL, a file in a temp dir), --postgres for a private PostgreSQL cluster with
fsync on, ANALYZEd after the load.

    PYTHONPATH=. .venv/bin/python bench/call_checks.py [--sizes 100,20000] [--postgres]
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for bench and tests.services, run as a script

from bench import streams_setup  # noqa: E402
from bench.production_env import setup  # noqa: E402

ARGS = streams_setup.parser(__doc__, "100,20000", "stream lengths", others=True).parse_args()
SIZES = streams_setup.sizes_of(ARGS.sizes)
setup("call-checks", ARGS.postgres)

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from journal_store.journal import DjangoJournal  # noqa: E402
from runtime.coordination.claims import Claims, made_by  # noqa: E402
from runtime.coordination.gates import Intents  # noqa: E402
from runtime.coordination.mutation import (  # noqa: E402
    Authority,
    Evidence,
    Mutation,
    MutationGate,
)
from runtime.events import (  # noqa: E402
    ClaimAsserted,
    IntentCarried,
    IntentDeclared,
    MutationRefused,
    ToolDispatched,
)
from runtime.tools import Call  # noqa: E402

ACTOR = "support-agent"
AUTHORITY = Authority.of({"refund": {ACTOR}})


def refusal(run: str, call: str) -> MutationRefused:
    return MutationRefused(
        run_id=run,
        what=f"{ACTOR} refunding 4999 cents",
        actor=ACTOR,
        capability="refund",
        check="intent",
        reason="superseded with version 2",
        call=call,
    )


def claim(
    run: str, subject: str, call: str | None, n: int, supersedes: str | None = None
) -> ClaimAsserted:
    return ClaimAsserted(
        run_id=run,
        claim_id=f"cl-{run}-{n}",
        subject=subject,
        predicate="status",
        value="refunded",
        based_on=n,
        source="model",
        by=ACTOR,
        call=call,
        supersedes=supersedes,
    )


def seed(journal: DjangoJournal, size: int) -> tuple[str, str, str]:
    """A run of `size` dispatched calls, each refused in its gate log and each with a claim on
    its subject, then one call more, dispatched last: (run, subject, that call's ref)."""
    run, subject = f"r-calls-{size}", f"order:o-calls-{size}"
    dispatched = [ToolDispatched(run_id=run, tool="issue_refund", args={}) for _ in range(size)]
    streams_setup.append(journal, f"run-{run}", dispatched)
    refs = [Call(f"run-{run}", n).ref for n in range(1, size + 1)]
    streams_setup.append(journal, f"gate-{run}", [refusal(run, ref) for ref in refs])
    streams_setup.append(
        journal, Claims.stream(subject), [claim(run, subject, r, n) for n, r in enumerate(refs)]
    )
    streams_setup.append(
        journal, f"run-{run}", [ToolDispatched(run_id=run, tool="issue_refund", args={})]
    )
    return run, subject, Call(f"run-{run}", size + 1).ref


def seed_shared(journal: DjangoJournal, size: int) -> tuple[str, str, str]:
    """A subject with `size` claims of other runs (10 a run), then two of the run's, the second
    superseding the first; an intent with `size` declared versions; a run whose stream is its
    IntentCarried and `size` events more: (the run, the subject, the intent)."""
    run, about, intent = f"r-shared-{size}", f"order:o-shared-{size}", f"ticket-o-shared-{size}"
    stream = Claims.stream(about)
    streams_setup.append(
        journal, stream, [claim(f"r-other-{size}-{n // 10}", about, None, n) for n in range(size)]
    )
    first = claim(run, about, None, 1)
    streams_setup.append(
        journal, stream, [first, claim(run, about, None, 2, supersedes=first.claim_id)]
    )
    declared = [
        IntentDeclared(intent_id=intent, intent_version=n, statement=f"v{n}", by="p", reason="r")
        for n in range(1, size + 1)
    ]
    streams_setup.append(journal, Intents.stream(intent), list(declared))
    carried = f"r-carried-{size}"
    task = IntentCarried(run_id=carried, intent_id=f"task-{carried}", intent_version=1)
    dispatched = [ToolDispatched(run_id=carried, tool="t", args={}) for _ in range(size)]
    streams_setup.append(journal, f"run-{carried}", [task, *dispatched])
    return run, about, intent


def history_before(journal: DjangoJournal, intent_id: str) -> list[IntentDeclared]:
    """Intents.history as the checks read it before 2026-12-06: the intent's stream whole, and
    for a run's own intent the run's stream whole."""
    declared = [
        r.event
        for r in journal.read(Intents.stream(intent_id))
        if isinstance(r.event, IntentDeclared)
    ]
    if intent_id.startswith("task-"):
        run = intent_id.removeprefix("task-")
        for r in journal.read(f"run-{run}"):
            if isinstance(r.event, IntentCarried) and r.event.intent_id == intent_id:
                carried = IntentDeclared(
                    intent_id=intent_id, intent_version=1, statement="", by="harness"
                )
                return [carried, *declared]
    return declared


def main() -> None:
    call_command("migrate", verbosity=0)
    journal = DjangoJournal()
    seeded: dict[int, tuple[str, str, str]] = {}
    shared: dict[int, tuple[str, str, str]] = {}
    for size in SIZES:
        started = time.perf_counter()
        seeded[size] = seed(journal, size)
        shared[size] = seed_shared(journal, size)
        print(
            f"seeded {size:,} refusals, claims, other runs' claims, intent versions and a "
            f"run's events in {time.perf_counter() - started:.1f} s"
        )
    started = time.perf_counter()
    streams_setup.others(journal, ARGS.others)
    print(f"appended {ARGS.others:,} events of other runs in {time.perf_counter() - started:.1f} s")
    streams_setup.analyze()

    def gate(size: int) -> MutationGate:
        return MutationGate(journal, AUTHORITY, f"gate-{seeded[size][0]}")

    def mutation(size: int) -> Mutation:
        # Its checks pass: no intent (a reason given), granted, evidence held, a fresh key.
        return Mutation(
            what="a refund",
            actor=ACTOR,
            capability="refund",
            intent=None,
            key=f"fx-bench-{size}",
            request="h",
            evidence=(),
            no_intent_because="bench",
            call=seeded[size][2],
        )

    def whole_log(size: int) -> None:
        """refused_before as it was before 2026-12-06: the log read whole."""
        found = MutationGate.given(seeded[size][2], journal.read(f"gate-{seeded[size][0]}"))
        assert found is None

    def whole_claims(size: int) -> None:
        _, subject, ref = seeded[size]
        assert made_by(journal.read(Claims.stream(subject)), ref) is None

    def made(size: int) -> None:
        _, subject, ref = seeded[size]
        assert Claims(journal).made_by(subject, ref) is None

    def checked(size: int) -> None:
        g = gate(size)
        m = mutation(size)
        g.judge = lambda _: None  # type: ignore[method-assign]  # the five checks aside
        g.check(m)

    def last_live(size: int) -> None:
        run, about, _ = shared[size]
        assert Claims(journal).last_live(about, "status", ACTOR, run) is not None

    def live_before(size: int) -> None:
        """The desk's read before 2026-12-06: every live claim, then the agent's last."""
        run, about, _ = shared[size]
        mine = [
            c for c in Claims(journal).live(about, "status") if c.by == ACTOR and c.run_id == run
        ]
        assert mine[-1] is not None

    def under(intent: tuple[str, int], size: int) -> Mutation:
        # Its other checks pass: granted, evidence held, a fresh key.
        held = (Evidence("order", True),)
        return Mutation("a refund", ACTOR, "refund", intent, f"fx-i-{size}", "h", evidence=held)

    def intent_check(size: int) -> None:
        assert gate(size).judge(under((shared[size][2], size), size)) is None

    def intent_before(size: int) -> None:
        assert history_before(journal, shared[size][2])[-1].intent_version == size

    def passed(size: int) -> None:
        m = replace(under((shared[size][2], size - 1), size), call=seeded[size][2])
        assert gate(size).passed(m)[0][1] == size - 1

    def passed_before(size: int) -> None:
        records = journal.read(Intents.stream(shared[size][2]))
        assert next(r.version for r in records if r.event.intent_version == size - 1)

    def carried(size: int) -> None:
        assert gate(size).judge(under((f"task-r-carried-{size}", 1), size)) is None

    def carried_before(size: int) -> None:
        assert history_before(journal, f"task-r-carried-{size}")[-1].intent_version == 1

    figures: dict[str, Callable[[int], Any]] = {
        "refused_before": lambda size: gate(size).refused_before(mutation(size)),
        "refused_before: whole stream (before)": whole_log,
        "made_by": made,
        "made_by: whole stream (before)": whole_claims,
        "check (its five checks aside)": checked,
        "last_live": last_live,
        "last_live: whole stream (before)": live_before,
        "intent check": intent_check,
        "intent check: whole stream (before)": intent_before,
        "passed": passed,
        "passed: whole stream (before)": passed_before,
        "carried intent": carried,
        "carried intent: whole run (before)": carried_before,
    }
    print(
        f"\n{connection.vendor}, in-process, medians of {ARGS.repeats} rounds, the sizes in "
        "turns; ms, and the journal rows one check turns into records"
    )
    made = {name: (lambda size, w=work: partial(w, size)) for name, work in figures.items()}
    streams_setup.table(made, SIZES, ARGS.repeats, "stream events", 40)


if __name__ == "__main__":
    main()
