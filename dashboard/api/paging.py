"""How lists are paged: limit and offset, both bounded."""

# No `from __future__ import annotations`: django-ninja reads the Input schema at runtime.

from typing import Any

from django.http import HttpRequest
from ninja import Field, Schema
from ninja.pagination import LimitOffsetPagination

from dashboard import listing, queries


class Pages(LimitOffsetPagination):
    """limit/offset paging with both bounded: an offset past any real count is a 422, not a
    number the database cannot hold."""

    class Input(Schema):
        limit: int = Field(100, ge=1, le=1_000)
        offset: int = Field(0, ge=0, le=1_000_000_000)


class RunPages(Pages):
    """Pages of runs, with what each row says beside its summary (stalled since when, where a
    fork left its parent) worked out for the page at once: a few queries for any number of
    rows, where each row's own resolver would ask again for every active run and every fork."""

    def paginate_queryset(
        self, queryset: Any, pagination: Any, request: HttpRequest, **params: Any
    ) -> Any:
        found = super().paginate_queryset(queryset, pagination, request, **params)
        rows = list(found[self.items_attribute])
        listing.mark_stalled(rows)
        points = queries.fork_points((r.run_id, r.parent_id, r.fork_at) for r in rows)
        for run in rows:
            run.fork_point = points.get(run.run_id)
        found[self.items_attribute] = rows
        return found
