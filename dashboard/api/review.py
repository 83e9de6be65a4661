"""/api/review: the review queues (claim conflicts, dead letters) and the decisions on them.

Both queues are listed by one endpoint builder, from their description in
journal_store/queues.py; the decisions differ (a choice among claims; retry or discard).
"""

# No `from __future__ import annotations`: django-ninja reads the annotations at runtime.

from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal

from django.http import HttpRequest
from ninja import Query, Router, Schema, Status
from pydantic import Field, WithJsonSchema, create_model

from dashboard import asked, queries
from dashboard.access import require_decide, role_of
from dashboard.api.auth import user_name
from dashboard.api.errors import invalid
from dashboard.api.paging import READ_AS_POSITION, after_position
from dashboard.api.review_schemas import (
    ConflictOut,
    DecisionIn,
    LetterOut,
    LettersIn,
    LettersOut,
    ResolveIn,
    with_cards,
)
from dashboard.api.schemas import Error
from dashboard.asked import BadQuery
from journal_store import queues
from journal_store.models import Conflict, DeadLetter
from services import letters, review

router = Router(tags=["review"])

NEXT = (
    "the position the next page goes on from, as `before` (newest first) or, given `after`, as "
    "`after`; null on the last page"
)
BEFORE = "newest first, the items opened before this position: the `next` of the page before"
OFFSET_GONE = (
    "the items are paged by `before` (newest first) or `after` (oldest first), the `next` of "
    "the page before, not by an offset, whose cost grew with how far in a page was; an offset "
    "of 0, the first page, is taken"
)


def listing(
    path: str,
    queue: queues.Queue,
    out: type[Schema],
    adds: Callable[[Sequence[Any]], None] | None = None,
) -> None:
    """GET /api/review/<path>: the queue's items, newest first, open ones unless asked (with what
    `adds` adds to the page's items at once, beyond their rows); a page at a time, each going on
    from the position of the last item of the one before (`next`): an item's position is its opening
    event's, which no other item has, so no item is shown twice or skipped, whatever opens meanwhile
    (an offset read every item before the page, and one opened at the top pushed the others down a
    place)."""
    # The schema lists this queue's statuses (asked.queue_statuses: its outcomes, "decided"
    # for any of them, as the page's filter says it); what to take is the page's to decide
    # (asked.queue_filter): a blank status is the open items, and one it cannot take is
    # refused in the page's words, where a Literal here answered "" with a 422 the page
    # does not give, and an unknown status in pydantic's words.
    statuses = {"type": "string", "enum": list(asked.queue_statuses(queue))}
    Shown = Annotated[str, WithJsonSchema(statuses)]

    # `run`: one run's items, as the page's `run` (a run's header links there); unknown to
    # the API, it was ignored, and a script asking for one run's items got every run's. One
    # that is no run id is a 422, as on the page a 400: it was an empty list. `q`: the items
    # holding those words (as the page's search box). The runs a
    # team, a scenario, a model and the days they started in choose, as /api/metrics does.
    def list_items(
        request: HttpRequest,
        status: Shown = queues.OPEN,
        run: str = "",
        q: str = "",
        team: str = "",
        scenario: str = "",
        model: str = "",
        since: str = "",
        until: str = "",
        # A script polling for what arrived asks again after the newest `position` it saw,
        # as the queue's page does (/review/<queue>/newer).
        after: Annotated[int, READ_AS_POSITION] = after_position("oldest first, the items opened"),
        # Newest first, the next page goes on before the last item's position.
        before: Annotated[int, READ_AS_POSITION] = Query(  # type: ignore[type-arg]
            0, ge=0, le=asked.POSITION_MAX, description=BEFORE
        ),
        limit: int = Query(100, ge=1, le=1_000),  # type: ignore[type-arg]
        offset: int = Query(0, ge=0, le=1_000_000_000, description=f"0 only: {OFFSET_GONE}"),  # type: ignore[type-arg]
    ) -> Any:
        asked_for = {"status": status, "run": run, "q": q, "team": team, "scenario": scenario}
        asked_for |= {"model": model, "since": since, "until": until}
        problems: dict[str, str] = {}
        try:
            shown, one, runs, words = asked.queue_filter(queue, asked_for)
        except BadQuery as exc:
            problems |= exc.problems
        # A blank `after` or `before` is not asked.
        polled, paged = (bool(request.GET.get(name, "").strip()) for name in ("after", "before"))
        if polled and paged:
            problems["before"] = "newest first only: given `after`, the items come oldest first"
        if offset:  # where it was: scripts sending offset=0 for the first page go on working
            problems["offset"] = OFFSET_GONE
        if problems:
            raise invalid("query", problems)
        items = queries.queue_items(queue, shown, one, runs, words=words)
        if polled:
            # Oldest first after a position, as a run's minutes are paged: a poller that asks
            # again after the highest position it got misses none, however many arrived
            # between two polls. Newest first, it got the newest `limit` and never saw the
            # ones below.
            items = items.filter(position__gt=after).order_by("position")
        elif paged:
            items = items.filter(position__lt=before)  # newest first, as the page lists them
        found = list(items[: limit + 1])
        more = len(found) > limit
        if adds is not None:
            adds(found[:limit])
        return {"items": found[:limit], "next": found[limit - 1].position if more else None}

    list_items.__name__ = f"list_{queue.name}"  # its operation id: dashboard_api_list_<name>
    page = create_model(
        f"{queue.name.title().replace('_', '')}PageOut",  # DeadLettersPageOut, ...
        __base__=Schema,
        __doc__=f"A page of {queue.name.replace('_', ' ')}, and where the next one starts.",
        items=(list[out], ...),  # type: ignore[valid-type]
        next=(int | None, Field(description=NEXT)),
    )
    router.get(path, response=page)(list_items)


listing("/conflicts", queues.CONFLICTS, ConflictOut, with_cards)
listing("/dead-letters", queues.DEAD_LETTERS, LetterOut)


@router.post(
    "/conflicts/{conflict_id}/resolve",
    response={200: ConflictOut, 400: Error, 403: Error, 404: Error, 409: Error},
)
def resolve_conflict(request: HttpRequest, conflict_id: str, body: ResolveIn) -> Any:
    require_decide(request.user)
    review.resolve(
        conflict_id,
        body.choice,
        user_name(request),
        body.reason,
        ruling_id=body.ruling_id,
        role=role_of(request.user),
    )
    return Status(200, Conflict.objects.get(conflict_id=conflict_id))


@router.post("/dead-letters/decide", response={200: LettersOut, 403: Error})
def decide_letters(request: HttpRequest, body: LettersIn) -> Any:
    """One decision, with one reason, on several dead letters: each decided on its own, as if
    alone. A letter decided meanwhile (or that does not exist) is refused by itself, named in
    `refused` with why, and the others still go through."""
    require_decide(request.user)
    found = letters.decide_letters(body.letters, body.decision, user_name(request), body.reason)
    decided = DeadLetter.objects.in_bulk(found.decided)
    return {
        "decided": [decided[letter_id] for letter_id in found.decided],
        "refused": [{"letter_id": k, "detail": v} for k, v in found.refused.items()],
    }


@router.post(
    "/dead-letters/{letter_id}/{decision}",
    response={200: LetterOut, 400: Error, 403: Error, 404: Error, 409: Error},
)
def decide_letter(
    request: HttpRequest, letter_id: str, decision: Literal["retry", "discard"], body: DecisionIn
) -> Any:
    require_decide(request.user)
    letters.decide_letter(letter_id, decision, user_name(request), body.reason)
    return Status(200, DeadLetter.objects.get(letter_id=letter_id))
