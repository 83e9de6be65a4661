"""The trace tab's drawing: a window of a run's trace (runtime/trace_view.py) as SVG geometry.

Coordinates only; the template writes the SVG, so every label an agent could have chosen (its
name, a tool's name, an error) goes through Django's escaping like any other text. The drawing
is a fixed 960 units wide; on a narrow screen its box scrolls sideways, the page does not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from runtime.trace_view import RUN_LANE, TraceView

WIDTH = 960
LABEL = 132  # the lane names' column
RIGHT = 16
AXIS = 30  # the time axis above the lanes
LANE = 44
CHAT_Y, TOOL_Y, BAR_H = 8, 25, 12  # model calls above, tool calls below, in each lane
MIN_BAR = 3  # a call of a few microseconds is still a bar one can see and click
STEPS = [k * 10.0**e for e in range(-4, 5) for k in (1, 2, 5)]  # tick spacings, seconds
# The most characters of an error a bar's or a band's label quotes: the label is a tooltip and
# an accessible name, once per bar, and an error can be a tool's whole output; the opened call
# shows the error as the export has it.
ERROR_CHARS = 200


def seconds_text(seconds: float) -> str:
    """A time after the run's start as the axis and the labels say it."""
    if seconds < 0:
        return f"-{seconds_text(-seconds)}"
    if seconds < 60:
        text = f"{seconds:.3f}".rstrip("0").rstrip(".") if seconds < 10 else f"{seconds:.1f}"
        return f"{text} s"
    minutes, rest = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {rest} s"
    return f"{minutes // 60} h {minutes % 60} min"


def latency_text(ns: int) -> str:
    ms = ns / 1_000_000
    if ms < 1:
        return f"{ms:.2f} ms"
    if ms < 1000:
        return f"{ms:.0f} ms"
    return seconds_text(ms / 1000)


@dataclass(frozen=True)
class Scale:
    first: int
    last: int
    run_start: int

    def x(self, ns: int) -> float:
        span = max(self.last - self.first, 1)
        return round(LABEL + (ns - self.first) / span * (WIDTH - LABEL - RIGHT), 1)

    def since(self, ns: int) -> str:
        return "+" + seconds_text((ns - self.run_start) / 1e9)


def tick_text(seconds: float, step: float) -> str:
    """A tick's time, with the decimals its axis's spacing needs, the same for every tick of
    it ("+2.8 s, +3.0 s", not "+2.8 s, +3 s"); a minute or more as any time is written."""
    if seconds >= 60:
        return "+" + seconds_text(seconds)
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step < 1 else 0
    return f"+{seconds:.{decimals}f} s"


def ticks(scale: Scale) -> list[dict[str, Any]]:
    """Five or so ticks at round times after the run's start."""
    span = (scale.last - scale.first) / 1e9
    step = next((s for s in STEPS if span / s <= 6), STEPS[-1])
    start = (scale.first - scale.run_start) / 1e9
    k = int(start // step) + (0 if start % step == 0 else 1)
    found: list[dict[str, Any]] = []
    while (k * step) <= start + span + 1e-12 and len(found) < 12:
        ns = scale.run_start + int(k * step * 1e9)
        found.append({"x": scale.x(ns), "label": tick_text(k * step, step)})
        k += 1
    return found


def cut(error: str) -> str:
    """An error as a label quotes it: its first ERROR_CHARS characters."""
    return error if len(error) <= ERROR_CHARS else error[:ERROR_CHARS] + "…"


def lane_label(lane: str) -> str:
    return "the run: its harness or supervisor, and the people" if lane == RUN_LANE else lane


def drawing(view: TraceView, call_href: str) -> dict[str, Any]:
    """Everything the template draws; `call_href` with `{}` for the opening event's position
    is where a bar leads."""
    scale = Scale(view.first, max(view.last, view.first + 1), view.run_start)
    top = {lane: AXIS + i * LANE for i, lane in enumerate(view.lanes)}
    height = AXIS + len(view.lanes) * LANE + 8

    def mid(lane: str) -> float:
        return top[lane] + LANE / 2

    bars = []
    for b in view.bars:
        x = scale.x(b.start)
        width = max(scale.x(b.end) - x, MIN_BAR)
        latency = latency_text(b.end - b.start)
        what = "model call" if b.kind == "chat" else b.name.removeprefix("execute_tool ") + " call"
        facts = [f"{b.lane} {what}"]
        if b.turn is not None:
            facts.append(f"turn {b.turn}")
        facts.append(f"at {scale.since(b.start)}")
        facts.append("still going" if b.going_on else latency)
        if b.tokens is not None:
            facts.append(f"{b.tokens} tokens")
        if b.error:
            facts.append(f"failed: {cut(b.error)}")
        state = "going" if b.going_on else "failed" if b.error else "ok"
        bars.append(
            {
                "x": x,
                "y": top[b.lane] + (CHAT_Y if b.kind == "chat" else TOOL_Y),
                "width": round(width, 1),
                "height": BAR_H,
                "kind": b.kind,
                "state": state,
                "label": ", ".join(facts),
                "href": call_href.format(b.position),
                "position": b.position,
                "span_id": b.span_id,
            }
        )
    bands = [
        {
            "x": scale.x(b.start),
            "y": top[b.lane] + 3,
            "width": round(max(scale.x(b.end) - scale.x(b.start), 1), 1),
            "height": LANE - 6,
            "state": "failed" if b.error else "ok",
            "label": f"{b.lane}: {b.outcome or 'going on'}"
            + (f" ({cut(b.error)})" if b.error else ""),
        }
        for b in view.bands
    ]
    arrows = [
        {
            "x1": scale.x(a.sent),
            "y1": mid(a.sender),
            "x2": scale.x(a.arrived),
            "y2": mid(a.recipient),
            "label": f"{a.label} {a.sender} → {a.recipient}"
            + (f" ({a.message_id})" if a.message_id else "")
            + f" at {scale.since(a.sent)}",
        }
        for a in view.arrows
        if a.sender in top and a.recipient in top and a.sender != a.recipient
    ]
    marks = []
    for m in view.marks:
        x = scale.x(m.at)
        since = scale.x(max(m.since, scale.first)) if m.since is not None else x
        marks.append(
            {
                "x": x,
                "since": since,
                "width": round(max(x - since, 0), 1),
                "y": top[m.lane] + 2,
                "height": LANE - 4,
                "kind": m.kind,
                "label": f"{m.label} ({scale.since(m.at)})",
            }
        )
    return {
        "width": WIDTH,
        "height": height,
        "label_width": LABEL,
        "lane_height": LANE,
        "axis_y": AXIS - 6,
        "lanes": [
            {"name": lane, "label": lane_label(lane), "y": top[lane], "text_y": mid(lane) + 4}
            for lane in view.lanes
        ],
        "bars": bars,
        "bands": bands,
        "arrows": arrows,
        "marks": marks,
        "ticks": ticks(scale),
        "from": scale.since(view.first),
        "to": scale.since(scale.last),
        "calls": sum(1 for b in view.bars if b.kind == "chat"),
        "tools": sum(1 for b in view.bars if b.kind == "tool"),
    }
