"""What became of a run's trace after the run: pushed to a collector, or not, and why.

They live on the run's `traces-<id>` stream (runtime/streams.py), beside its journal: the
trace is read from the journal, so these never change what the journal says of the run.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from runtime.events.base import Event


class TracePushQueued(Event):
    """A push of the run's trace was asked for: when the run ended, or by a person's retry."""

    kind: ClassVar[str] = "TracePushQueued"
    endpoint: str  # scheme, host and port of the collector: never its path's secrets or headers
    by: str | None = None  # who asked again; None when the run's end did


class TracePushed(Event):
    """The collector took the trace."""

    kind: ClassVar[str] = "TracePushed"
    endpoint: str
    spans: int = Field(ge=0)
    bytes: int = Field(ge=0)
    attempts: int = Field(ge=1)


class TracePushFailed(Event):
    """The trace did not reach the collector: the last answer or error, after every attempt
    (0 attempts: refused before sending, e.g. the queue of pushes was full)."""

    kind: ClassVar[str] = "TracePushFailed"
    endpoint: str
    error: str
    status: int | None = None  # the collector's last HTTP status, when it answered
    attempts: int = Field(ge=0)


# --- live pushes: spans sent as they become final, while the run goes on -----------------------
# Spans are counted in the order the trace's fold makes them final (runtime/otel/trace.py), which
# no later event changes: `first` and `count` name the same spans whenever the trace is folded.


class TraceSpansClaimed(Event):
    """A live push took spans `first`..`first + count - 1` to send: appended at the version the
    pusher read, so two pushers cannot take the same spans."""

    kind: ClassVar[str] = "TraceSpansClaimed"
    endpoint: str
    first: int = Field(ge=0)
    count: int = Field(ge=1)


class TraceSpansPushed(Event):
    """The collector took spans `first`..`first + count - 1` of a claim: all of them, or one
    body's (a claim is sent in bodies within the batch bounds, in order). The outcome reaching
    the claim's last span settles it.

    v2: `live`, the spans of the run the collector took live so far, this body's among them,
    stamped as the outcome lands (journal_store/traces.py `record`), so that the run page reads
    the sum from the newest outcome, not from every one. None: written by v1."""

    kind: ClassVar[str] = "TraceSpansPushed"
    v: ClassVar[int] = 2
    endpoint: str
    first: int = Field(ge=0)
    count: int = Field(ge=1)
    bytes: int = Field(ge=0)
    attempts: int = Field(ge=1)
    live: int | None = Field(default=None, ge=1)


class TraceSpansPushFailed(Event):
    """Spans `first`..`first + count - 1` of a claim, to its last, did not reach the collector
    (those before them in the claim did, in bodies of their own): the end's push sends them."""

    kind: ClassVar[str] = "TraceSpansPushFailed"
    endpoint: str
    first: int = Field(ge=0)
    count: int = Field(ge=1)
    error: str
    status: int | None = None
    attempts: int = Field(ge=0)


# --- the whole trace's push, a batch at a time ---------------------------------------------------
# A long run's trace is thousands of spans: one body of them all was tens of megabytes, which
# collectors refuse (413) and a worker held whole in memory. The push sends bounded batches and
# journals each one the collector took, so a push that stops part way is taken up from the
# first span no batch took, not sent again from the start.


class TraceBatchPushed(Event):
    """The collector took a batch of the whole trace's push: of the spans `first`..`first +
    count - 1` (numbered as a fold of the run's journal up to position `upto` hands them out),
    `spans` were sent; the others it had already (live, or from an earlier batch). Only
    spans made final by the records up to `upto`, and the rest of the trace only when the run
    has no record after `upto`, count as taken when the push resumes: a record added since
    (a late decision) changes the spans its fold's end makes."""

    kind: ClassVar[str] = "TraceBatchPushed"
    endpoint: str
    first: int = Field(ge=0)
    count: int = Field(ge=1)
    spans: int = Field(ge=1)
    bytes: int = Field(ge=0)
    attempts: int = Field(ge=1)
    upto: int = Field(ge=0)


# Every kind a push of a run's trace journals, on the run's traces stream and nowhere else:
# the store's own dealings with its collector, which an export leaves out and an import
# does not take (journal_store/admission.py).
PUSH_KINDS: tuple[type[Event], ...] = (
    TracePushQueued,
    TracePushed,
    TracePushFailed,
    TraceSpansClaimed,
    TraceSpansPushed,
    TraceSpansPushFailed,
    TraceBatchPushed,
)
