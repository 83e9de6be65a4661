"""Searching what runs said and did (journal_store/search.py keeps the index)."""

from __future__ import annotations

from dataclasses import dataclass

from journal_store import projection, search
from journal_store.models import RunSummary

BadQuery = search.BadQuery
RECENT = search.RECENT  # matching events the runs that mention a query are gathered from


@dataclass(frozen=True)
class Found:
    """The runs that mention what was searched for, and the events that do (newest first)."""

    query: str
    runs: list[tuple[RunSummary, int]]
    hits: list[search.Hit]
    more: bool = False  # more events hold the words than `hits` shows


def find(query: str, run_id: str | None = None, limit: int = 50) -> Found:
    """Search every run, or one; BadQuery says what is wrong with the query."""
    query = query.strip()
    search.words(query)  # refuse a bad query before catching up
    projection.catch_up(["search"], wait=False)
    # One more than is shown, to say whether there are more: the runs table counts a run's
    # matching events, and its link showed the newest `limit` of them as if they were all.
    hits = search.search(query, run_id, limit + 1)
    mentioned = [] if run_id else search.runs_mentioning(query, limit)
    summaries = RunSummary.objects.in_bulk([r for r, _ in mentioned])
    return Found(
        query,
        [(summaries[r], n) for r, n in mentioned if r in summaries],
        hits[:limit],
        more=len(hits) > limit,
    )
