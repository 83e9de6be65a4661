"""While the database does not answer, htmx is answered so that the page keeps what it shows:
a poll or a link swaps nothing but the page's notice (a poll inside its own target, a run's
header or a runs list's row, was replaced by the sentence and never asked again), and a form's
post gets the sentence alone, which the form puts in its own error slot (a conflict's form was
replaced by it, with the reason typed in it). The browser's side: tests/browser/
test_a_database_outage_while_a_page_is_open.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.db import OperationalError
from django.template.loader import render_to_string
from django.test import RequestFactory

from dashboard import unavailable

HTMX = {"HTTP_HX_REQUEST": "true"}
TEMPLATES = Path(__file__).resolve().parents[2] / "templates" / "dashboard"


def failed(request):
    """What the pages answer `request` when the database raised (config/urls.py handler500)."""
    try:
        raise OperationalError("connection to server at 10.0.0.5, port 5432 failed")
    except OperationalError:
        return unavailable.server_error(request)


@pytest.mark.parametrize("path", ["/runs/r-000000000001/header", "/runs/newer", "/"])
def test_a_poll_or_a_link_swaps_only_the_notice(path):
    answer = failed(RequestFactory().get(path, **HTMX))
    assert answer.status_code == 503 and answer["Retry-After"] == "5"
    assert answer["HX-Reswap"] == "none"  # the poll stays where it is, and asks again
    assert answer["HX-Push-Url"] == "false"  # the address stays the page's
    body = answer.content.decode()
    (notice,) = re.findall(r'<div id="outage"[^>]*>.*?</div>', body, re.S)
    assert 'hx-swap-oob="innerHTML"' in notice  # the live region stays; what it says changes
    assert "The database did not answer" in notice and "Its live parts keep asking" in notice
    assert re.search(r'<time datetime="[^"]+">\d\d:\d\d:\d\d UTC</time>', notice)
    assert "10.0.0.5" not in body and "5432" not in body  # the driver's words are the log's


def test_a_forms_post_gets_the_sentence_for_its_error_slot():
    answer = failed(RequestFactory().post("/review/conflicts/c-1/resolve", **HTMX))
    assert answer.status_code == 503 and "HX-Reswap" not in answer
    body = answer.content.decode()
    assert body.startswith('<p class="message error" role="status">The database did not answer')
    assert 'id="outage"' not in body


def test_every_page_has_the_slot_the_notice_goes_to():
    page = render_to_string("base.html", {"user": None, "messages": []})
    assert '<div id="outage" class="outage" role="status"></div>' in page


def test_the_decision_forms_put_any_answer_they_are_not_told_where_to_put_in_their_slot():
    # A decided card is retargeted to its section by the view; a 503, 403 or 413 from outside
    # it lands where the form's target says.
    for name in ("_conflict_card", "_letter_card"):
        template = (TEMPLATES / f"{name}.html").read_text()
        posts = re.findall(r"<form [^>]*hx-post=[^>]*>", template)
        assert posts and all('hx-target="find .form-error"' in form for form in posts), name
        assert template.count('<div class="form-error"') == 1
