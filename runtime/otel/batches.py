"""The whole trace's push in batches: bounded bodies, each encoded as its spans come.

One body of a long run's whole trace (8,003 spans of 20,011 events) was 57 MB: a collector
refuses such a body (HTTP 413, which a retry does not fix, so the push failed every time), and
the worker built every span's bytes, then the joined body, before the first byte was sent. Here
the fold's spans are numbered as they become final (`Numbering`), those the collector has
already are passed over (`Taken`), and the rest are cut into batches of at most `Limits.spans`
spans and `Limits.bytes` bytes of body (`cut`): a batch is encoded when its last span is in,
sent, and dropped, so what a push holds is one batch and the fold's state, however long the run.
A live push's spans (those a step made final) go through `cut` and `deliver` too.

A collector that still answers 413 gets the batch again in halves, down to one span
(`deliver`); the bound on bytes is lowered for the batches after it. A span the collector
refuses alone fails the push, saying so and how large it was.

Plain Python: no Django, no network (the caller's `send` POSTs a body).
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from runtime.journal import Recorded
from runtime.otel.encode import runs_in
from runtime.otel.options import TraceOptions
from runtime.otel.protobuf import SPANS, chunk_heads, resource_spans, span_serialized, varint
from runtime.otel.push import PushFailed, PushResult
from runtime.otel.spans import Span
from runtime.otel.trace import Trace

log = logging.getLogger(__name__)

TOO_LARGE = 413


@dataclass(frozen=True)
class Final:
    """A span as the fold handed it out: its number in the fold's order, and the position of
    the record that made it final (None: the fold's end made it so, closing what was open)."""

    index: int
    span: Span
    at: int | None


class Numbering:
    """The run's spans as they become final, numbered, as `encode.folded` hands them out; and
    the position of the last record folded (`newest`), once the records are read."""

    def __init__(
        self, run_id: str, records: Iterable[Recorded], options: TraceOptions | None = None
    ) -> None:
        self.trace = Trace(run_id, options, keep=False)
        self.records = records
        self.newest = 0
        self.total = 0

    def traced(self, records: Iterable[Recorded]) -> Iterator[Recorded]:
        """Of the run's records (any of its streams), those its trace reads, as `folded`
        and `encode.runs_in` take them: not its lease's, its effects' or an import's."""
        trace = self.trace
        return (rec for rec in records if runs_in(trace, rec))

    def __iter__(self) -> Iterator[Final]:
        trace = self.trace
        for rec in self.traced(self.records):
            if trace.root is None and rec.stream != trace.stream:
                continue  # as `folded`: the run's own first record opens the trace
            trace.step(rec)
            self.newest = rec.position
            if trace.ready:
                for span in trace.take():
                    yield self.numbered(span, rec.position)
        if trace.root is None:
            return  # no record of the run's own stream: no trace, as `folded` gives none
        trace.finish()
        for span in trace.take():
            yield self.numbered(span, None)

    def numbered(self, span: Span, at: int | None) -> Final:
        self.total += 1
        return Final(self.total - 1, span, at)


@dataclass
class Taken:
    """What this collector has of the trace already: span ranges live pushes sent (`live`,
    as (first, count)), and batches an earlier try of this push sent (`batches`, as (first,
    count, upto): numbered by a fold of the journal up to position `upto`)."""

    live: list[tuple[int, int]] = field(default_factory=list)
    batches: list[tuple[int, int, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        # Live ranges can be one per step of a long run: looked up by bisection, not scanned.
        merged: list[list[int]] = []
        for first, count in sorted(self.live):
            if merged and first <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], first + count)
            else:
                merged.append([first, first + count])
        self._starts = [start for start, _ in merged]
        self._ends = [end for _, end in merged]

    def went_live(self, index: int) -> bool:
        at = bisect.bisect_right(self._starts, index) - 1
        return at >= 0 and index < self._ends[at]

    def in_batch(self, final: Final, newest: int) -> bool:
        """Whether an earlier batch sent this very span. A batch numbered the spans of the
        journal up to its `upto`: the spans made final by records up to there are numbered the
        same by every later fold; those the fold's end makes (the run's own span, what was left
        open) are the same only if the run has no record after `upto`."""
        i = final.index
        for first, count, upto in self.batches:
            if first <= i < first + count:
                if final.at is None and newest <= upto:
                    return True
                if final.at is not None and final.at <= upto:
                    return True
        return False


@dataclass
class Limits:
    """A batch's bounds: spans, and bytes of body (lowered for the rest of a push when the
    collector refused a body as too large)."""

    spans: int
    bytes: int


class Batch:
    """Spans to send in one body: their numbers and names, and each one's bytes as an entry of
    ScopeSpans.spans (its tag, its length, the official Span message's bytes)."""

    def __init__(self, heads: tuple[bytes, bytes]) -> None:
        self.heads = heads
        self.entries: list[bytes] = []
        self.indices: list[int] = []
        self.names: list[str] = []
        self.content = 0  # bytes of the entries

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def first(self) -> int:
        return self.indices[0]

    @property
    def count(self) -> int:
        """How many spans its range covers, those passed over (taken already) included."""
        return self.indices[-1] - self.indices[0] + 1

    def add(self, index: int, name: str, entry: bytes) -> None:
        self.entries.append(entry)
        self.indices.append(index)
        self.names.append(name)
        self.content += len(entry)

    def size(self, content: int | None = None) -> int:
        """The body's length with `content` bytes of entries (by default its own)."""
        resource, scope = self.heads
        content = self.content if content is None else content
        scope_spans = len(scope) + content
        resource_size = len(resource) + 1 + len(varint(scope_spans)) + scope_spans
        return 1 + len(varint(resource_size)) + resource_size

    def body(self) -> bytes:
        """An ExportTraceServiceRequest of one ResourceSpans holding the batch's spans."""
        return resource_spans(self.heads, list(self.entries), self.content)

    def halves(self) -> tuple[Batch, Batch]:
        middle = len(self) // 2
        out = (Batch(self.heads), Batch(self.heads))
        spans = zip(self.indices, self.names, self.entries, strict=True)
        for n, (index, name, entry) in enumerate(spans):
            out[n >= middle].add(index, name, entry)
        return out


class Batches:
    """The spans not taken already, in batches within the limits, encoded as they come.
    Counts, once it has run, the trace's spans (`numbering.total`) and those left out because
    they went live (`live`) or an earlier batch sent them (`resumed`)."""

    def __init__(self, numbering: Numbering, taken: Taken, limits: Limits) -> None:
        self.numbering = numbering
        self.taken = taken
        self.limits = limits
        self.live = 0
        self.resumed = 0

    def __iter__(self) -> Iterator[Batch]:
        return cut(self.fresh(), self.numbering.trace, self.limits)

    def fresh(self) -> Iterator[tuple[int, Span]]:
        """The numbered spans the collector does not have yet, counting those passed over."""
        numbering, taken = self.numbering, self.taken
        for final in numbering:
            if taken.went_live(final.index):
                self.live += 1
            elif taken.in_batch(final, numbering.newest):
                self.resumed += 1
            else:
                yield final.index, final.span


def cut(spans: Iterable[tuple[int, Span]], trace: Trace, limits: Limits) -> Iterator[Batch]:
    """Numbered spans of `trace`, in order, cut into batches within the limits, each encoded
    when its last span is in: the whole push's (`Batches`), and a live push's, whose step can
    make hundreds of spans final (a body of them all was refused as too large every step)."""
    batch: Batch | None = None
    trace_id = b""
    for index, one in spans:
        if batch is None:
            # Made at the first span: with nothing left to send, nothing is encoded.
            batch = Batch(chunk_heads(trace))
            trace_id = bytes.fromhex(trace.trace_id)
        span = span_serialized(one, trace_id)
        entry = SPANS + varint(len(span)) + span
        full = len(batch) >= limits.spans
        if batch and (full or batch.size(batch.content + len(entry)) > limits.bytes):
            yield batch
            batch = Batch(batch.heads)
        batch.add(index, one.name, entry)
    if batch:
        yield batch


def deliver(
    batch: Batch,
    send: Callable[[bytes], PushResult],
    took: Callable[[Batch, int, PushResult], None],
    limits: Limits,
) -> None:
    """Send the batch; `took(batch, bytes, result)` for each body the collector took. A body
    refused as too large is sent again in halves, down to one span; PushFailed otherwise (a
    span refused alone says so)."""
    body = batch.body()
    size = len(body)
    try:
        result = send(body)
    except PushFailed as exc:
        if exc.status != TOO_LARGE:
            raise
        del body  # the halves are made from the entries: do not hold both
        if len(batch) == 1:
            raise PushFailed(too_large(str(exc), batch, size), exc.status, exc.attempts) from exc
        log.info(
            "the collector refused a body of %d bytes (%d spans) as too large: sent in halves",
            size,
            len(batch),
        )
        limits.bytes = min(limits.bytes, max(1, size // 2))
        for half in batch.halves():
            deliver(half, send, took, limits)
        return
    took(batch, size, result)


def too_large(said: str, batch: Batch, size: int) -> str:
    return (
        f"{said}: the collector refused span {batch.first} ({batch.names[0]}) alone, a body "
        f"of {size:,} bytes, as too large; it and the spans after it were not sent (raise the "
        "collector's limit on a body, or lower MINUTES_OTLP_CONTENT_CHARS)"
    )
