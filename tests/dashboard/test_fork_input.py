"""A fork's message and replacement tool result hold no control character but tabs and line
breaks, nor half a UTF-16 pair, on the API and on the fork page as on the command line: the
one check in runtime/ (fork_checks), naming the field and what it holds. The page took
"\\u0000" and "\\u001b" typed as JSON's escapes in the tool result, and an escape sequence in
the message, and forked with them; the API refused a NUL alone."""

from __future__ import annotations

import html
import re

import pytest

from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary, StoredEvent
from tests.dashboard.conftest import run_of

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("recorded_runs")]


def returned_at(run_id: str) -> int:
    return next(
        r.position for r in DjangoJournal().read(f"run-{run_id}") if r.event.kind == "ToolReturned"
    )


def rows() -> tuple[int, int]:
    return StoredEvent.objects.count(), RunSummary.objects.count()


@pytest.mark.parametrize(
    ("change", "loc", "says"),
    [
        (
            {"message": {"agent": "coder", "text": "clear \x1b[2J now"}},
            ["body", "message", "text"],
            "holds a control character (U+001B) at character 7; tabs and line breaks are",
        ),
        (
            {"message": {"agent": "coder", "text": "a\x00b"}},
            ["body", "message"],
            "NUL character",  # the API's own, for a NUL anywhere in a body
        ),
        (
            {"tool_result": {"out": ["ok", "\x9b31m red"]}},
            ["body", "tool_result"],
            'holds a control character (U+009B) at ["out"][1], character 1',
        ),
        (
            {"tool_result": "\x07"},
            ["body", "tool_result"],
            "holds a control character (U+0007) at character 1",
        ),
    ],
)
def test_the_api_refuses_it_at_its_field_and_writes_nothing(as_owner, change, loc, says):
    parent = run_of("premature-done")
    before = rows()
    response = as_owner.post(
        f"/api/runs/{parent}/fork",
        {"at": returned_at(parent), **change},
        content_type="application/json",
    )
    assert response.status_code == 422, response.content
    [error] = response.json()["detail"]
    assert error["loc"] == loc and says in error["msg"], error
    assert rows() == before


def errors(page: str) -> dict[str, str]:
    return {
        name: html.unescape(re.sub(r"<.*?>", " ", text)).strip()
        for name, text in re.findall(
            r'<ul class="errorlist" [^>]*id="id_(\w+)_error">(.*?)</ul>', page
        )
    }


@pytest.mark.parametrize(
    ("form", "box", "says"),
    [
        (
            {"to": "coder", "message": "clear \x1b[2J now"},
            "message",
            "holds a control character (U+001B) at character 7",
        ),
        ({"to": "coder", "message": "C1 \x85 here"}, "message", "control character (U+0085)"),
        ({"tool_result": '"\\u0000"'}, "tool_result", "holds a NUL character (U+0000)"),
        (
            {"tool_result": '{"out": "\\u001b]8;;https://x\\u0007"}'},
            "tool_result",
            'holds a control character (U+001B) at ["out"], character 1',
        ),
    ],
)
def test_the_page_refuses_it_under_its_box_and_writes_nothing(as_owner, owner, form, box, says):
    parent = run_of("premature-done")
    before = rows()
    response = as_owner.post(f"/runs/{parent}/fork", {"at": returned_at(parent), **form})
    assert response.status_code == 400
    assert says in errors(response.content.decode()).get(box, ""), response.content.decode()
    assert rows() == before


def test_a_message_of_lines_from_the_page_is_forked(as_owner, owner):
    """A browser sends a text box's line breaks as CRLF: words, not controls."""
    parent = run_of("premature-done")
    response = as_owner.post(
        f"/runs/{parent}/fork",
        {"at": returned_at(parent), "to": "coder", "message": "One.\r\n\tTwo."},
    )
    assert response.status_code == 302, errors(response.content.decode())
    child = response["Location"].split("/")[2]
    said = [r.event for r in DjangoJournal().read(f"run-{child}") if r.event.kind == "RunForked"]
    assert said[0].changes["message"]["text"] == "One.\r\n\tTwo."
