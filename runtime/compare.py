"""Two runs side by side: outcomes, bills, model calls, findings, and where they part.

The point of a comparison is the first place the runs diverge. Runs are aligned by what each
agent decided, not by position: a run's *steps* are its model answers, tool results, messages
sent, agent reports and the harness's verdict, each keyed by (agent, what, n) — the n-th model
answer of the coder, the n-th tool result of the tester. Two runs of the same scenario have
the same keys with the same contents; the first key (in run A's order) whose content differs,
or that one run has and the other lacks, is the divergence. Ids, timestamps, and the call ids
an endpoint makes up are not content: two flights of one script compare identical.

Works on any journal a view reads (stored, imported, the reference runtime's flat lines): it
needs only the events, never the team that wrote them.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from runtime import folds, metrics, views
from runtime.diagnose import diagnose
from runtime.events import (
    AgentFinished,
    Event,
    MessageSent,
    ModelCalled,
    ModelResponded,
    TeamFinished,
    ToolReturned,
)
from runtime.journal import Recorded

Records = Sequence[Recorded]
# The longest text a divergence shows of either side; the journal keeps the rest.
SHOWN = 4_000


@dataclass(frozen=True)
class Step:
    """One decision in a run, keyed so that the same decision in another run finds it."""

    agent: str
    what: str  # "model answer", "tool result", "message", "report", "verdict"
    n: int  # 1 for the agent's first of its kind
    number: int  # the event's number in its stream (the run's timeline numbers it so)
    position: int  # where it sits in the whole journal, for links
    content: Any  # what must be equal for the runs to agree here
    stream: str = ""  # the run's own journal, or a specialist's stream beside it

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.agent, self.what, self.n)

    def label(self) -> str:
        return f"{self.agent}'s {ordinal(self.n)} {self.what}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "what": self.what,
            "n": self.n,
            "number": self.number,
            "position": self.position,
            "stream": self.stream,
            "content": clip(self.content),
        }


@dataclass(frozen=True)
class Divergence:
    """Where two runs part: the step of each side (None where that run has no such step)."""

    label: str
    why: str
    a: Step | None
    b: Step | None
    # Where each run's part after the divergence begins (a position): its step's, or, on the
    # side that lacks the step, just after the last step the runs agreed on.
    a_since: int = 0
    b_since: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "why": self.why,
            "a": self.a.as_dict() if self.a else None,
            "b": self.b.as_dict() if self.b else None,
        }


@dataclass
class Comparison:
    a: str
    b: str
    outcome: dict[str, dict[str, Any]]
    bill: list[dict[str, Any]]
    calls: list[dict[str, Any]]
    findings: dict[str, list[str]]
    divergence: Divergence | None
    metrics: list[dict[str, Any]] = field(default_factory=list)
    threads: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    steps: dict[str, int] = field(default_factory=dict)

    @property
    def identical(self) -> bool:
        return self.divergence is None

    def as_dict(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "identical": self.identical,
            "outcome": self.outcome,
            "bill": self.bill,
            "calls": self.calls,
            "findings": self.findings,
            "metrics": self.metrics,
            "steps": self.steps,
            "divergence": self.divergence.as_dict() if self.divergence else None,
            "threads": self.threads,
        }


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def clip(value: Any) -> Any:
    """Long texts cut for showing (the journal keeps them whole)."""
    if isinstance(value, str) and len(value) > SHOWN:
        return value[:SHOWN] + f"… [{len(value) - SHOWN} more characters]"
    if isinstance(value, dict):
        return {k: clip(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clip(v) for v in value]
    return value


def content_of_data(
    kind: str, agent: str | None, data: dict[str, Any]
) -> tuple[str, str, Any] | None:
    """`content_of` from an event's stored JSON at its kind's current version (a page reading
    a long run's rows need not build a typed event for each)."""
    who = agent or "team"
    if kind == "ModelResponded":
        calls = [{"tool": c["name"], "args": c["args"]} for c in data.get("tool_calls") or []]
        return who, "model answer", {"text": data.get("text") or "", "calls": calls}
    if kind == "ToolReturned":
        error = data.get("error")
        if error is not None:
            outcome: dict[str, Any] = {"error": f"{error['type']}: {error['message']}"}
        else:
            outcome = {"result": data.get("result")}
        return (
            who,
            "tool result",
            {"tool": data["tool"], "attempt": data.get("attempt", 1), **outcome},
        )
    if kind == "MessageSent":
        body = {
            "performative": data["performative"],
            "to": data["recipient"],
            "payload": data.get("payload"),
        }
        return data.get("sender") or who, "message", body
    if kind == "AgentFinished":
        return who, "report", data.get("result")
    if kind == "TeamFinished":
        return "team", "verdict", {"status": data["status"], "reason": data.get("reason", "")}
    return None


def content_of(e: Event) -> tuple[str, str, Any] | None:
    """(agent, what, content) for the events that are decisions; None for the rest."""
    agent = e.agent or "team"
    if isinstance(e, ModelResponded):
        calls = [{"tool": c.name, "args": c.args} for c in e.tool_calls or []]
        return agent, "model answer", {"text": e.text or "", "calls": calls}
    if isinstance(e, ToolReturned):
        if e.error is not None:
            outcome: dict[str, Any] = {"error": str(e.error)}
        else:
            outcome = {"result": e.result}
        return agent, "tool result", {"tool": e.tool, "attempt": e.attempt, **outcome}
    if isinstance(e, MessageSent):
        body = {"performative": e.performative, "to": e.recipient, "payload": e.payload}
        return e.sender or agent, "message", body
    if isinstance(e, AgentFinished):
        return agent, "report", e.result
    if isinstance(e, TeamFinished):
        return "team", "verdict", {"status": e.status, "reason": e.reason}
    return None


def steps(records: Records) -> list[Step]:
    """The run's decisions in journal order, each numbered per agent and kind."""
    seen: Counter[tuple[str, str]] = Counter()
    found = []
    for rec in records:
        decided = content_of(rec.event)
        if decided is None:
            continue
        agent, what, content = decided
        seen[(agent, what)] += 1
        n = seen[(agent, what)]
        found.append(Step(agent, what, n, rec.version, rec.position, content, rec.stream))
    return found


def divergence(mine: Sequence[Step], others: Sequence[Step]) -> Divergence | None:
    """The first step where the runs part, in A's order; then B's first step A lacks."""
    theirs = {s.key: s for s in others}
    agreed: tuple[int, int] = (0, 0)  # positions of the last step both runs took alike
    for step in mine:
        other = theirs.pop(step.key, None)
        if other is None:
            return Divergence(
                step.label(), "only run A has it", step, None, step.position, agreed[1] + 1
            )
        if other.content != step.content:
            return Divergence(
                step.label(), "the runs differ here", step, other, step.position, other.position
            )
        agreed = (step.position, other.position)
    if theirs:
        first = min(theirs.values(), key=lambda s: s.position)
        return Divergence(
            first.label(), "only run B has it", None, first, agreed[0] + 1, first.position
        )
    return None


@dataclass
class Side:
    """One run's part of a comparison: from its records (`side_of`), or from a store's read
    models and the run's decisions alone (what a page can afford for long runs)."""

    outcome: dict[str, Any]
    bill: dict[str, dict[str, int]]  # agent -> tokens, calls
    calls: dict[str, dict[str, Any]]  # agent -> calls, median_s, total_s
    findings: list[str]
    steps: list[Step]
    messages: Callable[[int], list[dict[str, Any]]]  # the messages from a position on
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)  # runtime/metrics.py


def side_of(records: Records) -> Side:
    """A run's side from its records (every event of the run, in position order:
    runtime/flight.py's `figured_records`)."""
    verdict = next((r.event for r in reversed(records) if isinstance(r.event, TeamFinished)), None)
    # Its status, size and start as the stored run's summary says them (services/compare.py
    # reads them off that row): a fork started when it was made, not at its parent's copied
    # TeamStarted, and the events counted are the run's own streams', not its leases' or
    # claims'.
    summary = folds.run(views.Summary(), records)
    agents = views.bill(records)["agents"]

    def messages(since: int) -> list[dict[str, Any]]:
        found = [m for thread in views.threads(records).values() for m in thread]
        return sorted((m for m in found if m["position"] >= since), key=lambda m: m["position"])

    return Side(
        outcome={
            "status": summary["status"],
            "reason": verdict.reason if verdict is not None else "",
            "events": summary["events"],
            "started": summary["started"],
            "ended": verdict.t if verdict is not None else None,
        },
        bill={a: {"tokens": v["tokens"], "calls": v["calls"]} for a, v in agents.items()},
        calls=call_figures(records),
        findings=sorted({f["kind"] for f in diagnose(records)}),
        steps=steps(records),
        messages=messages,
        metrics=metrics.metrics(records),
    )


def bill_rows(
    left: dict[str, dict[str, int]], right: dict[str, dict[str, int]]
) -> list[dict[str, Any]]:
    """Tokens and calls per agent on each side and the change from A to B; "total" last."""
    rows = []
    for agent in sorted(set(left) | set(right)):
        mine = left.get(agent, {"tokens": 0, "calls": 0})
        theirs = right.get(agent, {"tokens": 0, "calls": 0})
        rows.append(row(agent, mine, theirs))
    total = {
        side: {
            "tokens": sum(v["tokens"] for v in agents.values()),
            "calls": sum(v["calls"] for v in agents.values()),
        }
        for side, agents in (("a", left), ("b", right))
    }
    rows.append(row("total", total["a"], total["b"]))
    return rows


def row(agent: str, mine: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    return {
        "agent": agent,
        "a": {"tokens": mine["tokens"], "calls": mine["calls"]},
        "b": {"tokens": theirs["tokens"], "calls": theirs["calls"]},
        "delta": {
            "tokens": theirs["tokens"] - mine["tokens"],
            "calls": theirs["calls"] - mine["calls"],
        },
    }


def latencies(records: Records) -> dict[str, list[float]]:
    """Seconds from each model call to its answer, per agent. A call is answered in its own
    stream (a parallel specialist's calls are in the specialist's), so pairs are kept per
    stream and agent."""
    asked: dict[tuple[str, str], float] = {}
    found: dict[str, list[float]] = defaultdict(list)
    for rec in records:
        e = rec.event
        lane = (rec.stream, e.agent or "team")
        if isinstance(e, ModelCalled):
            asked[lane] = e.t
        elif isinstance(e, ModelResponded) and lane in asked:
            found[lane[1]].append(max(0.0, e.t - asked.pop(lane)))
    return found


def call_figures(records: Records) -> dict[str, dict[str, Any]]:
    """Model calls and their latency per agent (records holding at least every ModelCalled and
    ModelResponded). Journals without ModelCalled (the reference runtime's) have answers but
    no latency: it reads None."""
    answers = Counter(
        r.event.agent or "team" for r in records if isinstance(r.event, ModelResponded)
    )
    times = latencies(records)
    return {
        agent: {
            "calls": answers[agent],
            "median_s": round(statistics.median(times[agent]), 4) if times[agent] else None,
            "total_s": round(sum(times[agent]), 4) if times[agent] else None,
        }
        for agent in answers
    }


def call_rows(
    left: dict[str, dict[str, Any]], right: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    empty = {"calls": 0, "median_s": None, "total_s": None}
    return [
        {"agent": agent, "a": left.get(agent, empty), "b": right.get(agent, empty)}
        for agent in sorted(set(left) | set(right))
    ]


def compare(a: Records, b: Records, a_name: str = "A", b_name: str = "B") -> Comparison:
    """Everything the comparison page, the API and `python -m runtime diff` show."""
    return assemble(side_of(a), side_of(b), a_name, b_name)


def assemble(a: Side, b: Side, a_name: str = "A", b_name: str = "B") -> Comparison:
    parted = divergence(a.steps, b.steps)
    result = Comparison(
        a=a_name,
        b=b_name,
        outcome={"a": a.outcome, "b": b.outcome},
        bill=bill_rows(a.bill, b.bill),
        calls=call_rows(a.calls, b.calls),
        findings={
            "both": [k for k in a.findings if k in b.findings],
            "only_a": [k for k in a.findings if k not in b.findings],
            "only_b": [k for k in b.findings if k not in a.findings],
        },
        divergence=parted,
        steps={"a": len(a.steps), "b": len(b.steps)},
        metrics=[
            {"name": name, "a": a.metrics.get(name), "b": b.metrics.get(name)}
            for name in sorted(set(a.metrics) | set(b.metrics))
        ],
    )
    if parted is not None:
        result.threads = {
            "a": clip(a.messages(parted.a_since)),
            "b": clip(b.messages(parted.b_since)),
        }
    return result


def text(c: Comparison) -> str:
    """The comparison as `python -m runtime diff` prints it."""
    out = [f"A {c.a}", f"B {c.b}", ""]
    for side in ("a", "b"):
        o = c.outcome[side]
        why = f" — {o['reason']}" if o["reason"] else ""
        out.append(f"{side.upper()}: {o['status']}{why} ({o['events']} events)")
    out += ["", f"{'bill':<16}{'A tokens':>10}{'B tokens':>10}{'Δ':>8}{'A calls':>9}{'B calls':>9}"]
    for r in c.bill:
        out.append(
            f"{r['agent']:<16}{r['a']['tokens']:>10}{r['b']['tokens']:>10}"
            f"{r['delta']['tokens']:>+8}{r['a']['calls']:>9}{r['b']['calls']:>9}"
        )
    f = c.findings
    if any(f.values()):
        out += [
            "",
            "findings: "
            + "; ".join(
                f"{label} {', '.join(kinds)}"
                for label, kinds in (
                    ("both:", f["both"]),
                    ("only A:", f["only_a"]),
                    ("only B:", f["only_b"]),
                )
                if kinds
            ),
        ]
    out.append("")
    d = c.divergence
    if d is None:
        out.append(f"no divergence: the runs took the same {c.steps['a']} steps alike")
        return "\n".join(out)
    out.append(f"first divergence: {d.label} ({d.why})")
    for side, step in (("A", d.a), ("B", d.b)):
        if step is None:
            out.append(f"  {side}: (no such step)")
        else:
            shown = json.dumps(clip(step.content), ensure_ascii=False)
            out.append(f"  {side} event {step.number}: {shown}")
    for side in ("a", "b"):
        messages = c.threads.get(side, [])
        out.append(f"messages of {side.upper()} from there: {len(messages)}")
        for m in messages[:10]:
            out.append(f"  {m['performative']} {m['sender']} → {m['recipient']}")
    return "\n".join(out)
