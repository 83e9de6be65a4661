"""How long review items have waited for a person. The queues listed their items newest first
with the date each was opened, and the metrics counted what was undecided: nowhere said that the
oldest dead letter had waited three days. Now each card says how long its item has waited (or
waited, once decided), each queue names its oldest open item, and the metrics page and
`/api/metrics` name the oldest of the runs they chose."""

from __future__ import annotations

import re
from datetime import timedelta
from html import unescape
from urllib.parse import quote

import pytest
from django.utils.timezone import now

from bench import store_rows
from journal_store import projection
from journal_store.models import Conflict, DeadLetter
from services import letters, review
from services.control import Control
from tests.dashboard.conftest import run_of
from tests.dashboard.polls import park

pytestmark = pytest.mark.django_db


def aged(model, pk: str, **ago: float) -> None:
    """The item opened `ago` before now (the time its event was recorded, as the projector
    keeps it): the tests cannot wait days. Its run's `waiting_since` follows, as the runs
    projector keeps it from the same event's time."""
    model.objects.filter(pk=pk).update(created_at=now() - timedelta(**ago))
    store_rows.waiting_since()


def oldest_line(page: str) -> str:
    found = re.search(r'<p id="oldest-open">(.*?)</p>', page, re.S)
    assert found, "the page names no oldest open item"
    return found.group(1)


@pytest.fixture
def waiting(owner) -> dict[str, str]:
    """Two runs of two scenarios: two dead letters in the first, one in the second and two
    conflicts. The second run's letter is opened last in the journal but is the oldest by its
    time; the first run's second letter, just opened, has waited less than a minute."""
    first, second = run_of("first-flight", steps=1), run_of("premature-done", steps=1)
    older = Control(first).dead_letter("a step kept failing", 3, "Boom").letter_id
    newest = Control(first).dead_letter("the step failed again", 3, "Boom").letter_id
    oldest = Control(second).dead_letter("the tests kept failing", 2, "Bang").letter_id
    park(second, "c-wait")
    park(first, "c-new")
    projection.catch_up()
    aged(DeadLetter, older, days=2, minutes=1)
    aged(DeadLetter, oldest, days=3, minutes=1)
    aged(Conflict, "c-wait", hours=5, seconds=30)
    return {"first": first, "second": second, "older": older, "oldest": oldest, "newest": newest}


def test_each_open_card_says_when_it_was_opened_and_how_long_it_has_waited(as_owner, waiting):
    page = as_owner.get("/review/dead-letters").content.decode()
    assert page.count("· dead-lettered <time datetime=") == 3
    assert "· waiting 3\xa0days" in page and "· waiting 2\xa0days" in page
    # Not "0 minutes", as if nobody waited.
    assert "· waiting less than a minute" in page and "0\xa0minutes" not in page
    page = as_owner.get("/review/conflicts").content.decode()
    assert page.count("· parked <time datetime=") == 2
    assert "· waiting 5\xa0hours" in page


def test_a_queue_names_its_oldest_open_item_by_the_time_it_was_opened(as_owner, waiting):
    line = oldest_line(as_owner.get("/review/dead-letters").content.decode())
    # Listed newest first by journal position, the older by its time is still the one named.
    assert "The oldest open dead letter has waited <strong>3\xa0days</strong>" in line
    assert f'href="#{waiting["oldest"]}">{waiting["oldest"]}</a>' in line
    assert f">{waiting['second']}</a>" in line
    line = oldest_line(as_owner.get("/review/conflicts").content.decode())
    assert "The oldest open conflict has waited <strong>5\xa0hours</strong>" in line

    # One run's items: that run's oldest.
    first = as_owner.get(f"/review/dead-letters?run={waiting['first']}").content.decode()
    assert f'href="#{waiting["older"]}"' in oldest_line(first)
    # The decided items have nobody waiting on them; all of them are the queue's history.
    for shown in ("decided", "all"):
        page = as_owner.get(f"/review/dead-letters?status={shown}").content.decode()
        assert 'id="oldest-open"' not in page
    # One run's single conflict: its card says how long it has waited, and that is all.
    page = as_owner.get(f"/review/conflicts?run={waiting['first']}").content.decode()
    assert 'id="oldest-open"' not in page and "· waiting less than a minute" in page


def test_when_the_oldest_is_decided_the_next_oldest_is_named(as_owner, reviewer, waiting):
    letters.decide_letter(waiting["oldest"], "discard", "rosa", "not worth retrying")
    projection.catch_up()
    line = oldest_line(as_owner.get("/review/dead-letters").content.decode())
    assert f'href="#{waiting["older"]}"' in line and "2\xa0days" in line

    for letter in ("older", "newest"):
        letters.decide_letter(waiting[letter], "retry", "rosa", "try again")
    projection.catch_up()
    page = as_owner.get("/review/dead-letters").content.decode()
    assert 'id="oldest-open"' not in page and "No open dead letters." in page


def test_a_decided_card_says_how_long_the_item_waited(as_owner, waiting):
    letters.decide_letter(waiting["oldest"], "discard", "rosa", "not worth retrying")
    review.resolve("c-wait", "0", "rosa", "the first claim holds")
    projection.catch_up()
    # Decided now, opened 3 days and 5 hours ago.
    page = as_owner.get("/review/dead-letters?status=decided").content.decode()
    assert "Discarded by rosa on" in page and ", after 3\xa0days: " in page
    page = as_owner.get("/review/conflicts?status=decided").content.decode()
    assert "Resolved by rosa on" in page and ", after 5\xa0hours: " in page


def test_the_metrics_name_the_oldest_item_of_the_runs_they_chose(as_owner, waiting):
    page = as_owner.get("/metrics").content.decode()
    found = re.search(r'<span class="small" id="oldest-open">(.*?)</span>', page, re.S)
    assert found, "the metrics name no oldest open item"
    assert "the oldest has waited 3\xa0days" in found.group(1)
    assert (
        f'href="/review/dead-letters?status=open&amp;run={waiting["second"]}'
        f'&amp;q={quote(waiting["oldest"])}#{waiting["oldest"]}"' in found.group(1)
    )
    oldest = as_owner.get("/api/metrics").json()["oldest_open"]
    assert {k: oldest[k] for k in ("queue", "id", "run_id")} == {
        "queue": "dead_letters",
        "id": waiting["oldest"],
        "run_id": waiting["second"],
    }
    assert 3 * 86400 < oldest["waited"] < 4 * 86400

    # Chosen by scenario: the first run alone, whose letter is the younger.
    oldest = as_owner.get("/api/metrics?scenario=first-flight").json()["oldest_open"]
    assert (oldest["id"], oldest["run_id"]) == (waiting["older"], waiting["first"])


def test_the_metrics_link_lands_on_the_oldest_however_many_wait_after_it(as_owner, waiting):
    # Thirty letters newer than the oldest, in its run: the run's open letters, newest first,
    # would put the oldest on the second page.
    for n in range(30):
        Control(waiting["second"]).dead_letter(f"failed again ({n})", 3, "Bang")
    projection.catch_up()
    page = as_owner.get("/metrics").content.decode()
    found = re.search(r'<span class="small" id="oldest-open">.*?href="([^"]+)"', page, re.S)
    assert found, "the metrics name no oldest open item"
    address, anchor = unescape(found.group(1)).split("#")
    assert anchor == waiting["oldest"]
    landed = as_owner.get(address).content.decode()
    assert f'id="{waiting["oldest"]}"' in landed


def test_the_metrics_name_none_when_nothing_waits(as_owner, waiting):
    for letter in ("oldest", "older", "newest"):
        letters.decide_letter(waiting[letter], "retry", "rosa", "try again")
    for conflict in ("c-wait", "c-new"):
        review.resolve(conflict, "none", "rosa", "neither claim holds")
    projection.catch_up()
    assert as_owner.get("/api/metrics").json()["oldest_open"] is None
    page = as_owner.get("/metrics").content.decode()
    assert '<dd id="undecided">none</dd>' in page and 'id="oldest-open"' not in page


def test_a_wait_reads_in_words_and_never_as_no_time():
    from dashboard.templatetags.minutes import waited

    opened = now() - timedelta(days=1, hours=2, minutes=3)
    assert waited(opened) == "1\xa0day, 2\xa0hours"
    assert waited(opened, opened + timedelta(minutes=90)) == "1\xa0hour, 30\xa0minutes"
    assert waited(opened, opened + timedelta(seconds=59)) == "less than a minute"
    # Opened by a clock ahead of this one (another machine's, an imported journal's).
    assert waited(now() + timedelta(hours=1)) == "less than a minute"
    assert waited(None) == ""


def test_the_oldest_on_a_later_page_is_linked_on_that_page(as_owner, owner):
    """Twenty-five items a page, newest first: the oldest of 27 is on an older page, and the
    line links there (under the page's filters), where it linked to a page that did not hold
    it. The page is the one going on before the open item opened after it (it is that page's
    first), not a page by number."""
    from journal_store.journal import DjangoJournal
    from runtime.events import DeadLettered

    opened = [
        DeadLettered(run_id="r-q", letter_id=f"r-q:{n}", reason="stuck", attempts=2)
        for n in range(1, 28)
    ]
    DjangoJournal().append("run-r-q", opened, 0)
    projection.catch_up()
    aged(DeadLetter, "r-q:1", days=1)
    following = DeadLetter.objects.get(letter_id="r-q:2").position
    line = oldest_line(as_owner.get("/review/dead-letters").content.decode())
    link = f"/review/dead-letters?status=open&amp;before={following}#r-q:1"
    assert f'href="{link}">r-q:1</a>' in line
    assert line.endswith(", on an older page.")
    page = as_owner.get(unescape(link)).content.decode()
    assert 'id="r-q:1"' in page
    line = oldest_line(page)
    assert 'href="#r-q:1"' in line and "page" not in line
    line = oldest_line(as_owner.get("/review/dead-letters?run=r-q").content.decode())
    link = f"/review/dead-letters?status=open&amp;run=r-q&amp;before={following}#r-q:1"
    assert f'href="{link}"' in line
    # The oldest by its time is the newest by its place: on the first page, linked from a
    # later one, which says it is newer.
    aged(DeadLetter, "r-q:1", seconds=0)
    aged(DeadLetter, "r-q:27", days=2)
    older = DeadLetter.objects.get(letter_id="r-q:3").position
    line = oldest_line(as_owner.get(f"/review/dead-letters?before={older}").content.decode())
    assert 'href="/review/dead-letters?status=open#r-q:27"' in line
    assert line.endswith(", on a newer page.")


def test_a_queue_of_a_run_this_store_does_not_hold_says_so(as_owner, waiting):
    """`?run=r-nope` answered "No open conflicts.", as a run with nothing to decide would."""
    page = as_owner.get("/review/conflicts?run=r-nope").content.decode()
    assert "No open conflicts in run" in page and "This store holds no run" in page
    assert '<span class="mono">r-nope</span>: is its id mistyped?' in page
    # A run that is here, with nothing open in this queue: no such doubt.
    first = waiting["first"]
    letters.decide_letter(waiting["older"], "retry", "rosa", "again")
    letters.decide_letter(waiting["newest"], "retry", "rosa", "again")
    projection.catch_up()
    page = as_owner.get(f"/review/dead-letters?run={first}").content.decode()
    assert "No open dead letters in run" in page and "This store holds no run" not in page
