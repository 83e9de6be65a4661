"""Charts drawn on the server as SVG: no script, no library, nothing fetched from elsewhere.

Each chart is an `<svg role="img">` labelled by its own `<title>` and `<desc>` (what it plots,
and how to read it), and every bar or point carries a `<title>` with its label and value, so a
screen reader and a pointer both get the numbers; the pages print the same numbers in a table
beside each chart. Labels are escaped here: a team's or a model's name is text, never markup.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape

Fmt = Callable[[float], str]
WIDTH = 560
LABEL_W = 140  # room for a bar's label on the left
NONE = "\u2013"  # an en dash: a value not measurable


def plain(value: float) -> str:
    return f"{value:,.4g}"


def head(key: str, title: str, desc: str, width: int, height: int) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'aria-labelledby="{key}-title {key}-desc">'
        f'<title id="{key}-title">{escape(title)}</title>'
        f'<desc id="{key}-desc">{escape(desc)}</desc>'
    )


def bars(
    key: str,
    title: str,
    desc: str,
    rows: Sequence[tuple[str, Sequence[float | None]]],
    series: Sequence[str],
    fmt: Fmt = plain,
) -> str:
    """Horizontal bars: one group per row label, one bar per series in it (None: not
    measurable, drawn as a dash and said so in its title)."""
    if not rows:
        return ""
    values = [v for _, vs in rows for v in vs if v is not None]
    top = max(values, default=0.0) or 1.0
    bar, gap = 16, 10
    group = len(series) * bar + gap
    legend = 22 if len(series) > 1 else 0
    height = legend + len(rows) * group + gap
    room = WIDTH - LABEL_W - 80
    parts = [head(key, title, desc, WIDTH, height)]
    if legend:
        for i, name in enumerate(series):
            x = LABEL_W + i * 170
            parts.append(
                f'<rect x="{x}" y="4" width="12" height="12" class="chart-bar s{i}"/>'
                f'<text x="{x + 18}" y="15" class="chart-label">{escape(name)}</text>'
            )
    for r, (label, vs) in enumerate(rows):
        y0 = legend + gap + r * group
        name = escape(label)
        parts.append(
            f'<text x="0" y="{y0 + len(series) * bar / 2 + 4:.0f}" class="chart-label">'
            f"{escape(label[:22])}</text>"
        )
        for i, value in enumerate(vs):
            y = y0 + i * bar
            said = "not measurable" if value is None else fmt(value)
            length = 0 if value is None else round(room * value / top)
            parts.append(
                f"<g><title>{name}, {escape(series[i])}: {escape(said)}</title>"
                f'<rect x="{LABEL_W}" y="{y}" width="{max(length, 1)}" height="{bar - 3}" '
                f'class="chart-bar s{i}"/>'
                f'<text x="{LABEL_W + length + 6}" y="{y + bar - 5}" class="chart-value">'
                f"{escape(NONE if value is None else fmt(value))}</text></g>"
            )
    parts.append("</svg>")
    return "".join(parts)


def over_time(
    key: str,
    title: str,
    desc: str,
    points: Sequence[tuple[str, float | None]],
    fmt: Fmt = plain,
    kind: str = "line",
) -> str:
    """Values over periods, left to right: a line through the measured ones (a gap where a
    period has none) or columns. The x axis names the first, the last and some periods between;
    the y axis its top and zero."""
    if not points:
        return ""
    height, left, bottom, top_pad = 220, 70, 30, 14
    plot_w, plot_h = WIDTH - left - 10, height - bottom - top_pad
    values = [v for _, v in points if v is not None]
    top = max(values, default=0.0) or 1.0
    step = plot_w / max(len(points), 1)
    parts = [
        head(key, title, desc, WIDTH, height),
        f'<line x1="{left}" y1="{top_pad + plot_h}" x2="{left + plot_w}" y2="{top_pad + plot_h}" '
        f'class="chart-axis"/>'
        f'<line x1="{left}" y1="{top_pad}" x2="{left + plot_w}" y2="{top_pad}" '
        f'class="chart-grid"/>'
        f'<text x="{left - 6}" y="{top_pad + 4}" text-anchor="end" class="chart-value">'
        f"{escape(fmt(top))}</text>"
        f'<text x="{left - 6}" y="{top_pad + plot_h + 4}" text-anchor="end" class="chart-value">'
        f"{escape(fmt(0))}</text>",
    ]
    every = max(1, len(points) // 6)
    line: list[str] = []
    marks: list[str] = []  # drawn after the lines, over them
    for i, (label, value) in enumerate(points):
        cx = left + step * (i + 0.5)
        if i % every == 0 or i == len(points) - 1:
            parts.append(
                f'<text x="{cx:.1f}" y="{height - 10}" text-anchor="middle" class="chart-label">'
                f"{escape(label)}</text>"
            )
        said = "none" if value is None else fmt(value)
        if value is None:
            if len(line) > 1:
                parts.append(f'<polyline points="{" ".join(line)}" class="chart-line"/>')
            line = []
            marks.append(f"<g><title>{escape(label)}: {escape(said)}</title></g>")
            continue
        y = top_pad + plot_h - plot_h * value / top
        if kind == "columns":
            w = max(step * 0.7, 1)
            marks.append(
                f"<g><title>{escape(label)}: {escape(said)}</title>"
                f'<rect x="{cx - w / 2:.1f}" y="{y:.1f}" width="{w:.1f}" '
                f'height="{max(top_pad + plot_h - y, 1):.1f}" class="chart-bar"/></g>'
            )
        else:
            line.append(f"{cx:.1f},{y:.1f}")
            marks.append(
                f"<g><title>{escape(label)}: {escape(said)}</title>"
                f'<circle cx="{cx:.1f}" cy="{y:.1f}" r="4" class="chart-dot"/></g>'
            )
    if len(line) > 1:
        parts.append(f'<polyline points="{" ".join(line)}" class="chart-line"/>')
    parts.extend(marks)
    parts.append("</svg>")
    return "".join(parts)


__all__ = ["bars", "over_time"]
