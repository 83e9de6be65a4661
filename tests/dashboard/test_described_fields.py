"""Every field's aria-describedby names elements that are on the page: its help and, when it
has them, its errors (Django names them <id>_helptext and <id>_error); a screen reader then
reads both with the field."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from tests.dashboard.conftest import run_of

pytestmark = pytest.mark.django_db
FORM = {"team": "repo-fix", "scenario": "first-flight", "model": "scripted"}


class Described(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.described: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.add(found["id"] or "")
        self.described += (found.get("aria-describedby") or "").split()


def missing(html: str) -> tuple[list[str], list[str]]:
    page = Described()
    page.feed(html)
    return page.described, [d for d in page.described if d not in page.ids]


def test_the_new_run_form_describes_its_fields_with_what_is_on_the_page(as_owner):
    described, absent = missing(as_owner.get("/runs/new").content.decode())
    assert "id_task_helptext" in described and absent == []
    refused = as_owner.post("/runs/new", {"team": "repo-fix", "allowance": "0", "task": "x"})
    described, absent = missing(refused.content.decode())
    assert "id_allowance_error" in described and absent == []


def test_the_fork_form_describes_its_fields_with_what_is_on_the_page(as_owner, owner):
    parent = run_of("first-flight")
    from journal_store.journal import DjangoJournal

    at = next(r.position for r in DjangoJournal().read(f"run-{parent}"))
    described, absent = missing(as_owner.get(f"/runs/{parent}/fork?at={at}").content.decode())
    assert described and absent == []


def test_the_import_form_describes_its_fields_with_what_is_on_the_page(as_owner):
    """The file box named a help text the page did not hold (id_journal_helptext)."""
    described, absent = missing(as_owner.get("/import").content.decode())
    assert {"id_journal_helptext", "id_allow_torn_helptext"} <= set(described)
    assert absent == []
    refused = as_owner.post("/import", {"allow_torn": ""})  # no file
    described, absent = missing(refused.content.decode())
    assert "id_journal_error" in described and absent == []


class Focused(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.focused: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if "autofocus" in found:
            self.focused.append(found.get("id") or "")


def focused(html: str) -> list[str]:
    page = Focused()
    page.feed(html)
    return page.focused


def test_a_form_sent_back_puts_the_cursor_in_its_first_wrong_field(as_owner):
    """The page came back with its errors beside their fields and the cursor at the top of the
    page: a keyboard or screen reader user had to find what to mend."""
    assert focused(as_owner.get("/runs/new").content.decode()) == []
    refused = as_owner.post(
        "/runs/new",
        {**FORM, "allowance": "0", "max_turns": "-1"},
    )
    assert refused.status_code == 400
    assert focused(refused.content.decode()) == ["id_allowance"]
    assert focused(as_owner.post("/import", {"allow_torn": ""}).content.decode()) == ["id_journal"]
