"""A decision taken in place on a queue's page (htmx swaps the decided card in) left the rest
of the page as it was drawn: the line above the cards still named the letter just retried as
the oldest open one, and the decision on several still counted it among "every open letter on
this page" and listed it. The decision's answer now sends those parts again out of band,
drawn from the queue as it now stands under the page's own filters (htmx says which address
the page is at), and without them when nothing more is to be said."""

from __future__ import annotations

import re

import pytest

from journal_store import projection
from journal_store.models import Conflict, DeadLetter
from services.control import Control
from tests.dashboard.conftest import run_of
from tests.dashboard.polls import park
from tests.dashboard.test_how_long_items_wait import aged

pytestmark = pytest.mark.django_db

QUEUE = "/review/dead-letters"


def in_place(page: str) -> dict[str, str]:
    """The headers htmx sends with a card's form posted from `page` (an address on the site)."""
    return {"HTTP_HX_REQUEST": "true", "HTTP_HX_CURRENT_URL": f"http://testserver{page}"}


def out_of_band(answer, element_id: str) -> str:
    """The element of the answer htmx swaps in out of band for `element_id`, whole."""
    found = re.search(
        rf'<(\w+) id="{element_id}"[^>]* hx-swap-oob="[^"]+">.*?</\1>',
        answer.content.decode(),
        re.S,
    )
    assert found, f"the answer sends no #{element_id}"
    return found.group(0)


@pytest.fixture
def three(owner) -> dict[str, str]:
    """Three open dead letters: `oldest` opened three days ago, `older` two, `newest` now; the
    first two in one run, the third in another."""
    first, second = run_of("first-flight", steps=1), run_of("premature-done", steps=1)
    oldest = Control(first).dead_letter("a step kept failing", 3, "Boom").letter_id
    older = Control(first).dead_letter("the step failed again", 3, "Boom").letter_id
    newest = Control(second).dead_letter("the tests kept failing", 2, "Bang").letter_id
    projection.catch_up()
    aged(DeadLetter, oldest, days=3, minutes=1)
    aged(DeadLetter, older, days=2, minutes=1)
    return {"oldest": oldest, "older": older, "newest": newest, "first": first}


def decide(client, letter_id: str, decision: str, page: str, listed: list[str]):
    """One letter decided from its card on `page`, which lists `listed` for the decision on
    several (what the card's form includes)."""
    body = {"reason": "the reviewer looked", "listed": listed}
    return client.post(f"{QUEUE}/{letter_id}/{decision}", body, **in_place(page))


def test_the_oldest_line_and_the_count_follow_a_decision_on_the_page(as_reviewer, three):
    page = as_reviewer.get(QUEUE).content.decode()
    assert f'href="#{three["oldest"]}"' in page and "on this page (3)" in page
    listed = re.findall(r'name="listed" value="([^"]+)"', page)
    assert sorted(listed) == sorted([three["oldest"], three["older"], three["newest"]])

    answer = decide(as_reviewer, three["oldest"], "retry", QUEUE, listed)
    assert answer.status_code == 200
    line = out_of_band(answer, "oldest")
    # The next oldest, by its time, not the letter just retried.
    assert f'href="#{three["older"]}">{three["older"]}</a>' in line
    assert "has waited <strong>2\xa0days</strong>" in line and three["oldest"] not in line
    every = out_of_band(answer, "several-every")
    assert ">every open letter on this page (2)</span>" in every
    still = re.findall(r'name="listed" value="([^"]+)"', out_of_band(answer, "several-listed"))
    assert still == [letter for letter in listed if letter != three["oldest"]]
    # The form itself stays, with what the reviewer typed in it.
    assert 'id="several" hx-swap-oob' not in answer.content.decode()

    # The second decision leaves one letter: its card says how long it has waited, and the
    # decision on several (its boxes too) goes.
    answer = decide(as_reviewer, three["newest"], "discard", QUEUE, still)
    assert out_of_band(answer, "oldest") == '<div id="oldest" hx-swap-oob="true"></div>'
    assert 'name="listed"' not in out_of_band(answer, "several-listed")
    said = answer.content.decode()
    assert '<div id="several" hx-swap-oob="delete"></div>' in said
    assert '<div hx-swap-oob="delete:.choose"></div>' in said
    # Drawn again, the page says the same.
    page = as_reviewer.get(QUEUE).content.decode()
    assert 'id="oldest-open"' not in page and 'id="several"' not in page

    # The last: nothing to name, and no form for several to change.
    answer = decide(as_reviewer, three["older"], "retry", QUEUE, [])
    assert out_of_band(answer, "oldest") == '<div id="oldest" hx-swap-oob="true"></div>'
    assert "several" not in answer.content.decode()


def test_the_line_is_drawn_under_the_filters_of_the_page_decided_on(as_reviewer, three):
    run = three["first"]
    answer = decide(as_reviewer, three["newest"], "retry", f"{QUEUE}?status=open&run={run}", [])
    # The run's own oldest; the letter decided was another run's.
    assert f'href="#{three["oldest"]}"' in out_of_band(answer, "oldest")
    # A page of one run's letters searched for words: the one letter it held is left.
    page = f"{QUEUE}?run={run}&q=failed+again"
    answer = decide(as_reviewer, three["oldest"], "retry", page, [])
    assert out_of_band(answer, "oldest") == '<div id="oldest" hx-swap-oob="true"></div>'


def test_pages_without_the_line_are_sent_none(as_reviewer, three):
    more = [Control(three["first"]).dead_letter("failed", 1, "Boom").letter_id for _ in "ab"]
    projection.catch_up()
    # The decided or all items have no oldest line, nor has a page elsewhere, or one whose
    # filters it could not take (it listed nothing), nor a page of another site.
    pages = {
        three["oldest"]: "http://testserver/review/dead-letters?status=all",
        three["older"]: "http://testserver/",
        three["newest"]: "http://testserver/review/dead-letters?status=nonsense",
        more[0]: "http://elsewhere.test/review/dead-letters",
    }
    for letter, page in pages.items():
        answer = as_reviewer.post(
            f"{QUEUE}/{letter}/retry",
            {"reason": "x"},
            HTTP_HX_REQUEST="true",
            HTTP_HX_CURRENT_URL=page,
        )
        assert answer.status_code == 200 and 'id="oldest"' not in answer.content.decode()
    # Nor a decision without the address htmx sends.
    answer = as_reviewer.post(f"{QUEUE}/{more[1]}/discard", {"reason": "x"}, HTTP_HX_REQUEST="true")
    assert answer.status_code == 200 and 'id="oldest"' not in answer.content.decode()


def test_a_letter_listed_meanwhile_elsewhere_is_never_added(as_reviewer, three):
    # The page listed two of the three (the third arrived after it was drawn): the count
    # is of those two, less the one decided, never of the one the reviewer has not seen.
    listed = [three["older"], three["oldest"]]
    answer = decide(as_reviewer, three["older"], "retry", QUEUE, listed)
    assert three["newest"] not in out_of_band(answer, "several-listed")
    assert '<div id="several" hx-swap-oob="delete"></div>' in answer.content.decode()


def test_resolving_a_conflict_in_place_names_the_next_oldest(as_reviewer, owner):
    run = run_of("first-flight", steps=1)
    for conflict in ("c-old", "c-mid", "c-new"):
        park(run, conflict)
    projection.catch_up()
    aged(Conflict, "c-old", hours=5)
    aged(Conflict, "c-mid", hours=3)
    page = as_reviewer.get("/review/conflicts").content.decode()
    assert 'href="#c-old">c-old</a>' in page
    answer = as_reviewer.post(
        "/review/conflicts/c-old/resolve",
        {"choice": "none", "reason": "neither claim holds"},
        **in_place("/review/conflicts"),
    )
    assert answer.status_code == 200
    line = out_of_band(answer, "oldest")
    assert "The oldest open conflict has waited <strong>3\xa0hours</strong>" in line
    assert 'href="#c-mid">c-mid</a>' in line
    assert "several" not in answer.content.decode()
