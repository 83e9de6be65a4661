"""/api/runs/compare: two runs side by side and the first point where they part."""

# No `from __future__ import annotations`: django-ninja reads the annotations at runtime.

from typing import Any

from django.http import HttpRequest
from ninja import Query, Router, Schema, Status

from dashboard.access import get_run_for_user
from dashboard.api.errors import invalid
from dashboard.api.schemas import Error
from runtime import streams
from services import compare
from services.asked import shown

router = Router(tags=["runs"])


class Pair(Schema):
    a: str
    b: str


@router.get("", response={200: dict[str, Any], 404: Error, 409: Error})
def compare_runs(request: HttpRequest, pair: Query[Pair]) -> Any:
    """Outcome and why, bill per agent with deltas, model calls and latency, findings, the first
    divergence (the step of each run that differs, by agent and turn) and the threads of both
    runs from there. `identical` is true when the runs took the same steps alike; `same_run`
    when A and B are one run (compared with itself, identical as a matter of course). A run longer
    than a request compares is a 409 saying how to compare it (as a replay too long is)."""
    # An id that is none is refused at its side before it is looked up (a 10 KB one was
    # quoted whole in the 404).
    wrong = {
        side: f"{shown(run_id)} is not a run id ({streams.RUN_ID_RULE})"
        for side, run_id in (("a", pair.a), ("b", pair.b))
        if not streams.is_run_id(run_id)
    }
    if wrong:
        raise invalid("query", wrong)
    for run_id in (pair.a, pair.b):
        get_run_for_user(request.user, run_id)
    try:
        return {**compare.runs(pair.a, pair.b).as_dict(), "same_run": pair.a == pair.b}
    except compare.TooLong as exc:
        # What the run has become (too long), as replay's ReplayTooLong; 413 would say the
        # request's body was too large, and this request has none.
        return Status(409, {"detail": str(exc)})
