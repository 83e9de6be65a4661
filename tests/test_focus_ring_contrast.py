"""The keyboard focus ring stands out from what it sits on: at least 3:1 (WCAG 2.2, 1.4.11
non-text contrast) on the page, on cards, and on the dark bar at the top, read from the
stylesheet the pages load."""

from __future__ import annotations

import re
from pathlib import Path

CSS = (Path(__file__).resolve().parents[1] / "static" / "minutes.css").read_text()


def colour(name_or_hex: str) -> str:
    if name_or_hex.startswith("var("):
        name = name_or_hex[4:-1]
        return re.search(rf"{re.escape(name)}:\s*(#[0-9a-fA-F]{{6}})", CSS).group(1)
    return name_or_hex


def luminance(hex_: str) -> float:
    def channel(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = (int(hex_[i : i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(colour(a)), luminance(colour(b))), reverse=True)
    return (high + 0.05) / (low + 0.05)


def rule(selector: str) -> str:
    return re.search(rf"(?m)^{re.escape(selector)}\s*\{{([^}}]*)\}}", CSS).group(1)


def test_the_focus_ring_stands_out_on_the_page_and_on_the_dark_bar():
    ring = re.search(
        r"outline:\s*\S+\s+solid\s+(var\([^)]+\)|#[0-9a-fA-F]{6})", rule(":focus-visible")
    )
    for ground in ("var(--wash)", "var(--paper)"):
        assert contrast(ring.group(1), ground) >= 3
    bar = re.search(r"background:\s*(var\([^)]+\)|#[0-9a-fA-F]{6})", rule("header.top")).group(1)
    assert contrast(ring.group(1), bar) < 3  # the page's ring alone would not do on the bar
    on_bar = re.search(r"outline-color:\s*(#[0-9a-fA-F]{6})", rule("header.top :focus-visible"))
    assert contrast(on_bar.group(1), bar) >= 3


def test_a_refused_box_stands_out_from_the_page_and_from_a_box_taken():
    """A box its form refused (aria-invalid) is drawn in the colour of the reason below it, at
    least 3:1 on the page and on a card, where every box had the same grey border."""
    refused = rule('[aria-invalid="true"]')
    border = re.search(r"border-color:\s*(var\([^)]+\)|#[0-9a-fA-F]{6})", refused).group(1)
    assert colour(border) == colour("var(--bad)")
    for ground in ("var(--wash)", "var(--paper)"):
        assert contrast(border, ground) >= 3
    taken = re.search(r"border:\s*1px solid (#[0-9a-fA-F]{6})", rule("input, select, textarea"))
    assert contrast(taken.group(1), "var(--paper)") < 3  # the grey alone says nothing
