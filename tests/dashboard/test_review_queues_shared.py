"""Every review queue is described once (journal_store/queues.py) and kept, listed and shown by
one mechanism: the projector, the API's list and the page agree on which items are open and
which decided, whatever the queue."""

from __future__ import annotations

import pytest
from django.test import Client

from dashboard import queries
from journal_store import projection, queues
from journal_store.journal import DjangoJournal
from runtime.events import ConflictParked, ConflictResolved, DeadLettered, DeadLetterRetried

pytestmark = pytest.mark.django_db
R = {"run_id": "r-q"}


def letter(n: int) -> DeadLettered:
    return DeadLettered(**R, letter_id=f"r-q:{n}", reason="stuck", attempts=2)


def parked(n: int) -> ConflictParked:
    return ConflictParked(
        **R,
        conflict_id=f"c-{n}",
        subject="order:1",
        predicate="status",
        conflict_type="state",
        claims=[{"claim_id": "a", "value": "paid"}, {"claim_id": "b", "value": "refunded"}],
    )


# Per queue: its URL, two items opened, a decision on the first, and that decision's outcome.
CASES = {
    "dead_letters": (
        "dead-letters",
        [letter(1), letter(2)],
        DeadLetterRetried(**R, letter_id="r-q:1", by="ann", reason="again"),
        "retried",
    ),
    "conflicts": (
        "conflicts",
        [parked(1), parked(2)],
        ConflictResolved(**R, conflict_id="c-1", by="ann", reason="bank", choice="a", value="paid"),
        "resolved",
    ),
}


def test_the_queues_are_kept_by_one_projector_each_reading_what_its_queue_names():
    for queue in queues.QUEUES:
        projector = projection.PROJECTORS[queue.name]
        assert isinstance(projector, projection.QueueProjector) and projector.queue is queue
        assert projector.kinds == queue.kinds and projector.models == (queue.model,)
    assert {q.name for q in queues.QUEUES} == set(CASES)


@pytest.mark.parametrize("queue", queues.QUEUES, ids=lambda q: q.name)
def test_the_page_the_api_and_the_query_list_the_same_items(queue, as_reviewer, token):
    path, opened, decision, outcome = CASES[queue.name]
    journal = DjangoJournal()
    stream = f"queue-test-{queue.name}"
    journal.append(stream, [*opened, decision], 0)
    first, second = (getattr(e, queue.key) for e in opened)
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")

    def listed(status: str) -> list[str]:
        items = api.get(f"/api/review/{path}", {"status": status}).json()["items"]
        return [item[queue.key] for item in items]

    def shown(status: str) -> list[str]:
        page = as_reviewer.get(f"/review/{path}", {"status": status}).context["page"]
        return [getattr(item, queue.key) for item in page.items]

    def built(status: str) -> list[str]:
        return [getattr(item, queue.key) for item in queries.queue_items(queue, status)]

    assert listed("open") == shown("open") == built("open") == [second]
    assert listed(outcome) == shown("decided") == built("decided") == built(outcome) == [first]
    assert listed("decided") == [first]  # the page's word for any outcome, in the API too
    assert listed("all") == shown("all") == built("all") == [second, first]  # newest first
    decided = queue.model._default_manager.get(**{queue.key: first})
    assert (decided.status, decided.decided_by, decided.decision_reason) == (
        outcome,
        "ann",
        decision.reason,
    )
    schema = api.get("/api/openapi.json").json()
    [param] = schema["paths"][f"/api/review/{path}"]["get"]["parameters"][:1]
    assert param["name"] == "status"
    assert param["schema"]["enum"] == ["open", *queue.outcomes, "decided", "all"]


@pytest.mark.parametrize("queue", queues.QUEUES, ids=lambda q: q.name)
def test_an_item_opened_again_is_open_again_and_a_rebuild_agrees(queue):
    _, opened, decision, _ = CASES[queue.name]
    journal = DjangoJournal()
    journal.append("queue-test", [opened[0], decision], 0)
    projection.catch_up()
    journal.append("queue-test-again", [opened[0].model_copy(update={"id": "f" * 32})], 0)
    projection.catch_up()
    key = getattr(opened[0], queue.key)

    def row():
        item = queue.model._default_manager.get(**{queue.key: key})
        return (item.status, item.decided_by, item.decided_at, item.decision_reason)

    assert row() == (queues.OPEN, "", None, "")
    projection.rebuild([queue.name])
    assert row() == (queues.OPEN, "", None, "")


@pytest.mark.parametrize("queue", queues.QUEUES, ids=lambda q: q.name)
def test_a_queue_longer_than_a_page_links_to_its_next_page(queue, as_reviewer):
    """Twenty-five items a page, newest first, with links between the pages that keep the
    status shown; the queues had no links (their pager was the run tabs' one, which draws
    nothing here), so the 26th oldest open item could not be reached from the page. The links
    go on from a position (dashboard/queue_pages.py), not to a page by number."""
    path = CASES[queue.name][0]
    opened = [letter(n) if queue.name == "dead_letters" else parked(n) for n in range(1, 28)]
    DjangoJournal().append(f"queue-test-{queue.name}", opened, 0)
    first = as_reviewer.get(f"/review/{path}", {"status": "all"})
    body = first.content.decode()
    older = first.context["page"].items[-1].position  # the 25th newest: the 3rd item opened
    assert f'href="/review/{path}?status=all&amp;before={older}" rel="next">Older →' in body
    assert "Newer" not in body and "Page " not in body
    second = as_reviewer.get(f"/review/{path}", {"status": "all", "before": older})
    body = second.content.decode()
    newer = second.context["page"].items[0].position
    assert f'href="/review/{path}?status=all&amp;after={newer}" rel="prev">← Newer' in body
    assert "Older" not in body
    oldest = f'id="{getattr(opened[0], queue.key)}"'  # its card's anchor
    assert oldest in body and oldest not in first.content.decode()


@pytest.mark.parametrize("queue", queues.QUEUES, ids=lambda q: q.name)
def test_a_runs_link_to_its_item_finds_it_behind_a_page_of_newer_ones(queue, as_reviewer):
    """The run's header links to its items in the queue; the link showed the queue's first
    page, which past 25 newer items of other runs did not hold the item linked to."""
    from runtime.events import TeamStarted

    path = CASES[queue.name][0]
    started = TeamStarted(**R, team="solo", scenario="solo-fix", task="t")
    mine = letter(1) if queue.name == "dead_letters" else parked(1)
    others = [
        (letter(n) if queue.name == "dead_letters" else parked(n)).model_copy(
            update={"run_id": "r-other"}
        )
        for n in range(2, 30)
    ]
    journal = DjangoJournal()
    journal.append("run-r-q", [started], 0)
    journal.append(f"queue-test-{queue.name}", [mine, *others], 0)
    projection.catch_up()
    header = as_reviewer.get("/runs/r-q/").content.decode()
    start = header.index(f'href="/review/{path}?')
    link = header[start + 6 : header.index('"', start + 6)].replace("&amp;", "&")
    page = as_reviewer.get(link).content.decode()
    assert f'id="{getattr(mine, queue.key)}"' in page
    # It says the list is the run's, and links to every run's.
    assert f'>r-q</a> only: <a href="/review/{path}?status=all">every run' in page


@pytest.mark.parametrize("queue", queues.QUEUES, ids=lambda q: q.name)
def test_the_api_lists_one_runs_items_as_the_page_does(queue, as_reviewer, token):
    """`run` names one run, on the page (where a run's header links) and in the API; the API
    took no `run`, ignored it, and answered every run's items to a script asking for one's."""
    path = CASES[queue.name][0]
    mine = letter(1) if queue.name == "dead_letters" else parked(1)
    other = (letter(2) if queue.name == "dead_letters" else parked(2)).model_copy(
        update={"run_id": "r-other"}
    )
    DjangoJournal().append(f"queue-test-{queue.name}", [mine, other], 0)
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    answer = api.get(f"/api/review/{path}", {"status": "all", "run": "r-q"}).json()
    page = as_reviewer.get(f"/review/{path}", {"status": "all", "run": "r-q"}).context["page"]
    key = getattr(mine, queue.key)
    assert [item[queue.key] for item in answer["items"]] == [key]
    assert [getattr(item, queue.key) for item in page.items] == [key]
    assert answer["next"] is None  # no page after it
