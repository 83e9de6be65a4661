"""Racers in separate processes: each sets up Django on the test database, then runs
`repetitions` rounds of a race behind a barrier shared with the other process."""

from __future__ import annotations

import os
import signal
from typing import Any

from tests.journal_store.child import setup


def effect_racer(
    env: dict[str, str], alias: str, barrier: Any, results: Any, provider: str, reps: int, who: str
) -> None:
    setup(env)
    from journal_store.journal import DjangoJournal
    from runtime.coordination.effects import EffectInProgress, Ledger

    ledger = Ledger(DjangoJournal(alias))
    for rep in range(reps):
        key = f"fx-proc-{rep}"

        def refund(k: str) -> dict[str, Any]:
            with open(provider, "a") as f:
                f.write(f"{k}\n")
            return {"refund": k, "by": who}

        barrier.wait()
        try:
            results.put(
                (rep, "result", ledger.perform(key, "refund", "order:1", {"amount": 5}, refund))
            )
        except EffectInProgress:
            results.put((rep, "in_progress", None))


def cas_racer(
    env: dict[str, str], alias: str, barrier: Any, results: Any, reps: int, who: str
) -> None:
    setup(env)
    from journal_store.journal import DjangoJournal
    from runtime.coordination.facts import Facts
    from runtime.journal import WrongExpectedVersion

    facts = Facts(DjangoJournal(alias))
    for rep in range(reps):
        barrier.wait()
        try:
            facts.write(f"order:{rep}", "status", f"set by {who}", 0, who)
            results.put((rep, "won"))
        except WrongExpectedVersion:
            results.put((rep, "lost"))


def crash_after_the_provider_accepted(env: dict[str, str], alias: str, provider: str) -> None:
    setup(env)
    from journal_store.journal import DjangoJournal
    from runtime.coordination.effects import Ledger

    def accept_then_die(key: str) -> None:
        with open(provider, "a") as f:
            f.write(f"{key}\n")
        os.kill(os.getpid(), signal.SIGKILL)  # before the ledger writes the outcome down

    Ledger(DjangoJournal(alias)).perform(
        "fx-crash", "refund", "order:1", {"amount": 5}, accept_then_die
    )
