"""How lists are paged: never by an offset, whose cost grows with how far in a page is. The
runs by a cursor (`after`, the `next` of the page before: dashboard/run_pages.py); a run's
minutes and a queue's items by a position they go on from (`after`, oldest first; a queue's
newest first by `before`)."""

# No `from __future__ import annotations`: django-ninja reads the Input schema at runtime.

from typing import Any

from ninja import Field, Query, Schema
from pydantic import BeforeValidator
from pydantic_core import PydanticCustomError

from dashboard import asked, listing, queries
from dashboard.api.run_schemas import RunOut
from journal_store.models import RunSummary


def as_position(value: Any) -> Any:
    """A query's position as a page reads it (asked.position): blank is not asked, and one
    that is no whole number from 0 to POSITION_MAX is refused in the page's words, where the
    422 said "Input should be greater than or equal to 0", "less than or equal to
    4611686018427387904" or "a valid integer"."""
    if value == "":
        return 0
    if isinstance(value, str) and asked.position(value) is None:
        raise PydanticCustomError("position", "{why}", {"why": asked.not_a_position(value)})
    return value


# Still an integer in the schema, with its bounds.
READ_AS_POSITION = BeforeValidator(as_position)


def after_position(what: str) -> Any:
    """The `after` parameter of a page of a run's minutes or a queue's items: 422 past any
    position a column holds, as below 0."""
    return Query(0, ge=0, le=asked.POSITION_MAX, description=f"{what} after this position")  # type: ignore[type-arg]


class RunsOut(Schema):
    """A page of runs, and where the next one starts."""

    items: list[RunOut]
    next: str | None = Field(
        description="the next page's `after` (as given: opaque); null on the last page"
    )
    beat_silence: str | None = Field(
        None,
        description="why a run that stalls now would wait: no beat has queued stalled runs "
        "again for a while (or ever) while a run is active; null while one does",
    )


def shown_in_api(runs: list[RunSummary]) -> list[RunSummary]:
    """A page of runs with what each row says beside its summary (stalled since when, where a
    fork left its parent) worked out for the page at once: a few queries for any number of
    rows, where each row's own resolver would ask again for every active run and every fork."""
    listing.mark_stalled(runs)
    points = queries.fork_points((r.run_id, r.parent_id, r.fork_at) for r in runs)
    for run in runs:
        run.fork_point = points.get(run.run_id)  # type: ignore[attr-defined]
    return runs
