"""How lists are paged: limit and offset, both bounded."""

# No `from __future__ import annotations`: django-ninja reads the Input schema at runtime.

from ninja import Field, Schema
from ninja.pagination import LimitOffsetPagination


class Pages(LimitOffsetPagination):
    """limit/offset paging with both bounded: an offset past any real count is a 422, not a
    number the database cannot hold."""

    class Input(Schema):
        limit: int = Field(100, ge=1, le=1_000)
        offset: int = Field(0, ge=0, le=1_000_000_000)
