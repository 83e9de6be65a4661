"""The trace's time axis labels every tick alike: as many decimals as its spacing needs. It
read "+0 s, +5 s, +10.0 s, +15.0 s" and "+2.8 s, +3 s", the labels written by the rule for a
single time (three decimals below ten seconds, trimmed; one above)."""

from __future__ import annotations

import pytest

from dashboard.trace_draw import Scale, ticks

S = 1_000_000_000  # nanoseconds


def labels(first: float, last: float) -> list[str]:
    return [t["label"] for t in ticks(Scale(int(first * S), int(last * S), 0))]


@pytest.mark.parametrize(
    ("first", "last", "expected"),
    [
        (0, 19.2, ["+0 s", "+5 s", "+10 s", "+15 s"]),
        (2.199, 3.271, ["+2.2 s", "+2.4 s", "+2.6 s", "+2.8 s", "+3.0 s", "+3.2 s"]),
        (0, 0.05, ["+0.00 s", "+0.01 s", "+0.02 s", "+0.03 s", "+0.04 s", "+0.05 s"]),
        (0, 150, ["+0 s", "+50 s", "+1 min 40 s", "+2 min 30 s"]),
    ],
)
def test_every_tick_of_an_axis_is_written_alike(first, last, expected):
    assert labels(first, last) == expected
