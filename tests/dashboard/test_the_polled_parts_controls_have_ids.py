"""Every control in a part of a page that polls (a run's header, a runs list's row, what
arrived since a page was drawn) has an id of its own: htmx gives the focus back after a swap
only to an element with an id, and the header's buttons and links and the rows' run links had
none, so the keyboard went back to the page's top every 2 to 5 s. The browser's side:
tests/browser/test_the_focus_stays_through_a_poll.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dashboard.templatetags.minutes import id_part

TEMPLATES = Path(__file__).resolve().parents[2] / "templates" / "dashboard"
POLLED = ["_run_header.html", "_trace_push.html", "_run_row.html", "_arrived.html"]
CONTROL = re.compile(r"<(?:a|button|input|select|textarea|summary)\b[^>]*>")


@pytest.mark.parametrize("name", POLLED)
def test_every_control_of_a_polled_part_has_an_id(name):
    text = re.sub(r"\{#.*?#\}", "", (TEMPLATES / name).read_text(), flags=re.S)
    controls = CONTROL.findall(text)
    assert controls
    without = [c for c in controls if not re.search(r"\sid=\"", c) and 'type="hidden"' not in c]
    assert without == []


def test_the_ids_of_a_headers_controls_are_all_different():
    text = (TEMPLATES / "_run_header.html").read_text() + (
        TEMPLATES / "_trace_push.html"
    ).read_text()
    ids = re.findall(r'<(?:a|button|input)\b[^>]*\sid="([^"]+)"', text)
    assert len(ids) == len(set(ids)), ids


@pytest.mark.parametrize(
    ("value", "part"),
    [
        ("r-5e1f0ffe1000", "r-5e1f0ffe1000"),  # a run's id, a tag: as they are
        ("nightly.v2_x", "nightly.v2_x"),
        ("r-1:2", "r-1~3a~2"),  # a letter's id
        ("a b", "a~20~b"),  # no id may hold a space
        ("a~20~b", "a~7e~20~7e~b"),  # nor be taken for another's
        ("é", "~e9~"),
    ],
)
def test_a_value_is_made_fit_for_an_id_and_kept_apart_from_every_other(value, part):
    assert id_part(value) == part
