"""A run's events moved to another run id (a fork's copied prefix, an import under another id):
the names they hold of the run's own things, moved with it.

A parallel writer's leases are on resources named after the run (`<run>:fix:T1`, their
streams `lease-<run>:fix:T1`: runtime/streams.resource), and its task intent is
`task-<run>`. The moved run's harness takes its leases and serves its intent under its new id,
and its replay compares what it does with the copied events, so each copy names them so too.
What the harness reads back and never recomputes (a gate's refusal, quoted in the escalation
that follows it) keeps its words: renamed in one place and not in the events quoting it, the
replay would part there.
"""

from __future__ import annotations

import re
from typing import Any

from runtime import streams
from runtime.coordination.gates import TASK
from runtime.events import (
    CommitmentMade,
    CommitmentTransferred,
    DeadlockDetected,
    Event,
    IntentCarried,
    IntentDeclared,
    LeaseAwaited,
    LeaseClosed,
    LeaseGivenBack,
    LeaseGranted,
    LeaseReleased,
    LeaseRenewed,
    LeaseTaken,
)

# The kinds that name a resource in a field (`resource`, a commitment's `lease`).
NAMING = (
    LeaseTaken,
    LeaseGivenBack,
    LeaseAwaited,
    CommitmentMade,
    CommitmentTransferred,
    LeaseGranted,
    LeaseRenewed,
    LeaseReleased,
    LeaseClosed,
)
NAME_FIELDS = ("resource", "lease")
ENVELOPE = frozenset({"id", "t", "run_id", "agent", "turn", "task_id"})


def moved(event: Event, old: str, new: str) -> Event:
    """`event` of run `old` as run `new`'s: its resources, its task intent and the tool call it
    names renamed. The one renaming a fork's copied prefix and an import under another id
    share: each had its own, and only the import's renamed the call."""
    return call_renamed(intent_renamed(resources_renamed(event, old, new), old, new), old, new)


def call_renamed(event: Event, old: str, new: str) -> Event:
    """The tool call the event names (`call`, a `Call.ref`: `<stream>@<version>`, kept by
    MutationRefused v2, FactChanged, ClaimAsserted v2 and EffectStarted v3) as run `new`'s,
    when the call was one of run `old`'s streams: the moved run's call run again (a resumed
    step's) asks by its own stream's name, and would not find the record under the old one."""
    call = getattr(event, "call", None)
    if not isinstance(call, str) or "@" not in call:
        return event
    stream, _, version = call.rpartition("@")
    renamed = streams.renamed(stream, old, new)
    return event if renamed == stream else event.model_copy(update={"call": f"{renamed}@{version}"})


def resources_renamed(event: Event, old: str, new: str) -> Event:
    """The event with run `old`'s resources named as run `new`'s: in the fields that hold a
    resource's name, by its prefix alone (a file's path may hold anything); and in a
    DeadlockDetected whole, words and wait keys, since the wait-for graph builds it again."""
    if isinstance(event, NAMING):
        update = {
            name: streams.resource_renamed(value, old, new)
            for name in NAME_FIELDS
            if isinstance(value := getattr(event, name, None), str)
        }
        return event.model_copy(update=update)
    if not isinstance(event, DeadlockDetected):
        return event
    # The run's id where it begins a resource's name: not inside a longer id, but after
    # `lease-` (a lease stream's name).
    named = re.compile(rf"(?:(?<![A-Za-z0-9._-])|(?<=lease-)){re.escape(old)}:")

    def rename(value: Any) -> Any:
        if isinstance(value, str):
            return named.sub(lambda _: f"{new}:", value)
        if isinstance(value, list):
            return [rename(v) for v in value]
        if isinstance(value, dict):
            return {k: rename(v) for k, v in value.items()}
        return value

    fields = [name for name in type(event).model_fields if name not in ENVELOPE]
    return event.model_copy(update={name: rename(getattr(event, name)) for name in fields})


def intent_renamed(event: Event, old: str, new: str) -> Event:
    """A carried or declared version of run `old`'s task intent as run `new`'s."""
    if isinstance(event, IntentCarried | IntentDeclared) and event.intent_id == TASK + old:
        return event.model_copy(update={"intent_id": TASK + new})
    return event
