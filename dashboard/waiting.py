"""How many review items wait for a person, for the navigation's Dead letters and Conflicts
links: a reviewer on any page sees that something waits, where they had to open each queue.

A context processor, so every template has `waiting`; it is lazy, so only a page that draws
the navigation (templates/base.html) asks the database, once, and the htmx parts and polls,
which do not, ask nothing; but for those that send the counts out of band (`with_counts`: a
decision's card, a run's header).
"""

from __future__ import annotations

from typing import Any

from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.utils.functional import SimpleLazyObject

from journal_store.models import Conflict, DeadLetter
from journal_store.queues import OPEN

# Counted up to CAP + 1 and said "99+" past CAP: the navigation says that something waits,
# and about how much, on every page; counting every open item made every page cost more as
# items piled up (+3,300 SQLite steps from 60 open to 900:
# tests/dashboard/test_store_pages_cost_the_same_at_any_size.py). The queues count them all.
CAP = 99
# Both counts in one statement, each a seek in its table's status index, stopped past CAP.
COUNTS = (
    f"SELECT (SELECT COUNT(*) FROM (SELECT 1 FROM {DeadLetter._meta.db_table} "
    f"WHERE status = %s LIMIT {CAP + 1}) AS letters), "
    f"(SELECT COUNT(*) FROM (SELECT 1 FROM {Conflict._meta.db_table} "
    f"WHERE status = %s LIMIT {CAP + 1}) AS conflicts)"
)


def open_items() -> dict[str, int | str]:
    """The open dead letters and conflicts, as the queues' projector last left them: each a
    number up to CAP, and "99+" past it."""
    with connection.cursor() as cursor:
        cursor.execute(COUNTS, [OPEN, OPEN])
        found = dict(zip(("letters", "conflicts"), cursor.fetchone(), strict=True))
    return {name: f"{CAP}+" if n > CAP else n for name, n in found.items()}


def waiting(request: HttpRequest) -> dict[str, Any]:
    return {"waiting": SimpleLazyObject(open_items)}


def with_counts(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    """`response` (an htmx part) with the navigation's counts of what waits sent out of band:
    after a decision on a card they went down only when the reviewer next loaded a page, and a
    run's header that follows a decision taken in another tab showed the letter discarded
    beside a count that still held it."""
    response.content += render_to_string("dashboard/_waiting_oob.html", request=request).encode()
    return response
