"""One decision on several dead letters. When a step kept failing across many runs (a tool
gone, a model misconfigured), a reviewer had to type a reason and press Retry on each letter,
one after the other. The queue's page now takes one reason for the letters ticked, or for every
open letter it lists, and `POST /api/review/dead-letters/decide` does the same for scripts.
Each letter is decided on its own, as if alone: one decided meanwhile is named and left as it
was, the others go through. A form or a body that cannot be used decides nothing."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.test import Client

from journal_store import projection, search
from journal_store.journal import DjangoJournal
from journal_store.models import DeadLetter
from services import letters
from services.control import Control
from tests.dashboard.conftest import client_for, run_of

pytestmark = pytest.mark.django_db

QUEUE = "/review/dead-letters"


@pytest.fixture
def three(owner) -> list[str]:
    """Three open dead letters, each a step that kept dying in a run of its own."""
    runs = [run_of(scenario, steps=1) for scenario in ("first-flight", "premature-done") * 2][:3]
    ids = [Control(run).dead_letter("a step kept failing", 3, "Boom").letter_id for run in runs]
    projection.catch_up()
    return ids


def statuses(ids: list[str]) -> list[str]:
    projection.catch_up()
    rows = DeadLetter.objects.in_bulk(ids)
    return [rows[i].status for i in ids]


def told(page: str) -> str:
    """The sentence the page was drawn again with (the session's message)."""
    found = re.search(r'<p class="message ([a-z ]+)" role="alert">(.*?)</p>', page, re.S)
    assert found, "the page says nothing of the decision"
    return f"{found.group(1)}: {unescape(found.group(2))}"


def test_the_queue_offers_the_decision_on_several_to_a_reviewer_only(as_reviewer, as_owner, three):
    page = as_reviewer.get(QUEUE).content.decode()
    assert '<form id="several"' in page
    boxes = re.findall(r'name="letter" value="[^"]+" form="several"', page)
    assert page.count('name="letter" value="') == 3 == len(boxes)
    assert page.count('form="several" name="listed" value="') == 3
    assert "every open letter on this page (3)" in page
    # Without the permission, no form and no boxes; nor on the decided letters.
    page = as_owner.get(QUEUE).content.decode()
    assert 'id="several"' not in page and 'form="several"' not in page
    page = as_reviewer.get(f"{QUEUE}?status=decided").content.decode()
    assert 'id="several"' not in page
    # One open letter alone: its own card decides it.
    for letter_id in three[:2]:
        letters.decide_letter(letter_id, "retry", "ann", "back")
    projection.catch_up()
    page = as_reviewer.get(QUEUE).content.decode()
    assert 'id="several"' not in page and 'form="several"' not in page
    assert page.count('value="retry"') == 0 and "Why retry" in page


def test_the_ticked_letters_are_retried_with_one_reason_and_the_page_drawn_again(
    as_reviewer, three
):
    answer = as_reviewer.post(
        f"{QUEUE}/decide?status=open&run={three[0].split(':')[0]}",
        {"letter": three[:2], "decision": "retry", "reason": "the tool is back"},
        follow=True,
    )
    # Back to the page the form was on, under the filters it had.
    assert answer.redirect_chain == [(f"{QUEUE}?status=open&run={three[0].split(':')[0]}", 302)]
    said = told(answer.content.decode())
    assert said.startswith("ok: 2 dead letters retried: ")
    assert three[0] in said and three[1] in said
    assert statuses(three) == ["retried", "retried", "open"]
    for letter_id in three[:2]:
        row = DeadLetter.objects.get(letter_id=letter_id)
        assert (row.decided_by, row.decision_reason) == ("reviewer", "the tool is back")


def test_every_open_letter_the_page_listed_can_be_taken_at_once(as_reviewer, three):
    answer = as_reviewer.post(
        f"{QUEUE}/decide",
        {"every": "1", "listed": three, "decision": "discard", "reason": "obsolete work"},
        follow=True,
    )
    assert told(answer.content.decode()).startswith("ok: 3 dead letters discarded: ")
    assert statuses(three) == ["discarded"] * 3


def test_a_letter_decided_meanwhile_is_named_and_left_as_it_was(as_reviewer, three):
    letters.decide_letter(three[1], "discard", "ann", "not worth it")
    answer = as_reviewer.post(
        f"{QUEUE}/decide",
        {"letter": three, "decision": "retry", "reason": "the tool is back"},
        follow=True,
    )
    said = told(answer.content.decode())
    assert said.startswith("warn: 2 dead letters retried: ")
    assert f"1 not: dead letter {three[1]} has already been decided (discarded by ann)." in said
    assert statuses(three) == ["retried", "discarded", "retried"]
    assert DeadLetter.objects.get(letter_id=three[1]).decided_by == "ann"


def test_posted_twice_each_letter_is_decided_once(as_reviewer, three):
    form = {"letter": three, "decision": "retry", "reason": "the tool is back"}
    as_reviewer.post(f"{QUEUE}/decide", form, follow=True)  # its page read, its message said
    end = DjangoJournal().last_position()
    said = told(as_reviewer.post(f"{QUEUE}/decide", form, follow=True).content.decode())
    assert said.startswith("warn: 3 not: dead letter ")
    assert DjangoJournal().last_position() == end


@pytest.mark.parametrize(
    ("form", "why"),
    [
        ({"letter": "X", "decision": "retry"}, "say why"),
        ({"decision": "retry", "reason": "r"}, ">tick the letters to decide"),
        ({"every": "1", "decision": "retry", "reason": "r"}, ">tick the letters"),
        (
            {"letter": "X", "decision": "redo", "reason": "r"},
            "Retry the chosen or Discard the chosen: Select a valid choice",
        ),
        ({"letter": "<script>:1", "decision": "retry", "reason": "r"}, "'<script>:1' is not a"),
        ({"letter": "X", "decision": "retry", "reason": "r" * 5000}, "Why: Ensure this"),
        (
            {"letter": "X", "decision": "retry", "reason": "a\x00b"},
            "Why: the reason holds a NUL character (U+0000) at character 2",
        ),
    ],
)
def test_a_form_that_cannot_be_used_decides_nothing_and_says_why(as_reviewer, three, form, why):
    form = {k: (three[0] if v == "X" else v) for k, v in form.items()}
    end = DjangoJournal().last_position()
    answer = as_reviewer.post(f"{QUEUE}/decide", form)
    assert answer.status_code == 400
    page = unescape(answer.content.decode())
    assert why in page, page[:2000]
    assert '<script>:1"' not in answer.content.decode()  # the refused id, escaped
    assert DjangoJournal().last_position() == end
    assert statuses(three) == ["open"] * 3


def test_a_refused_form_keeps_what_was_typed_and_ticked_and_the_pages_filters(as_reviewer, three):
    """Forgetting to tick a box (or to say why) draws the queue again with why beside the
    form and what was typed and ticked still there, under the filters the page had."""
    answer = as_reviewer.post(
        f"{QUEUE}/decide?status=open&team=repo-fix",
        {"decision": "retry", "reason": "the tool is back"},
    )
    assert answer.status_code == 400
    page = answer.content.decode()
    assert '<p class="message error" role="alert">tick the letters to decide' in page
    assert 'value="the tool is back" autofocus' in page
    # Its links lead to the queue, not to the address the form was posted to.
    assert f'href="{QUEUE}?status=decided&amp;team=repo-fix"' in page
    assert 'href="?' not in page
    answer = as_reviewer.post(f"{QUEUE}/decide", {"letter": three[1], "decision": "retry"})
    page = answer.content.decode()
    assert answer.status_code == 400 and "say why" in page
    assert f'value="{three[1]}" form="several" checked>' in page
    assert f'value="{three[0]}" form="several">' in page
    assert statuses(three) == ["open"] * 3


def test_more_letters_than_one_decision_takes_are_refused_whole(as_reviewer, three):
    many = three + [f"r-0000000000ff:{n}" for n in range(1, letters.AT_ONCE)]
    end = DjangoJournal().last_position()
    answer = as_reviewer.post(
        f"{QUEUE}/decide", {"letter": many, "decision": "retry", "reason": "r"}
    )
    assert answer.status_code == 400
    assert f"at most {letters.AT_ONCE} letters at once; {len(many)} were chosen" in unescape(
        answer.content.decode()
    )
    assert DjangoJournal().last_position() == end


def test_only_a_reviewer_decides_and_only_with_the_pages_token(owner, reviewer, three):
    form = {"letter": three, "decision": "retry", "reason": "r"}
    end = DjangoJournal().last_position()
    assert client_for(owner).post(f"{QUEUE}/decide", form).status_code == 403
    strict = client_for(reviewer, enforce_csrf_checks=True)
    assert strict.post(f"{QUEUE}/decide", form).status_code == 403
    assert Client().post(f"{QUEUE}/decide", form).status_code == 302  # to the login page
    assert client_for(reviewer).get(f"{QUEUE}/decide").status_code == 405
    assert DjangoJournal().last_position() == end


def test_the_api_decides_several_and_names_each_refusal(token, three):
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    letters.decide_letter(three[0], "retry", "ann", "first")
    body = {"letters": [*three, three[1], "r-0000000000ee:1"], "decision": "discard"}
    body["reason"] = "obsolete"
    answer = api.post("/api/review/dead-letters/decide", body, content_type="application/json")
    assert answer.status_code == 200, answer.content
    found = answer.json()
    assert [d["letter_id"] for d in found["decided"]] == three[1:]
    assert {d["status"] for d in found["decided"]} == {"discarded"}
    assert {d["decided_by"] for d in found["decided"]} == {"reviewer"}
    assert found["refused"] == [
        {
            "letter_id": three[0],
            "detail": f"dead letter {three[0]} has already been decided (retried by ann)",
        },
        {"letter_id": "r-0000000000ee:1", "detail": "no dead letter r-0000000000ee:1"},
    ]


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        ({"letters": [], "decision": "retry", "reason": "r"}, ["body", "letters"]),
        ({"letters": ["a b"], "decision": "retry", "reason": "r"}, ["body", "letters", 0]),
        ({"letters": ["r-1:1"], "decision": "redo", "reason": "r"}, ["body", "decision"]),
        ({"letters": ["r-1:1"], "decision": "retry", "reason": " "}, ["body", "reason"]),
        ({"letters": ["r-1:1"] * 101, "decision": "retry", "reason": "r"}, ["body", "letters"]),
        ({"letters": ["r-1:1"], "decision": "retry", "reason": "r", "x": 1}, ["body", "x"]),
    ],
)
def test_the_api_refuses_a_body_it_cannot_use_naming_the_field(token, three, body, loc):
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    end = DjangoJournal().last_position()
    answer = api.post("/api/review/dead-letters/decide", body, content_type="application/json")
    assert answer.status_code == 422, answer.content
    assert answer.json()["detail"][0]["loc"] == loc
    assert DjangoJournal().last_position() == end


def test_the_api_refuses_who_may_not_decide(owner, three):
    from dashboard.models import ApiToken

    api = Client(HTTP_AUTHORIZATION=f"Bearer {ApiToken.issue(owner, 'tests')[1]}")
    body = {"letters": three, "decision": "retry", "reason": "r"}
    answer = api.post("/api/review/dead-letters/decide", body, content_type="application/json")
    assert answer.status_code == 403
    assert statuses(three) == ["open"] * 3


def test_the_service_refuses_too_many_or_an_unknown_decision_before_deciding_any(three):
    end = DjangoJournal().last_position()
    many = three + [f"r-0000000000ff:{n}" for n in range(1, letters.AT_ONCE)]
    with pytest.raises(letters.LetterError, match=f"at most {letters.AT_ONCE} dead letters"):
        letters.decide_letters(many, "retry", "ann", "r")
    with pytest.raises(letters.LetterError, match="retried or discarded, not 'redo'"):
        letters.decide_letters(three, "redo", "ann", "r")
    # One letter alone too: anything but the two was once taken as a discard.
    with pytest.raises(letters.LetterError, match="retried or discarded, not 'Retry'"):
        letters.decide_letter(three[0], "Retry", "ann", "r")
    assert DjangoJournal().last_position() == end
    # The same id twice is one decision.
    found = letters.decide_letters([three[0], three[0]], "retry", "ann", "r")
    assert (found.decided, found.refused) == ([three[0]], {})


@pytest.fixture
def two_causes(owner) -> dict[str, list[str]]:
    """Dead letters of two causes: a test runner gone, and a reviewer who never replied."""
    from journal_store.journal import DjangoJournal as Journal
    from runtime.events import DeadLettered

    causes = {"runner": "the test runner died (exit 137)", "reviewer": "no reply by turn 9"}
    found: dict[str, list[str]] = {name: [] for name in causes}
    for n in range(1, 7):
        cause = "runner" if n % 2 else "reviewer"
        run_id = f"r-ca05e000000{n}"
        letter_id = f"{run_id}:1"
        letter = DeadLettered(run_id=run_id, letter_id=letter_id, reason=causes[cause], attempts=2)
        Journal().append(f"run-{run_id}", [letter], 0)
        found[cause].append(letter_id)
    projection.catch_up()
    return found


def test_a_queue_searched_for_a_cause_lists_its_letters_and_decides_them_together(
    as_reviewer, token, two_causes
):
    page = as_reviewer.get(f"{QUEUE}?q=Test+Runner").content.decode()
    listed = re.findall(r'name="listed" value="([^"]+)"', page)
    assert sorted(listed) == sorted(two_causes["runner"])
    assert 'value="Test Runner"' in page  # the box says what the list holds
    assert f'href="{QUEUE}?status=open">every item</a>' in page
    # The poll for new items and the pages keep the words.
    assert "q=Test+Runner" in re.search(r'id="newer-items"[^>]*hx-get="([^"]+)"', page).group(1)
    answer = as_reviewer.post(
        f"{QUEUE}/decide?q=Test+Runner",
        {"every": "1", "listed": listed, "decision": "retry", "reason": "runner fixed"},
        follow=True,
    )
    assert answer.redirect_chain[-1][0] == f"{QUEUE}?q=Test+Runner"
    assert told(answer.content.decode()).startswith("ok: 3 dead letters retried")
    assert statuses(two_causes["runner"]) == ["retried"] * 3
    assert statuses(two_causes["reviewer"]) == ["open"] * 3
    # The API searches alike.
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    found = api.get("/api/review/dead-letters", {"q": "no reply"}).json()
    assert sorted(item["letter_id"] for item in found["items"]) == sorted(two_causes["reviewer"])


@pytest.mark.parametrize("words", ["x" * 201, "a\x01b"])
def test_a_search_the_queue_cannot_take_is_refused_naming_it(as_reviewer, token, words):
    answer = as_reviewer.get(QUEUE, {"q": words})
    assert answer.status_code == 400
    assert '<li id="q-error"><strong>Holding the words</strong>: ' in answer.content.decode()
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    answer = api.get("/api/review/dead-letters", {"q": words})
    assert answer.status_code == 422
    assert [e["loc"] for e in answer.json()["detail"]] == [["query", "q"]]


@pytest.mark.parametrize("path", ["dead-letters", "conflicts"])
@pytest.mark.parametrize(
    ("words", "named"),
    [
        ("alert\u202e", "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
        ("\u2067alert\u2069", "U+2067 (RIGHT-TO-LEFT ISOLATE)"),
        ("al\u200bert", "U+200B (ZERO WIDTH SPACE)"),
        ("al\x85ert", "a control character"),  # C1, as the search page refuses it
    ],
)
def test_a_queues_search_refuses_an_unseen_character_naming_it_as_search_does(
    as_reviewer, token, path, words, named
):
    """The search page's check (journal_store/search.py unsearchable), its message too: the
    queue took a bidi override and echoed it back in its search box."""
    said = f"the search {search.unsearchable(words)}"
    assert named in said
    with pytest.raises(search.BadQuery, match=re.escape(said)):
        search.words(words)
    page = as_reviewer.get(f"/review/{path}", {"q": words})
    assert page.status_code == 400
    assert unescape(page.content.decode()).count(said) == 1
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    answer = api.get(f"/api/review/{path}", {"q": words})
    assert answer.status_code == 422
    assert [(e["loc"], e["msg"]) for e in answer.json()["detail"]] == [(["query", "q"], said)]


@pytest.mark.parametrize("words", ["al\u200cert", "al\u200dert"])
def test_a_queues_search_keeps_the_joiners_as_search_does(as_reviewer, token, words):
    assert as_reviewer.get(QUEUE, {"q": words}).status_code == 200
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert api.get("/api/review/dead-letters", {"q": words}).status_code == 200
