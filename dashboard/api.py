"""The JSON API (django-ninja; OpenAPI at /api/docs): what the pages do, for scripts.

Every endpoint needs a login: the browser's session (with CSRF on every unsafe method), or a
bearer token made with `manage.py api_token`. Decisions need the reviewer permission.
"""

# No `from __future__ import annotations` here: django-ninja reads the annotations at runtime
# to build its query models, and a Literal left as a string makes them unusable.

from collections.abc import Callable
from datetime import UTC, datetime
from functools import wraps
from typing import Annotated, Any, Literal

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from ninja import Field, File, NinjaAPI, Query, Router, Schema, Status
from ninja.errors import HttpError
from ninja.files import UploadedFile
from ninja.openapi.docs import Swagger
from ninja.pagination import LimitOffsetPagination, paginate
from ninja.security import HttpBearer, SessionAuth
from pydantic import StringConstraints

from dashboard import actions, downloads, queries, signin
from dashboard.access import can_decide, get_run_for_user, require_steer
from dashboard.models import ApiToken
from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import (
    AuditEntry,
    Conflict,
    DeadLetter,
    Finding,
    RunSummary,
    ThreadMessage,
)
from journal_store.transfer import ImportRefused, import_journal
from tasks import intents, review, runs


class Pages(LimitOffsetPagination):
    """limit/offset paging with both bounded: an offset past any real count is a 422, not a
    number the database cannot hold."""

    class Input(Schema):
        limit: int = Field(100, ge=1, le=1_000)
        offset: int = Field(0, ge=0, le=1_000_000_000)


class TokenAuth(HttpBearer):
    """`Authorization: Bearer mt_…`: a script's token (stored hashed).

    A wrong token counts as a failed sign-in from its address, and an address locked out for
    too many failures (passwords or tokens) is answered 429 before any token is looked at.
    """

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        if signin.token_locked_out(request):
            raise HttpError(429, signin.LOCKED)
        found = ApiToken.objects.select_related("user").filter(digest=ApiToken.hash(token)).first()
        if found is None or not found.user.is_active:
            signin.token_refused(request)
            return None
        ApiToken.objects.filter(pk=found.pk).update(last_used_at=timezone.now())
        request.user = found.user
        return found.user


class MinutesAPI(NinjaAPI):
    def get_openapi_schema(self, *args: Any, **kwargs: Any) -> Any:
        """The schema, with the 422 django-ninja answers to any request whose parameters or
        body fail validation written down for every operation that takes input."""
        schema = super().get_openapi_schema(*args, **kwargs)
        for methods in schema["paths"].values():
            for operation in methods.values():
                if operation.get("parameters") or operation.get("requestBody"):
                    operation["responses"].setdefault(
                        "422",
                        {
                            "description": "the parameters or the body did not validate",
                            "content": {"application/json": {"schema": {"type": "object"}}},
                        },
                    )
        return schema


def signed_in_docs(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """The docs page and the schema are for people signed in (the schema also for a token).

    Signed out, the page sends the browser to the login page; the schema answers 401 as the
    rest of the API does.
    """

    @wraps(view)
    def guarded(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.user.is_authenticated:
            return view(request, *args, **kwargs)
        if not request.path.endswith(".json"):
            return redirect_to_login(request.get_full_path())
        try:
            user = TokenAuth()(request)
        except HttpError as exc:
            return JsonResponse({"detail": exc.message}, status=exc.status_code)
        if user is None:
            return JsonResponse({"detail": "Unauthorized"}, status=401)
        return view(request, *args, **kwargs)

    return guarded


api = MinutesAPI(
    title="Minutes",
    version="1",
    description="Runs of LLM agent teams, their minutes, and the review queues.",
    # Swagger UI from django-ninja's own static files ("ninja" is an installed app), never a
    # CDN: the docs work offline and under our Content-Security-Policy. No validator badge:
    # it would send the schema to a public validator.
    docs=Swagger(settings={"validatorUrl": None}),
    docs_decorator=signed_in_docs,
    # A bearer token first: a script sends no cookie, and the session check would refuse it
    # for want of a CSRF token before the token was looked at.
    auth=[TokenAuth(), SessionAuth(csrf=True)],
    urls_namespace="api",
)


class Error(Schema):
    detail: str


class RunOut(Schema):
    run_id: str
    team: str
    scenario: str
    task: str
    status: str
    stage: str
    started_by: str
    started_at: datetime | None
    finished_at: datetime | None
    tokens: int
    allowance: int | None
    spent: int
    event_count: int
    findings_count: int
    reason: str
    stalled_since: datetime | None = Field(
        None,
        description="set while a running run has nobody driving it and no step on its way "
        "(its worker died, or no worker is running); it is queued again automatically",
    )

    @staticmethod
    def resolve_stalled_since(run: RunSummary) -> datetime | None:
        if not hasattr(run, "stalled_since"):
            queries.mark_stalled([run])
        return run.stalled_since  # type: ignore[attr-defined,no-any-return]


class RunIn(Schema):
    team: str = "repo-fix"
    scenario: str = "first-flight"
    task: str | None = None
    model: Literal["scripted", "endpoint", "local", "openai"] = Field(
        "scripted",
        description="scripted; endpoint: the OpenAI-compatible server at MINUTES_MODEL_BASE_URL "
        "(openai is its old name); local: the local model server, started on demand",
    )
    allowance: int | None = None
    max_turns: int | None = None
    max_seconds: float | None = None
    order: str | None = Field(
        default=None, description="support-desk: the order the ticket is about (default: fresh)"
    )


class EventOut(Schema):
    position: int
    stream: str
    version: int
    kind: str
    v: int
    agent: str | None
    task_id: str | None
    turn: int | None
    t: float
    data: dict[str, Any]


class ReasonIn(Schema):
    reason: str = ""


# A decision on a review item says why, as the pages ask: blank or whitespace is refused (422,
# naming the field) before anything is journalled.
Reason = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2_000)]


class DecisionIn(Schema):
    reason: Reason = Field(description="why: recorded in the audit trail with your name")


class ResolveIn(Schema):
    choice: str
    reason: Reason = Field(description="why: recorded in the audit trail with your name")


class LetterOut(Schema):
    letter_id: str
    run_id: str
    task_id: str | None
    reason: str
    attempts: int
    last_error: str
    status: str
    decided_by: str
    decision_reason: str


class ConflictOut(Schema):
    conflict_id: str
    run_id: str
    subject: str
    predicate: str
    conflict_type: str
    claims: list[dict[str, Any]]
    commit: dict[str, Any] | None = Field(
        description="where a chosen value is committed, by compare-and-swap from `version`"
    )
    status: str
    resolution: dict[str, Any] | None
    decided_by: str
    decision_reason: str


class ImportOut(Schema):
    run_ids: list[str]
    events: int
    added: int
    torn: str | None


class ReplayOut(Schema):
    identical: bool
    events: int
    complete: bool
    difference: str


class Accepted(Schema):
    detail: str


class IntentVersionOut(Schema):
    version: int
    statement: str
    by: str
    reason: str
    at: datetime


class IntentOut(Schema):
    intent_id: str
    version: int = Field(description="the current version; work held under an older one is stale")
    statement: str
    history: list[IntentVersionOut]


class SupersedeIn(Schema):
    statement: str = Field(min_length=1, description="what is wanted now")
    reason: str = Field(min_length=1, description="why: the runs it stops will show it")
    version: int | None = Field(
        None, description="the version you read; 409 when it has moved since (omit: any)"
    )


def user_name(request: HttpRequest) -> str:
    return request.user.get_username()


def run_or_404(request: HttpRequest, run_id: str) -> RunSummary:
    from django.http import Http404

    try:
        return get_run_for_user(request.user, run_id)
    except Http404 as exc:
        raise HttpError(404, str(exc)) from None


def decider(request: HttpRequest) -> None:
    if not can_decide(request.user):
        raise HttpError(403, "deciding on review items needs the reviewer permission")


runs_router = Router(tags=["runs"])


@runs_router.get("", response=list[RunOut])
@paginate(Pages)
def list_runs(
    request: HttpRequest,
    status: str = "",
    team: str = "",
    q: str = "",
    since: str = "",
    until: str = "",
    sort: str = "started",
) -> Any:
    params = {"status": status, "team": team, "q": q, "since": since, "until": until, "sort": sort}
    return queries.runs(queries.RunFilter.of(params))


@runs_router.post("", response={201: RunOut, 400: Error})
def start_run(request: HttpRequest, body: RunIn) -> Any:
    try:
        run_id = actions.NewRun(**body.dict()).start(user_name(request))
    except runs.RunError as exc:
        return Status(400, {"detail": str(exc)})
    return Status(201, run_or_404(request, run_id))


@runs_router.get("/{run_id}", response={200: RunOut, 404: Error})
def get_run(request: HttpRequest, run_id: str) -> Any:
    return run_or_404(request, run_id)


@runs_router.get("/{run_id}/events", response={200: list[EventOut], 404: Error})
def events(
    request: HttpRequest,
    run_id: str,
    after: int = 0,
    kind: str = "",
    limit: int = Query(100, ge=1, le=1000),  # type: ignore[type-arg]
) -> Any:
    run_or_404(request, run_id)
    return queries.events(run_id, after, kind, limit=limit)


@runs_router.get("/{run_id}/bill", response={200: dict[str, Any], 404: Error})
def bill(request: HttpRequest, run_id: str) -> Any:
    run_or_404(request, run_id)
    return queries.bill(run_id)


@runs_router.get("/{run_id}/threads", response={200: dict[str, list[dict[str, Any]]], 404: Error})
def threads(request: HttpRequest, run_id: str) -> Any:
    run_or_404(request, run_id)
    out: dict[str, list[dict[str, Any]]] = {}
    fields = (
        "position",
        "message_id",
        "task_id",
        "performative",
        "sender",
        "recipient",
        "payload",
        "in_reply_to",
        "delivered",
    )
    for m in ThreadMessage.objects.filter(run_id=run_id).order_by("position").values(*fields):
        out.setdefault(str(m["task_id"]), []).append(dict(m))
    return out


@runs_router.get("/{run_id}/audit", response={200: list[dict[str, Any]], 404: Error})
def audit(request: HttpRequest, run_id: str) -> Any:
    run_or_404(request, run_id)
    rows = (
        AuditEntry.objects.filter(run_id=run_id)
        .order_by("position")
        .values("position", "what", "who", "task_id", "human", "detail")
    )
    return list(rows)


@runs_router.get("/{run_id}/resume-point", response={200: dict[str, Any], 404: Error})
def resume_point(request: HttpRequest, run_id: str) -> Any:
    run_or_404(request, run_id)
    return queries.resume_point(run_id)


@runs_router.get("/{run_id}/findings", response={200: list[dict[str, Any]], 404: Error})
def findings(request: HttpRequest, run_id: str) -> Any:
    run_or_404(request, run_id)
    rows = (
        Finding.objects.filter(run_id=run_id)
        .order_by("first_position")
        .values("kind", "summary", "positions", "detail")
    )
    return list(rows)


@runs_router.get(
    "/{run_id}/export",
    response={200: None, 404: Error},
    openapi_extra={
        "responses": {
            200: {
                "description": "the run's journal, one JSON event per line",
                "content": {"application/x-ndjson": {}},
            }
        }
    },
)
def export(request: HttpRequest, run_id: str) -> Any:
    run_or_404(request, run_id)
    return downloads.journal(run_id)


@runs_router.get(
    "/{run_id}/otlp",
    response={200: dict[str, Any], 404: Error},
    openapi_extra={
        "responses": {
            200: {"description": "the run as an OpenTelemetry trace: an OTLP/JSON export request"}
        }
    },
)
def otlp(request: HttpRequest, run_id: str) -> Any:
    run_or_404(request, run_id)
    return downloads.otlp(run_id)


@runs_router.post(
    "/{run_id}/interrupt", response={202: Accepted, 403: Error, 404: Error, 409: Error}
)
def interrupt(request: HttpRequest, run_id: str, body: ReasonIn) -> Any:
    return steer(request, run_id, "interrupt", body.reason)


@runs_router.post("/{run_id}/resume", response={202: Accepted, 403: Error, 404: Error, 409: Error})
def resume(request: HttpRequest, run_id: str, body: ReasonIn) -> Any:
    return steer(request, run_id, "resume", body.reason)


def steer(request: HttpRequest, run_id: str, action: str, reason: str) -> Any:
    from django.core.exceptions import PermissionDenied

    run = run_or_404(request, run_id)
    try:
        require_steer(request.user, run)
        said = actions.steer(run_id, action, user_name(request), reason)
    except PermissionDenied as exc:
        return Status(403, {"detail": str(exc)})
    except runs.RunError as exc:
        return Status(409, {"detail": str(exc)})
    return Status(202, {"detail": said})


@runs_router.post("/{run_id}/replay", response={200: ReplayOut, 404: Error})
def replay(request: HttpRequest, run_id: str) -> Any:
    from runtime import flight

    run_or_404(request, run_id)
    report = flight.replay(DjangoJournal(), run_id)
    return {
        "identical": report.identical,
        "events": report.events,
        "complete": report.complete,
        "difference": report.difference,
    }


journals_router = Router(tags=["journals"])


@journals_router.post("", response={201: ImportOut, 400: dict[str, Any]})
def import_(request: HttpRequest, journal: File[UploadedFile], allow_torn: bool = False) -> Any:
    try:
        report = import_journal(
            journal.open("rb"),
            name=journal.name or "upload",
            size=journal.size,
            allow_torn=allow_torn,
            by=user_name(request),
        )
    except ImportRefused as exc:
        return Status(
            400, {"detail": "nothing was imported", "problems": exc.problems, "more": exc.more}
        )
    projection.catch_up()
    return Status(
        201,
        {
            "run_ids": report.run_ids,
            "events": report.events,
            "added": report.added,
            "torn": report.torn,
        },
    )


review_router = Router(tags=["review"])


@review_router.get("/conflicts", response=list[ConflictOut])
@paginate(Pages)
def list_conflicts(
    request: HttpRequest, status: Literal["open", "resolved", "all"] = "open"
) -> Any:
    projection.catch_up()
    qs = Conflict.objects.order_by("-position")
    return qs if status == "all" else qs.filter(status=status)


@review_router.post(
    "/conflicts/{conflict_id}/resolve",
    response={200: ConflictOut, 400: Error, 403: Error, 404: Error, 409: Error},
)
def resolve_conflict(request: HttpRequest, conflict_id: str, body: ResolveIn) -> Any:
    decider(request)
    try:
        review.resolve(conflict_id, body.choice, user_name(request), body.reason)
    except (review.ConflictAlreadyDecided, review.ConflictMoved) as exc:
        return Status(409, {"detail": str(exc)})
    except review.ConflictError as exc:
        status = 404 if "no parked conflict" in str(exc) else 400
        return Status(status, {"detail": str(exc)})
    return Status(200, Conflict.objects.get(conflict_id=conflict_id))


@review_router.get("/dead-letters", response=list[LetterOut])
@paginate(Pages)
def list_dead_letters(
    request: HttpRequest, status: Literal["open", "retried", "discarded", "all"] = "open"
) -> Any:
    projection.catch_up()
    qs = DeadLetter.objects.order_by("-position")
    return qs if status == "all" else qs.filter(status=status)


@review_router.post(
    "/dead-letters/{letter_id}/{decision}",
    response={200: LetterOut, 403: Error, 404: Error, 409: Error},
)
def decide_letter(
    request: HttpRequest, letter_id: str, decision: Literal["retry", "discard"], body: DecisionIn
) -> Any:
    decider(request)
    try:
        runs.decide_letter(letter_id, decision, user_name(request), body.reason)
    except runs.LetterAlreadyDecided as exc:
        return Status(409, {"detail": str(exc)})
    except runs.RunError as exc:
        return Status(404, {"detail": str(exc)})
    return Status(200, DeadLetter.objects.get(letter_id=letter_id))


intents_router = Router(tags=["intents"])


def intent_out(intent_id: str, found: list[Any]) -> dict[str, Any]:
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


@intents_router.get("/{intent_id}", response={200: IntentOut, 404: Error})
def get_intent(request: HttpRequest, intent_id: str) -> Any:
    try:
        return Status(200, intent_out(intent_id, intents.history(intent_id)))
    except intents.IntentMissing as exc:
        return Status(404, {"detail": str(exc)})


@intents_router.post(
    "/{intent_id}", response={200: IntentOut, 400: Error, 403: Error, 404: Error, 409: Error}
)
def supersede_intent(request: HttpRequest, intent_id: str, body: SupersedeIn) -> Any:
    """Supersede an intent: runs that hold an older version are refused at their next change."""
    decider(request)
    try:
        intents.supersede(intent_id, body.statement, user_name(request), body.reason, body.version)
    except intents.IntentMissing as exc:
        return Status(404, {"detail": str(exc)})
    except intents.IntentMoved as exc:
        return Status(409, {"detail": str(exc)})
    except intents.IntentError as exc:
        return Status(400, {"detail": str(exc)})
    return Status(200, intent_out(intent_id, intents.history(intent_id)))


api.add_router("/runs", runs_router)
api.add_router("/journals", journals_router)
api.add_router("/review", review_router)
api.add_router("/intents", intents_router)
