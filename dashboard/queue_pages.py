"""A review queue's page a stretch at a time, newest first, by the positions the queues' API
pages by (dashboard/api/review.py): `before` a position, the items opened before it (the
Older link: the last item a page showed), `after` one, the items opened after it (the Newer
link: the first it showed), where the page went to a page by its number.

A page by number was a count of every item the filters chose and an OFFSET: the 400th page
read the 10,000 items before it to show 25, and an item opened or decided while a person
paged moved every item after it a place, so that the next page began with one already shown
or skipped one. An item's position is its opening event's, which no other item has and which
never changes: a page after one is a seek in the index of the status and the position
(migration 0036) and a read of the rows it shows, however far in, and an item opened meanwhile
takes its own place without moving the others.

A cursor is a position of an item of this queue (any status, any run): one that is no
position is malformed, and one that no item of the queue is at was never a link a page drew
(a position of another queue's item, a number typed): both are refused by name, where a
page of whatever lay beyond it would look like the page asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from dashboard import asked, listing
from dashboard.asked import BadQuery
from journal_store import queues

# An address of a queue's page as it was paged by number (a bookmark, a link kept): the first
# page is the first page still, and a later one is named rather than shown as the first.
PAGE_GONE = (
    "the queue no longer goes to a page by its number: follow its Older link from the newest "
    "items (a page by number read every item before it)"
)
BOTH = "a page goes on from one place: `before` (older items) or `after` (newer), not both"
# The filters a queue's page names in other words than their query's (as the runs list's,
# dashboard/listing.LABELS): what a refusal on the page or its poll calls them, where it said
# "q: ..." of the box labelled "Holding the words" (queue.html). The dates are the metrics
# page's, which chose the runs (its link), named as its form labels them (listing.DATES).
# The API names its parameters.
LABELS = {"q": "Holding the words", **listing.DATES}


@dataclass(frozen=True)
class Place:
    """Where a page starts: `before` a position (older items), `after` one (newer), or at the
    newest item (neither)."""

    before: int | None = None
    after: int | None = None

    @property
    def first(self) -> bool:
        return self.before is None and self.after is None


def place_of(queue: queues.Queue, params: Any) -> Place:
    """The place a queue's page's query asks for; BadQuery naming each parameter it cannot
    take: a page number past the first, a `before` or `after` that is no position, or no
    position of an item of this queue, or both at once."""
    problems: dict[str, str] = {}
    try:
        if asked.page_of(params) > 1:
            problems["page"] = PAGE_GONE
    except BadQuery as exc:
        problems |= exc.problems
    found: dict[str, int | None] = {}
    for name in ("before", "after"):
        try:
            found[name] = asked.position_of(params, name)
        except BadQuery as exc:
            problems |= exc.problems
    before, after = found.get("before"), found.get("after")
    if before is not None and after is not None:
        problems["before"] = BOTH
    for name, at in found.items():
        if at is not None and name not in problems and not item_at(queue, at):
            noun = queue.name.replace("_", " ")[:-1]  # "dead letter", "conflict"
            problems[name] = (
                f"no {noun} is at position {at}: follow the Older or Newer link a page of the "
                "queue drew"
            )
    if problems:
        raise BadQuery(problems)
    return Place(before, after)


def item_at(queue: queues.Queue, position: int) -> bool:
    # A seek in the position's index (migration 0036); items are never deleted.
    return bool(queue.model._default_manager.filter(position=position).exists())


@dataclass(frozen=True)
class Page:
    """A page of a queue's items, newest first, and the places of the pages beside it."""

    items: list[Any]
    older: int | None  # the next older page's `before` (the last item's position); None: none
    newer: int | None  # the next newer page's `after` (the first item's position); None: none
    place: Place

    @property
    def past_end(self) -> bool:
        """Whether it is an Older page with nothing on it: the items older than its place
        (the last a page showed) have left the status shown since (an open one decided)."""
        return self.place.before is not None and not self.items

    @property
    def top(self) -> bool:
        """Whether nothing is newer than its first item: where items opened since it was
        drawn would be listed, so where the page polls for them."""
        return self.newer is None and (self.place.first or bool(self.items))

    def __len__(self) -> int:
        return len(self.items)


def page(items: QuerySet[Any], place: Place, size: int) -> Page:
    """Up to `size` of `items` (a queue's, newest first: queries.queue_items) at `place`, in
    that order. At most two reads of size + 1 rows and one seek, each in the index."""
    if place.after is not None:
        # Oldest first from the place, the nearest `size`, shown newest first.
        found = list(items.filter(position__gt=place.after).order_by("position")[: size + 1])
        if len(found) <= size:
            # Newer reaches the top: the newest full page, as the first page shows it, where
            # it showed the few items left above the place (1 of 25, the rest just seen).
            return page(items, Place(), size)
        shown = found[:size][::-1]
        newer = shown[0].position
        last = shown[-1].position
        older = last if _any(items, position__lt=last) else None
        return Page(shown, older, newer, place)
    chosen = items.filter(position__lt=place.before) if place.before is not None else items
    found = list(chosen[: size + 1])
    shown = found[:size]
    older = shown[-1].position if len(found) > size else None
    newer = None
    if place.before is not None and shown and _any(items, position__gt=shown[0].position):
        newer = shown[0].position
    return Page(shown, older, newer, place)


def _any(items: QuerySet[Any], **where: Any) -> bool:
    return bool(items.filter(**where).exists())
