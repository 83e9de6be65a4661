"""/api/review: the review queues (claim conflicts, dead letters) and the decisions on them."""

# No `from __future__ import annotations`: django-ninja reads the annotations at runtime.

from typing import Any, Literal

from django.http import HttpRequest
from ninja import Router, Status
from ninja.pagination import paginate

from dashboard.access import require_decide
from dashboard.api.auth import user_name
from dashboard.api.paging import Pages
from dashboard.api.schemas import ConflictOut, DecisionIn, Error, LetterOut, ResolveIn
from journal_store import projection
from journal_store.models import Conflict, DeadLetter
from tasks import review, runs

router = Router(tags=["review"])


@router.get("/conflicts", response=list[ConflictOut])
@paginate(Pages)
def list_conflicts(
    request: HttpRequest, status: Literal["open", "resolved", "all"] = "open"
) -> Any:
    projection.catch_up()
    qs = Conflict.objects.order_by("-position")
    return qs if status == "all" else qs.filter(status=status)


@router.post(
    "/conflicts/{conflict_id}/resolve",
    response={200: ConflictOut, 400: Error, 403: Error, 404: Error, 409: Error},
)
def resolve_conflict(request: HttpRequest, conflict_id: str, body: ResolveIn) -> Any:
    require_decide(request.user)
    review.resolve(conflict_id, body.choice, user_name(request), body.reason)
    return Status(200, Conflict.objects.get(conflict_id=conflict_id))


@router.get("/dead-letters", response=list[LetterOut])
@paginate(Pages)
def list_dead_letters(
    request: HttpRequest, status: Literal["open", "retried", "discarded", "all"] = "open"
) -> Any:
    projection.catch_up()
    qs = DeadLetter.objects.order_by("-position")
    return qs if status == "all" else qs.filter(status=status)


@router.post(
    "/dead-letters/{letter_id}/{decision}",
    response={200: LetterOut, 403: Error, 404: Error, 409: Error},
)
def decide_letter(
    request: HttpRequest, letter_id: str, decision: Literal["retry", "discard"], body: DecisionIn
) -> Any:
    require_decide(request.user)
    runs.decide_letter(letter_id, decision, user_name(request), body.reason)
    return Status(200, DeadLetter.objects.get(letter_id=letter_id))
