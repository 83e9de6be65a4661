"""/api/intents: reading an intent's history, and superseding it (a reviewer's decision)."""

# No `from __future__ import annotations`: django-ninja reads the annotations at runtime.

from datetime import UTC, datetime
from typing import Any

from django.http import HttpRequest
from ninja import Router, Status

from dashboard.access import require_decide
from dashboard.api.auth import user_name
from dashboard.api.schemas import Error, IntentOut, SupersedeIn
from runtime.events import IntentDeclared
from services import intents

router = Router(tags=["intents"])


def intent_out(intent_id: str, found: list[IntentDeclared]) -> dict[str, Any]:
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
    last = versions[-1]
    return {
        "intent_id": intent_id,
        "version": last["version"],
        "statement": last["statement"],
        "history": versions,
    }


@router.get("/{intent_id}", response={200: IntentOut, 404: Error})
def get_intent(request: HttpRequest, intent_id: str) -> Any:
    return intent_out(intent_id, intents.history(intent_id))


@router.post(
    "/{intent_id}", response={200: IntentOut, 400: Error, 403: Error, 404: Error, 409: Error}
)
def supersede_intent(request: HttpRequest, intent_id: str, body: SupersedeIn) -> Any:
    """Supersede an intent: runs that hold an older version are refused at their next change.
    A run's own task intent (`task-<run>`) of a run that is over is a 409: fork the run, and
    supersede the fork's `task-<fork>`, to take it another way. The same supersession sent
    again by the same person (its statement, reason and `version`) is answered with the
    version it wrote, and writes nothing."""
    require_decide(request.user, "superseding an intent")  # it stops runs: a reviewer's say
    intents.supersede(intent_id, body.statement, user_name(request), body.reason, body.version)
    return Status(200, intent_out(intent_id, intents.history(intent_id)))
