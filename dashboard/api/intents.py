"""/api/intents: reading an intent's history, and superseding it (a reviewer's decision)."""

# No `from __future__ import annotations`: django-ninja reads the annotations at runtime.

from datetime import UTC, datetime
from typing import Any

from django.http import HttpRequest
from ninja import Query, Router, Status

from dashboard import asked
from dashboard.access import require_decide
from dashboard.api.auth import user_name
from dashboard.api.review_schemas import IntentOut, SupersedeIn
from dashboard.api.schemas import Error
from runtime.events import IntentDeclared
from services import intents

router = Router(tags=["intents"])


def intent_out(
    intent_id: str, latest: IntentDeclared, found: list[IntentDeclared]
) -> dict[str, Any]:
    versions = [
        {
            "version": e.intent_version,
            "statement": e.statement,
            "by": e.by,
            "reason": e.reason,
            "at": datetime.fromtimestamp(e.t, tz=UTC),
        }
        for e in found
    ]
    shown = found[-1].intent_version if found else None
    return {
        "intent_id": intent_id,
        "version": latest.intent_version,
        "statement": latest.statement,
        "history": versions,
        "next": shown if shown is not None and shown < latest.intent_version else None,
    }


@router.get("/{intent_id}", response={200: IntentOut, 404: Error})
def get_intent(
    request: HttpRequest,
    intent_id: str,
    after: int = Query(0, ge=0, le=asked.POSITION_MAX, description="versions after this one"),  # type: ignore[type-arg]
    limit: int = Query(100, ge=1, le=intents.PAGE_MAX, description="versions in the page"),  # type: ignore[type-arg]
) -> Any:
    """The intent's current version and a page of its history, oldest first: ask again with
    `after` set to `next` for the versions after it (null on the last page)."""
    return intent_out(intent_id, *intents.page(intent_id, after, limit))


@router.post(
    "/{intent_id}", response={200: IntentOut, 400: Error, 403: Error, 404: Error, 409: Error}
)
def supersede_intent(request: HttpRequest, intent_id: str, body: SupersedeIn) -> Any:
    """Supersede an intent: runs that hold an older version are refused at their next change.
    A run's own task intent (`task-<run>`) of a run that is over is a 409: fork the run, and
    supersede the fork's `task-<fork>`, to take it another way. The same supersession sent
    again by the same person (its statement, reason and `version`) is answered with the
    version it wrote, and writes nothing. Answered as GET's first page."""
    require_decide(request.user, "superseding an intent")  # it stops runs: a reviewer's say
    intents.supersede(intent_id, body.statement, user_name(request), body.reason, body.version)
    return Status(200, intent_out(intent_id, *intents.page(intent_id)))
