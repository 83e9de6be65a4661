"""A review queue's page goes on from a position (`before`: older, `after`: newer), as the
queues' API does (dashboard/queue_pages.py), where it went to a page by number: a count and an
OFFSET that read every item before the page, and an item opened or decided while a person
paged moved the others a place, so a page repeated an item or skipped one."""

from __future__ import annotations

import html
import re

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import Conflict, DeadLetter
from runtime.events import ConflictParked, DeadLettered, DeadLetterRetried
from services.control import Control
from tests.dashboard.conftest import run_of

pytestmark = pytest.mark.django_db

QUEUE = "/review/dead-letters"


def letter(n: int, run: str = "r-q") -> DeadLettered:
    return DeadLettered(run_id=run, letter_id=f"{run}:{n}", reason="stuck", attempts=2)


def opened(*events) -> None:
    journal = DjangoJournal()
    journal.append(f"queue-{events[0].id}", list(events), 0)
    projection.catch_up()


def shown(answer) -> list[str]:
    return [item.letter_id for item in answer.context["page"].items]


def link(body: str, words: str) -> str | None:
    """The address of the pager's link reading `words` (unescaped), None without one."""
    found = re.search(rf'<a href="([^"]+)"[^>]*>{re.escape(words)}</a>', body)
    return html.unescape(found.group(1)) if found else None


def said(body: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", body))


def test_paged_by_its_links_every_item_once_whatever_opens_or_is_decided_meanwhile(
    as_reviewer,
):
    opened(*(letter(n) for n in range(1, 61)))
    every = [f"r-q:{n}" for n in range(60, 0, -1)]  # newest first
    seen: list[str] = []
    answer = as_reviewer.get(QUEUE)
    for turn in range(10):
        seen += shown(answer)
        older = link(answer.content.decode(), "Older →")
        if older is None:
            break
        if turn == 0:
            # Two opened at the top and one decided (gone from the open items) above the
            # place: by number, the next page would have begun with the last item shown.
            opened(letter(61), letter(62))
            opened(DeadLetterRetried(run_id="r-q", letter_id="r-q:60", by="ann", reason="x"))
        answer = as_reviewer.get(older)
    assert seen == every
    # Back again by the Newer links, a page at a time, up to the newest open items: each page
    # as it now stands (r-q:60 decided, r-q:61 and r-q:62 opened), and the last the newest
    # full page, as the first page shows it.
    pages: list[list[str]] = []
    while (newer := link(answer.content.decode(), "← Newer")) is not None:
        answer = as_reviewer.get(newer)
        pages.insert(0, shown(answer))
    assert pages[0] == shown(as_reviewer.get(QUEUE)) == ["r-q:62", "r-q:61", *every[1:24]]
    assert [item for page in pages[1:] for item in page] == ["r-q:61", *every[1:-10]]
    assert 'id="newer-items"' in answer.content.decode()  # the top polls for what opens


def test_a_later_page_does_not_poll_and_links_to_the_newest(as_reviewer):
    opened(*(letter(n) for n in range(1, 31)))
    older = link(as_reviewer.get(QUEUE).content.decode(), "Older →")
    answer = as_reviewer.get(older)
    body = answer.content.decode()
    assert shown(answer) == [f"r-q:{n}" for n in range(5, 0, -1)]
    assert 'id="newer-items"' not in body
    assert link(body, "« Newest") == f"{QUEUE}?status=open"
    assert "Page 2" not in body and link(body, "Older →") is None


def test_newer_reaching_the_top_shows_the_newest_full_page(as_reviewer):
    """Three of the items above the place decided meanwhile: Newer showed the 22 left above
    it, a short page the first page never is."""
    opened(*(letter(n) for n in range(1, 31)))
    older = as_reviewer.get(link(as_reviewer.get(QUEUE).content.decode(), "Older →"))
    assert shown(older) == [f"r-q:{n}" for n in range(5, 0, -1)]
    for n in (28, 29, 30):
        opened(DeadLetterRetried(run_id="r-q", letter_id=f"r-q:{n}", by="ann", reason="x"))
    answer = as_reviewer.get(link(older.content.decode(), "← Newer"))
    body = answer.content.decode()
    assert shown(answer) == [f"r-q:{n}" for n in range(27, 2, -1)]
    assert shown(answer) == shown(as_reviewer.get(QUEUE))
    # As the first page: it polls for what opens, and has no Newer or Newest link.
    assert 'id="newer-items"' in body
    assert link(body, "← Newer") is None and link(body, "« Newest") is None
    assert link(body, "Older →") is not None


def test_an_older_page_whose_items_were_all_decided_says_nothing_older_is_open(as_reviewer):
    opened(*(letter(n) for n in range(1, 31)))
    older = link(as_reviewer.get(QUEUE).content.decode(), "Older →")
    for n in range(1, 6):
        opened(DeadLetterRetried(run_id="r-q", letter_id=f"r-q:{n}", by="ann", reason="x"))
    answer = as_reviewer.get(older)
    body = answer.content.decode()
    assert answer.status_code == 200 and shown(answer) == []
    assert "Nothing older is open: the dead letters that were have been decided since." in said(
        body
    )
    assert link(body, "See the newest open dead letters") == f"{QUEUE}?status=open"
    assert "No open dead letters" not in said(body)
    # The first page says as before that there are none, when there are none.
    for n in range(6, 31):
        opened(DeadLetterRetried(run_id="r-q", letter_id=f"r-q:{n}", by="ann", reason="x"))
    first = said(as_reviewer.get(QUEUE).content.decode())
    assert "No open dead letters" in first and "Nothing older" not in first


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ("before=abc", "before", "before: 'abc' is not a position (a whole number"),
        ("after=-3", "after", "after: '-3' is not a position (a whole number"),
        ("before=99999", "before", "before: no dead letter is at position 99999: follow"),
        ("before={conflict}", "before", "before: no dead letter is at position {conflict}"),
        ("after={letter}&before={letter}", "before", "before: a page goes on from one place"),
        ("before=abc&status=closed", "status", "status: 'closed' is no status"),
    ],
)
def test_a_place_it_cannot_take_is_named(as_reviewer, token, query, field, message):
    """Malformed, or no position of an item of this queue (a number typed, a conflict's): a
    page of whatever lay beyond it looked like the page asked for."""
    opened(letter(1))
    opened(
        ConflictParked(
            run_id="r-q",
            conflict_id="c-1",
            subject="order:1",
            predicate="status",
            conflict_type="state",
            claims=[{"claim_id": "a", "value": "paid"}, {"claim_id": "b", "value": "refunded"}],
        )
    )
    at = {
        "letter": DeadLetter.objects.get().position,
        "conflict": Conflict.objects.get().position,
    }
    answer = as_reviewer.get(f"{QUEUE}?{query.format(**at)}")
    body = answer.content.decode()
    assert answer.status_code == 400
    assert message.format(**at) in said(body)
    assert f'<li id="{field}-error"><strong>{field}</strong>: ' in body
    assert "r-q:1" not in body  # nothing listed as if it were that page


def test_a_decision_in_place_on_a_later_page_redraws_its_line_at_that_place(as_reviewer):
    """htmx says where the page is; the oldest line sent out of band is that place's, linking
    to the item where it is (here, on this very page)."""
    run = run_of("first-flight", steps=1)
    ids = [Control(run).dead_letter(f"failed {n}", 3, "Boom").letter_id for n in range(30)]
    projection.catch_up()
    older = link(as_reviewer.get(QUEUE).content.decode(), "Older →")
    answer = as_reviewer.post(
        f"{QUEUE}/{ids[4]}/retry",
        {"reason": "looked"},
        HTTP_HX_REQUEST="true",
        HTTP_HX_CURRENT_URL=f"http://testserver{older}",
    )
    assert answer.status_code == 200
    line = re.search(r'<div id="oldest" hx-swap-oob="true">.*?</div>', answer.content.decode())
    assert line and f'href="#{ids[0]}"' in line.group(0)
    # A place it cannot take: the page listed nothing, and has no line.
    answer = as_reviewer.post(
        f"{QUEUE}/{ids[3]}/retry",
        {"reason": "looked"},
        HTTP_HX_REQUEST="true",
        HTTP_HX_CURRENT_URL=f"http://testserver{QUEUE}?before=nonsense",
    )
    assert answer.status_code == 200 and 'id="oldest"' not in answer.content.decode()
