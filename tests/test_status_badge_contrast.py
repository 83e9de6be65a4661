"""Every status a run's row can show has a badge of its own in the stylesheet, its words
readable on its ground: at least 4.5:1 (WCAG 2.2, 1.4.3, text). The status `unknown` (a run
the summaries' fold set aside at its first event: journal_store/stopped.py) had no rule, so
it was drawn as a plain grey pill among coloured ones, unlike any status it stands beside."""

from __future__ import annotations

import re

import pytest

from journal_store.stopped import UNFOLDED
from runtime import status
from tests.test_focus_ring_contrast import CSS, contrast

SHOWN = (*status.STATUSES, status.STALLED, UNFOLDED)


def declared(name: str) -> dict[str, str]:
    """The declarations of the badge rule that names `.badge.<name>`."""
    for selectors, body in re.findall(r"(?m)^([^{}\n]+)\{([^}]*)\}", CSS):
        if f".badge.{name}" in [s.strip() for s in selectors.split(",")]:
            pairs = (d.split(":", 1) for d in body.split(";") if ":" in d)
            return {k.strip(): v.strip() for k, v in pairs}
    return {}


@pytest.mark.parametrize("name", SHOWN)
def test_each_status_has_its_badge_and_its_words_read(name):
    rule = declared(name)
    assert rule, f".badge.{name} has no rule in static/minutes.css"
    assert contrast(rule["color"], rule["background"]) >= 4.5
