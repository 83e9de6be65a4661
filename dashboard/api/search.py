"""/api/search: which events and runs mention some words (full text over payloads)."""

# No `from __future__ import annotations`: django-ninja reads the annotations at runtime.

from typing import Any

from django.http import HttpRequest
from ninja import Query, Router, Schema
from pydantic import Field

from dashboard.access import get_run_for_user
from dashboard.api.errors import invalid
from dashboard.api.schemas import Error
from runtime import streams
from services import search
from services.asked import shown

router = Router(tags=["search"])


class SearchIn(Schema):
    q: str = Field(description="words every hit must hold, e.g. DHL-7731")
    run: str | None = Field(None, max_length=64, description="search one run only")
    limit: int = Field(50, ge=1, le=200)


class HitOut(Schema):
    run_id: str
    position: int
    kind: str
    snippet: str


class RunHits(Schema):
    run_id: str
    team: str
    status: str
    task: str
    events: int


class SearchOut(Schema):
    query: str
    runs: list[RunHits]
    hits: list[HitOut]
    more: bool = Field(description="more events hold every word than `hits` lists (`limit`)")


@router.get("", response={200: SearchOut, 404: Error})
def search_events(request: HttpRequest, params: Query[SearchIn]) -> Any:
    """Events whose messages, tool arguments and results, answers or model text hold every
    word of `q` (newest first, with a snippet), and the most recent runs among the newest 2,000
    such events (`events`: how many of those each holds). Words are matched as written (no
    stemming); nothing typed is query syntax."""
    # A blank run is not asked, as on the page; one that is no run id is refused here, where
    # it reached the database (a NUL: PostgreSQL's DataError, a 500).
    run = (params.run or "").strip() or None
    if run is not None and not streams.is_run_id(run):
        raise invalid("query", {"run": f"{shown(run)} is not a run id ({streams.RUN_ID_RULE})"})
    if run is not None:
        get_run_for_user(request.user, run)
    try:
        found = search.find(params.q, run, params.limit)
    except search.BadQuery as exc:
        raise invalid("query", {"q": str(exc)}) from None
    return {
        "query": found.query,
        "runs": [
            {"run_id": r.run_id, "team": r.team, "status": r.status, "task": r.task, "events": n}
            for r, n in found.runs
        ],
        "hits": [{**h.__dict__, "snippet": h.bracketed} for h in found.hits],
        "more": found.more,
    }
