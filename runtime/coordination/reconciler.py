"""Effects stuck in flight, settled by asking their provider: a performer that died after the
provider accepted its call and before the outcome was written leaves its effect started and
unsettled (runtime/coordination/effects.py). The effect reconciler (services/effects.py, on the
beat) finds such effects by their streams (`unsettled`) and asks the provider what became of
each key (`reconcile`): a provider that deduplicates on the key knows whether it made it.

Given `candidates` (the keys that may be in flight: on the database, its table of open effects,
journal_store/open_effects.py), each candidate's own stream is read, its first and last records,
and that stream decides: a candidate settled meanwhile, or never started, is left alone. So a
round costs what is in flight, not every effect stream ever written; the candidates only narrow
the search. Without them (the memory's and the file's journals) every effect stream is read."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

from runtime.coordination.effect_records import Taking, seen
from runtime.events import (
    EffectFailed,
    EffectResumed,
    EffectStarted,
    EffectSucceeded,
    ErrorInfo,
    Event,
)
from runtime.journal import ScanningJournal

if TYPE_CHECKING:
    from runtime.coordination.effects import Ledger

Status = Literal["succeeded", "failed", "unknown"]


@dataclass(frozen=True)
class Unsettled:
    """An effect in flight: its start, its latest taking, and its stream's version (where its
    outcome goes)."""

    started: EffectStarted
    holder: Taking
    version: int


@dataclass(frozen=True)
class ProviderStatus:
    """What a provider says became of a key: its result, its error, or that it never saw it."""

    status: Status
    result: Any = None
    error: ErrorInfo | None = None


def unsettled(
    ledger: Ledger, older_than: float, candidates: Iterable[str] | None = None
) -> list[Unsettled]:
    """Effects with no outcome recorded, last taken (started, or taken over) more than
    `older_than` seconds ago: among `candidates` (effect keys), each read from its own stream,
    or, without them, from every effect stream."""
    found = every_stream(ledger) if candidates is None else of_streams(ledger, candidates)
    cutoff = time.time() - older_than
    return [u for u in found if u.holder.t < cutoff]


def of_streams(ledger: Ledger, keys: Iterable[str]) -> list[Unsettled]:
    """The effects among `keys` unsettled as their streams say now: each stream's first and
    last records (two reads by the stream's own index, never the whole stream)."""
    found: list[Unsettled] = []
    for key in dict.fromkeys(keys):  # once each, in the order given
        records = seen(ledger.outcomes, ledger.stream(key))
        if records is None or records.outcome is not None or records.holder is None:
            continue  # never started, or settled: the journal says so, whatever the candidates
        if isinstance(records.first, EffectStarted):
            found.append(Unsettled(records.first, records.holder, records.version))
    return found


def every_stream(ledger: Ledger) -> list[Unsettled]:
    """The unsettled effects of every effect stream ever written: it costs the whole store's
    history, so only a journal that cannot name the candidates reads it."""
    found: dict[str, Unsettled] = {}
    starts: dict[str, EffectStarted] = {}  # a failure sent again is unsettled once more
    scan = cast(ScanningJournal, ledger.outcomes)
    for rec in scan.read_prefix(ledger.stream("")):
        e = rec.event
        if isinstance(e, EffectStarted):
            starts[e.key] = e
            found[e.key] = Unsettled(e, e, rec.version)
        elif isinstance(e, EffectResumed) and e.key in starts:
            found[e.key] = Unsettled(starts[e.key], e, rec.version)
        elif isinstance(e, EffectSucceeded | EffectFailed):
            found.pop(e.key, None)
    return list(found.values())


def reconcile(
    ledger: Ledger,
    status_of: Callable[[EffectStarted], ProviderStatus],
    older_than: float = 60.0,
    candidates: Iterable[str] | None = None,
) -> list[tuple[str, Status]]:
    """Settle effects stuck in flight (among `candidates`, when given: see `unsettled`) by
    asking the provider what became of each key. An effect the provider does not know is
    recorded as failed only once its performer's lease no longer stands (`Ledger.standing`):
    `older_than` must outlast any provider's answer after its caller stopped waiting, for a
    step's lease ends with the step."""
    settled: list[tuple[str, Status]] = []
    for in_flight in unsettled(ledger, older_than, candidates):
        started = in_flight.started
        answer = status_of(started)
        if answer.status == "succeeded":
            outcome: Event = EffectSucceeded(
                run_id=started.run_id, key=started.key, result=answer.result, reconciled=True
            )
        elif answer.status == "unknown" and ledger.standing(in_flight.holder):
            # Its performer still holds the lease it started (or took over) it under, so
            # may still be waiting on the provider: "unknown" says "not yet", not "never".
            # It is asked again next round, once the performer settled it or lost its
            # lease. At the version read: a performer that takes it over meanwhile (an
            # EffectResumed) makes this settle fail, and the effect is its own.
            continue
        elif answer.status == "failed" or answer.status == "unknown":
            # The provider never saw it (or refused it): the effect did not happen.
            error = answer.error or ErrorInfo(
                type="NeverReached", message="the provider has no record of this key"
            )
            outcome = EffectFailed(
                run_id=started.run_id, key=started.key, error=error, reconciled=True
            )
        if ledger.settle(started.key, outcome, in_flight.version):
            settled.append((started.key, answer.status))
    return settled
