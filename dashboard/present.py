"""Turning events and read models into what a page shows: one-line summaries, pretty payloads,
durations, and the bill's bar chart as SVG built on the server.

Everything here returns plain strings; templates escape them. Agent output never becomes
markup: the SVG is built from numbers and escaped names only.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from html import escape
from typing import Any

from django.utils import timezone

from runtime import instants


def pretty(data: Any) -> str:
    text: str = json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False)
    return text


def clip(value: Any, limit: int = 90) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# Ids as the runtime makes them (claims, conflicts, letters, effect keys, event ids): a short
# word and a dash, then a long run of hex digits. Shown as their first digits; the whole line,
# ids and all, is the summary's title. An id that clip() already cut ends in its "…", taken
# with it: the line read "commit aa16a833……".
LONG_ID = re.compile(r"\b((?:[a-z]{1,12}-)*)([0-9a-f]{8})[0-9a-f]{6,}\b…?")
# Payload fields that hold an instant (seconds since the epoch).
INSTANTS = frozenset({"expires", "t", "at", "since", "until", "deadline", "started", "finished"})


def short_ids(text: str) -> str:
    return LONG_ID.sub(lambda m: f"{m[1]}{m[2]}…", text)


def readable(name: str, value: Any) -> str:
    """A payload value as a person reads it: yes/no, a time of day, a rounded figure."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float) and name in INSTANTS and value > 1e9:
        return instants.clock(value)  # (one stored before times were bounded: its number)
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)


def summary(kind: str, data: dict[str, Any]) -> str:
    """One line saying what an event was, from its payload (long ids shortened: the whole
    line is `summary_title`)."""
    return short_ids(summary_title(kind, data))


def summary_title(kind: str, data: dict[str, Any]) -> str:
    """The event's one line in full."""
    if kind == "MessageSent":
        return (
            f"{data.get('performative', '').upper()} {data.get('sender')} → {data.get('recipient')}"
        )
    if kind == "ModelResponded":
        calls = [c.get("name") for c in data.get("tool_calls") or []]
        usage = (data.get("usage") or {}).get("total", data.get("usage"))
        said = clip(data.get("text") or "", 50)
        return (
            f"{usage} tokens"
            + (f"; calls {', '.join(calls)}" if calls else "")
            + (f"; “{said}”" if said else "")
        )
    if kind == "ToolDispatched":
        return f"{data.get('tool')} {clip(json.dumps(data.get('args') or {}), 60)}"
    if kind == "ToolReturned":
        error = data.get("error")
        if error:
            message = error.get("message") if isinstance(error, dict) else error
            kind_ = error.get("type") if isinstance(error, dict) else "Error"
            return f"{data.get('tool')} failed: {kind_}: {clip(message, 60)}"
        result = data.get("result")
        if isinstance(result, dict) and "passed" in result:
            return (
                f"{data.get('tool')}: {result['passed']} passed, {result.get('failed', 0)} failed"
            )
        return f"{data.get('tool')}: {clip(json.dumps(result), 60)}"
    if kind == "StepFailed":
        error = data.get("error")
        if isinstance(error, dict):  # what failed, where the generic line showed the version
            said = f"{error.get('type')}: {clip(error.get('message'), 80)}"
            return f"the step at version {data.get('at_version')} failed: {said}"
    if kind == "RunForked":
        changed = ", ".join(sorted(data.get("changes") or {})) or "nothing changed"
        return (
            f"forked by {data.get('by')} from {data.get('parent')} after its event at "
            f"#{data.get('at')} ({changed})"
        )
    if kind == "MessageInjected":
        return (
            f"{data.get('by')} to {data.get('agent') or 'an agent'}: {clip(data.get('text'), 80)}"
        )
    if kind == "VoteTaken":
        verdicts = data.get("verdicts") or []
        return (
            f"vote of {data.get('samples')}: {data.get('winner')} "
            f"({verdicts.count(data.get('winner'))} of {len(verdicts)}); the minority kept"
        )
    if kind == "DraftCritiqued":
        sent = "back for one revision" if data.get("verdict") == "revise" else "on to review"
        return f"the critic sent draft {str(data.get('commit'))[:8]} {sent}: " + clip(
            data.get("reasons"), 60
        )
    if kind == "DraftRevised" and data.get("draft") == data.get("commit"):
        return f"the coder left draft {str(data.get('draft'))[:8]} as it was: not sent to review"
    if kind == "DraftRevised":
        return (
            f"revised draft {str(data.get('draft'))[:8]} as {str(data.get('commit'))[:8]}; "
            "the revision goes to review"
        )
    if kind == "RunTagged":
        added = " ".join(f"+{t}" for t in data.get("added") or [])
        removed = " ".join(f"-{t}" for t in data.get("removed") or [])
        return f"{data.get('by')} tagged it {added} {removed}".strip()
    special = _coordination_summary(kind, data)
    if special is not None:
        return special
    for key in ("reason", "summary", "task", "status", "text", "by"):
        if data.get(key):
            return clip(data[key])
    # Otherwise the first few simple fields, as "name value".
    simple = [
        f"{k} {readable(k, v)}"
        for k, v in data.items()
        if isinstance(v, str | int | float) and v != ""
    ]
    return clip("; ".join(simple[:3]))


def _coordination_summary(kind: str, data: dict[str, Any]) -> str | None:
    """The harness's coordination decisions (degraded sub-tasks, missed deadlines, retries and
    breakers), said in a line that names who and why; None for other kinds."""
    if kind == "SubtaskDegraded":
        fallback = data.get("fallback")
        return clip(
            f"DEGRADED {data.get('worker_id')}: {data.get('why')}"
            + (f" (answered from {fallback})" if fallback else ""),
            140,
        )
    if kind == "BreakerTripped":
        breaker = str(data.get("breaker") or "")
        which = breaker.split(":", 1)[0] if ":" in breaker else breaker
        label = {"spend": "spend breaker", "tools": "tool-failure breaker", "loop": "loop breaker"}
        rates = data.get("rates") or {}
        figures = ", ".join(f"{k} {v:g}" for k, v in rates.items() if isinstance(v, int | float))
        return clip(
            f"TRIPPED {label.get(which, 'breaker')} {breaker}: {data.get('reason')}"
            + (f" ({figures})" if figures else ""),
            140,
        )
    if kind == "ToolRetryScheduled":
        tool, attempt, delay = data.get("tool"), data.get("attempt"), data.get("delay")
        return f"{tool}: attempt {attempt} after a {delay} s backoff"
    if kind == "ReplyOverdue":
        return clip(
            f"OVERDUE {data.get('awaited')} on {data.get('request')}: {data.get('reason')}", 140
        )
    gate = _gate_summary(kind, data)
    if gate is not None:
        return gate
    if kind == "DeadlinePassed":
        return clip(
            f"deadline passed: {data.get('awaited')}, attempt {data.get('attempt')}: "
            f"{data.get('reason')}",
            140,
        )
    return _obligation_summary(kind, data)


def _obligation_summary(kind: str, data: dict[str, Any]) -> str | None:
    """Commitments, refused duplicate work, waits and deadlocks, delegations, livelock
    (runtime/events/obligations.py), in a line that names who and why; None for other kinds."""
    commitment = data.get("commitment_id")
    if kind == "CommitmentMade":
        under = f" under the lease on {data['lease']}" if data.get("lease") else ""
        return clip(f"COMMITTED {data.get('owner')} to {commitment}: {data.get('what')}{under}")
    if kind == "CommitmentAcknowledged":
        return f"{data.get('by')} acknowledged commitment {commitment}"
    if kind == "CommitmentReleased":
        said = "kept" if data.get("outcome") == "fulfilled" else "gave up"
        why = f": {data['reason']}" if data.get("reason") else ""
        return clip(f"{data.get('by')} {said} commitment {commitment}{why}", 140)
    if kind == "CommitmentTransferred":
        return clip(
            f"commitment {commitment} moved {data.get('from_owner')} → {data.get('to_owner')}: "
            f"{data.get('reason')}",
            140,
        )
    if kind == "DuplicateWorkRefused":
        return clip(f"REFUSED duplicate work: {data.get('reason')}", 140)
    if kind == "LeaseAwaited":
        holder, resource = data.get("holder"), data.get("resource")
        return f"{data.get('waiter')} waits for {holder}'s lease on {resource}"
    if kind == "LeaseTaken":
        resource, epoch = data.get("resource"), data.get("epoch")
        return f"{data.get('holder')} took the lease on {resource} (epoch {epoch})"
    if kind == "LeaseGranted":
        start = f" (start {data['attempt']})" if data.get("attempt") else ""
        return f"{data.get('holder')} took the lease on {data.get('resource')}{start}"
    if kind == "LeaseRenewed":
        return f"{data.get('holder')} renewed its lease on {data.get('resource')}"
    if kind == "LeaseReleased":
        said = f": {data['outcome']}" if data.get("outcome") else ""
        asked = data.get("retry_after")
        wait = (
            f" (its endpoint asked to wait {asked:g} s)" if isinstance(asked, int | float) else ""
        )
        return clip(
            f"{data.get('holder')} gave back the lease on {data.get('resource')}{said}{wait}", 140
        )
    if kind == "LeaseClosed":
        return clip(
            f"{data.get('by')} closed the lease on {data.get('resource')} for good: "
            f"{data.get('reason')}",
            140,
        )
    if kind == "LeaseGivenBack":
        return clip(
            f"{data.get('holder')} gave back the lease on {data.get('resource')}: "
            f"{data.get('outcome')}",
            140,
        )
    if kind == "DeadlockDetected":
        cycle = " → ".join([*(data.get("cycle") or []), *(data.get("cycle") or [])[:1]])
        return clip(
            f"DEADLOCK {cycle}: {data.get('refused')}'s wait refused ({data.get('rule')})", 140
        )
    if kind == "WorkDelegated":
        chain = " → ".join([*(data.get("chain") or []), str(data.get("to"))])
        return clip(f"delegated {chain} (depth {data.get('depth')})", 140)
    if kind == "DelegationRefused":
        return clip(f"REFUSED delegation ({data.get('rule')}): {data.get('reason')}", 140)
    if kind == "LivelockDetected":
        return clip(f"LIVELOCK: {data.get('reason')}", 140)
    return None


def _gate_summary(kind: str, data: dict[str, Any]) -> str | None:
    """The mutation gate's refusals, an agent's last word, the intent a run carries and a
    writer's worktree, each in a line; None for other kinds."""
    if kind == "MutationRefused":
        return clip(
            f"REFUSED at the gate ({data.get('check')}): {data.get('actor')} "
            f"{data.get('capability')}: {data.get('reason')}",
            160,
        )
    if kind == "StatusReported":
        said = data.get("said")
        whose = "its own word" if data.get("source") == "agent" else "the harness's"
        return clip(
            f"status {data.get('status')} ({whose}"
            + (f"; it said {said!r}" if said and said != data.get("status") else "")
            + ")",
            140,
        )
    if kind == "StatusNormalised":
        return clip(f"UNTRUSTED status {data.get('said')!r}: recorded as {data.get('status')}", 140)
    if kind == "IntentCarried":
        return clip(
            f"serves intent {data.get('intent_id')} v{data.get('intent_version')}: "
            f"{data.get('statement')}",
            140,
        )
    if kind == "WorktreeAdded":
        if not data.get("branch"):  # an agent's that commits nothing: at a commit, on no branch
            return f"worktree for {data.get('writer')} at {str(data.get('base'))[:12]}"
        return f"worktree for {data.get('writer')} on {data.get('branch')}"
    if kind == "WorktreeRemoved":
        discarded = data.get("discarded") or []
        if not discarded:
            return f"worktree of {data.get('writer')} taken away; it held nothing uncommitted"
        return clip(
            f"worktree of {data.get('writer')} taken away with {len(discarded)} uncommitted "
            f"path(s), never reviewed: {', '.join(map(str, discarded))}",
            140,
        )
    return None


def number(stream: str, version: int, run_id: str) -> str:
    """An event's number in the run's minutes: its place in the run's own journal (1, 2, 3...),
    or in the stream beside it that holds it (a specialist's, a lease, a saga), named without
    the run's id. Stored with the event (its version): nothing is counted to show it."""
    if stream == f"run-{run_id}":
        return str(version)
    named = stream.replace(f"-{run_id}-", "-").removesuffix(f"-{run_id}")
    # An effect's stream is named by its idempotency key, a 40-digit hash: whole, it made the
    # timeline's number column wider than the events. Its first digits tell a run's few
    # effects apart; the row's title keeps the whole stream name.
    return f"{short_ids(named)} {version}"


def since(t: float, start: datetime | None) -> str:
    """How long after the run's start an event came ("+1 min 5 s"), or "" without a start."""
    if start is None or t <= 0:
        return ""
    seconds = t - start.timestamp()
    if seconds < 0:
        return ""
    if seconds < 10:
        return f"+{seconds:.1f} s"
    return "+" + duration(start, datetime.fromtimestamp(t, UTC))


def duration(start: datetime | None, end: datetime | None, waited: timedelta | None = None) -> str:
    """From start to end, or to now while the run goes on (its status stops the clock: the
    summary's `finished` is set at a verdict, a dead letter, an interrupt or an import), less
    the time it stood `waited` for a person before it went on."""
    if start is None:
        return "unknown"
    return span(((end or timezone.now()) - start - (waited or timedelta(0))).total_seconds())


def span(elapsed: float) -> str:
    """Seconds as the pages say a length of time."""
    if elapsed < 1:
        # Truncated, a run done within the second read "0 s", as if it took no time at all.
        return "<1 s"
    seconds = int(elapsed)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


def share(part: int | float, whole: int | float | None) -> float:
    if not whole:
        return 0.0
    return max(0.0, min(100.0, 100.0 * part / whole))


def bar_chart(rows: list[tuple[str, int]], width: int = 480, bar: int = 22) -> str:
    """Horizontal bars, one per (label, tokens), as an SVG string with a title for each bar."""
    if not rows:
        return ""
    top = max(value for _, value in rows) or 1
    label_w, gap = 130, 8
    height = len(rows) * (bar + gap) + gap
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'aria-label="tokens per agent">'
    ]
    for i, (label, value) in enumerate(rows):
        y = gap + i * (bar + gap)
        length = int((width - label_w - 70) * value / top)
        name, base = escape(label), f"{y + bar * 0.7:.0f}"
        parts.append(
            f"<g><title>{name}: {value:,} tokens</title>"
            f'<text x="0" y="{base}" class="chart-label">{name}</text>'
            f'<rect x="{label_w}" y="{y}" width="{max(length, 1)}" height="{bar}" rx="3" '
            f'class="chart-bar"/><text x="{label_w + length + 6}" y="{base}" '
            f'class="chart-value">{value:,}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)
