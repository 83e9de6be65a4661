"""/api/runs: the runs list, starting a run, a run's events and minutes, its files, steering it."""

# No `from __future__ import annotations`: django-ninja reads the annotations at runtime.

from typing import Annotated, Any, Literal

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from ninja import Header, Query, Router, Status
from pydantic import AfterValidator

from dashboard import actions, asked, downloads, listing, queries, run_pages
from dashboard.access import get_run_for_user, require_steer, run_or_unfolded
from dashboard.api import fork_refusals
from dashboard.api.auth import user_name
from dashboard.api.errors import invalid
from dashboard.api.minutes import (
    AuditEntryOut,
    BillOut,
    ComparisonOut,
    FindingOut,
    MetricOut,
    ResumePointOut,
    ThreadsOut,
)
from dashboard.api.paging import READ_AS_POSITION, RunsOut, after_position, shown_in_api
from dashboard.api.run_detail import RunDetailOut
from dashboard.api.run_schemas import (
    KEY_HEADER,
    EventOut,
    ForkIn,
    ReasonIn,
    ReplayOut,
    RunIn,
    RunOut,
    TaggedOut,
    TagsIn,
    TagsOut,
    usable_key,
)
from dashboard.api.schemas import Accepted, Error
from dashboard.asked import BadQuery, shown
from journal_store.models import RunSummary
from runtime import status, streams
from services import baseline as baselines
from services import beat, forks, keys, runs, tags, traces

router = Router(tags=["runs"])


def run_for(request: HttpRequest, run_id: str) -> RunSummary:
    """The run, caught up; RunNotFound (404, by its handler) when there is none."""
    return get_run_for_user(request.user, run_id)


OFFSET_GONE = (
    "the runs are paged by `after` (the `next` of the page before), not by an offset, whose "
    "cost grew with how far into the list a page was; an offset of 0, the first page, is taken"
)


@router.get("", response=RunsOut)
def list_runs(
    request: HttpRequest,
    status: str = "",
    team: str = "",
    q: str = "",
    since: str = "",
    until: str = "",
    sort: str = "started",
    tag: str = "",
    finding: str = "",
    parent: str = Query("", description="the forks of this run"),  # type: ignore[type-arg]
    after: str = Query(  # type: ignore[type-arg]
        "", description="the runs after this place in the list: the `next` of the page before"
    ),
    limit: int = Query(100, ge=1, le=1_000),  # type: ignore[type-arg]
    offset: int = Query(0, ge=0, le=1_000_000_000, description=f"0 only: {OFFSET_GONE}"),  # type: ignore[type-arg]
) -> Any:
    """A page of the runs the filters select, in the sort's order, and `next`, the `after` of
    the page that follows (null on the last). Paging goes on from the last run shown, so a run
    started meanwhile moves no other: none is shown twice or skipped (dashboard/run_pages.py
    says how far each sort allows it). Filters and sort stay as they were for every page."""
    params = {
        "status": status,
        "team": team,
        "q": q,
        "since": since,
        "until": until,
        "sort": sort,
        "tag": tag,
        "finding": finding,
    }
    # A script is told what it cannot ask (else it reads the wrong runs), as the page is.
    problems: dict[str, str] = {}
    try:
        chosen = listing.RunFilter.of(params)
    except BadQuery as exc:
        problems |= exc.problems
    parent = parent.strip()
    if parent and not streams.is_run_id(parent):
        problems["parent"] = f"{shown(parent)} is no run id ({streams.RUN_ID_RULE})"
    if offset:
        # Where it was: scripts sending offset=0 for the first page go on working.
        problems["offset"] = OFFSET_GONE
    cursor = None
    try:  # a place in the order asked for: none to name where the sort is refused
        cursor = None if "sort" in problems else run_pages.Cursor.read(after, sort or "started")
    except BadQuery as exc:
        problems |= exc.problems
    if problems:
        raise invalid("query", problems)
    chose = listing.selection(chosen, fewer_than=listing.PAGE_FEW)
    # The API's own: the run's page lists its forks (its newest) in its header.
    found = chose.runs.filter(parent_id=parent) if parent else chose.runs
    # A parent's forks are few, read by its index: no walk of the order for them.
    walk = None if parent else chose.walk
    page = run_pages.page(found, chosen.sort, cursor, limit, walk)
    return {"items": shown_in_api(page.runs), "next": page.next, "beat_silence": beat.silence()}


# A key that cannot be one is a 422 at the header, in the one naming the body's faults.
Key = Annotated[str, AfterValidator(usable_key)]
KEY = Header(  # type: ignore[type-arg]
    "",
    alias=KEY_HEADER,
    description="sent again with the same key, the start (or fork) answers the run it made "
    f"(200, header Idempotent-Replayed), where it would make another; {keys.KEY_RULE}",
)


def at_capacity(refused: str) -> str:
    """The 429 of an operation that begins a run: what the person's cap refused, first; then
    the sign-in lockout, which answers any operation 429 (api/openapi.py's EVERY) and which
    this description, the operation's own, stands in for."""
    return (
        f"{refused}: you have as many live runs (running, interrupted or dead-lettered) as one "
        "person may (MINUTES_RUNS_PER_PERSON); the detail names the cap, your live runs and how "
        "to go on, and nothing was written. A 429 with Retry-After is another refusal, of any "
        "request: too many failed sign-ins from this address"
    )


STARTS_AT_CAPACITY = at_capacity("no run was started (nor its baseline, when asked)")
FORKS_AT_CAPACITY = at_capacity("no fork was made: a fork is a new run of yours")
BASELINES_AT_CAPACITY = at_capacity("no baseline was started: a baseline is a new run of yours")


def started(request: HttpRequest, response: HttpResponse, begun: runs.Begun) -> Any:
    """The run a start (or fork) began (201) or, a keyed one sent again, found begun already
    (200)."""
    if not begun.new:
        response["Idempotent-Replayed"] = "true"
    return Status(201 if begun.new else 200, run_for(request, begun.run_id))


@router.post(
    "",
    response={200: RunOut, 201: RunOut, 400: Error, 409: Error, 429: Error, 503: Error},
    openapi_extra={"responses": {429: {"description": STARTS_AT_CAPACITY}}},
)
def start_run(request: HttpRequest, response: HttpResponse, body: RunIn, key: Key = KEY) -> Any:
    """Start a team run. With an `Idempotency-Key`, a start sent again (its answer lost) is
    answered the run the first began (200), not begun again, whatever changed on the server
    since (its model endpoint, the local model server, its settings); the same key with
    another body is a 422 naming the fields that differ, and a key that names a run you did
    not begin (imported, or someone else's) a 409. A 429 when you have as many live runs
    (running, interrupted or dead-lettered) as one person may (MINUTES_RUNS_PER_PERSON): its
    detail names the cap, your live runs and how to go on; nothing is written."""
    asked = actions.NewRun(**body.model_dump())
    by = user_name(request)
    try:
        begun = asked.answered(by, key) if key else None
        if begun is None:
            if refusals := asked.refusals():
                raise invalid("body", refusals)  # nothing is recorded
            begun = asked.start(by, key)
    except runs.KeyReused as exc:
        raise invalid("header", {"Idempotency-Key": str(exc)}) from None
    return started(request, response, begun)


@router.get("/{run_id}", response={200: RunDetailOut, 404: Error})
def get_run(request: HttpRequest, run_id: str) -> Any:
    # A run whose summary stopped at its first event has none: its detail says so (status
    # unknown, views_stopped), where it answered 404.
    return run_or_unfolded(request.user, run_id)


@router.get("/{run_id}/events", response={200: list[EventOut], 404: Error})
def events(
    request: HttpRequest,
    run_id: str,
    after: Annotated[int, READ_AS_POSITION] = after_position("events"),
    kind: str = "",
    agent: str = Query("", max_length=64, description="one agent's events, as the page's filter"),  # type: ignore[type-arg]
    limit: int = Query(100, ge=1, le=queries.EVENTS_MAX),  # type: ignore[type-arg]
) -> Any:
    run_or_unfolded(request.user, run_id)  # its events are read from the journal
    try:  # a kind no event has: named, where the answer was an empty list
        kinds = asked.kinds_of([kind])
    except BadQuery as exc:
        raise invalid("query", exc.problems) from None
    return queries.events(run_id, after, kinds, agent=agent.strip(), limit=limit)


@router.get("/{run_id}/bill", response={200: BillOut, 404: Error})
def bill(request: HttpRequest, run_id: str) -> Any:
    return queries.bill(run_id, run_for(request, run_id).status)


@router.get("/{run_id}/threads", response={200: ThreadsOut, 404: Error})
def threads(
    request: HttpRequest,
    run_id: str,
    after: Annotated[int, READ_AS_POSITION] = after_position("messages"),
    limit: int = Query(queries.PAGE_MAX, ge=1, le=queries.PAGE_MAX),  # type: ignore[type-arg]
) -> Any:
    """A page of the run's messages by task thread: ask again after the last position seen."""
    run_for(request, run_id)
    return queries.threads(run_id, after, limit)


# Details hold only what the entry rests on: the fields it does not have are left out.
@router.get("/{run_id}/audit", response={200: list[AuditEntryOut], 404: Error}, exclude_unset=True)
def audit(
    request: HttpRequest,
    run_id: str,
    after: Annotated[int, READ_AS_POSITION] = after_position("entries"),
    limit: int = Query(queries.PAGE_MAX, ge=1, le=queries.PAGE_MAX),  # type: ignore[type-arg]
) -> Any:
    """A page of the run's audit trail, oldest first: ask again after the last position."""
    run_for(request, run_id)
    return queries.audit(run_id, after, limit)


@router.get("/{run_id}/resume-point", response={200: ResumePointOut, 404: Error})
def resume_point(request: HttpRequest, run_id: str) -> Any:
    run_for(request, run_id)
    return queries.resume_point(run_id)


@router.get(
    "/{run_id}/metrics", response={200: dict[str, MetricOut], 404: Error}, exclude_unset=True
)
def metrics(request: HttpRequest, run_id: str) -> Any:
    """The run's coordination metrics, by name (docs/metrics.md)."""
    run_for(request, run_id)
    return {
        name: {"value": m["value"], "reason": m["reason"], "detail": detail(m)}
        for name, m in queries.metrics(run_id).items()
    }


def detail(metric: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in metric.items() if k not in ("value", "reason")}


@router.post(
    "/{run_id}/baseline",
    response={200: RunOut, 201: RunOut, 404: Error, 409: Error, 429: Error, 503: Error},
    openapi_extra={"responses": {429: {"description": BASELINES_AT_CAPACITY}}},
)
def start_baseline(
    request: HttpRequest, response: HttpResponse, run_id: str, key: Key = KEY
) -> Any:
    """Start the run's single-agent baseline (the solo coder on the same task, template and
    model), linked to it by its TeamStarted's `baseline_of`. Each call starts another (a
    real model's runs differ), unless it sends the `Idempotency-Key` of one before: then it
    is answered that baseline (200), the one a new run's start with `baseline` and the same
    key began too, before anything is checked again (a 409 when the key names a run you did
    not begin). A baseline is a run of yours: a 429 when you have as many live runs as one
    person may (MINUTES_RUNS_PER_PERSON), as a start's; nothing is written."""
    run_for(request, run_id)
    by = user_name(request)
    solo = actions.baseline_key(key, by, run_id) if key else ""
    try:
        begun = baselines.start_baseline(run_id, by, solo, cap=settings.RUNS_PER_PERSON)
    except runs.KeyReused as exc:  # as a start's: at the header, where it was a 400
        raise invalid("header", {"Idempotency-Key": str(exc)}) from None
    return started(request, response, begun)


@router.get("/{run_id}/comparison", response={200: ComparisonOut, 404: Error})
def comparison(request: HttpRequest, run_id: str) -> Any:
    """The run beside its newest single-agent baseline: outcome, tokens, model calls, wall time
    and tokens per verified success, from the two runs' bills and summaries."""
    run_for(request, run_id)
    return queries.comparison(run_id)


@router.get("/{run_id}/findings", response={200: list[FindingOut], 404: Error}, exclude_unset=True)
def findings(request: HttpRequest, run_id: str) -> Any:
    run_for(request, run_id)
    return queries.findings(run_id)


@router.get(
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
    run_for(request, run_id)
    return downloads.journal(run_id)


@router.get(
    "/{run_id}/otlp",
    response={200: dict[str, Any], 404: Error, 409: Error},
    openapi_extra={
        "responses": {
            200: {
                "description": "the run as an OpenTelemetry trace: an OTLP export request, as "
                "OTLP/JSON, or with format=protobuf as OTLP/protobuf",
                "content": {"application/json": {}, "application/x-protobuf": {}},
            }
        }
    },
)
def otlp(request: HttpRequest, run_id: str, format: Literal["json", "protobuf"] = "json") -> Any:
    run_for(request, run_id)
    return downloads.otlp(run_id, protobuf=format == "protobuf")


@router.post("/{run_id}/otlp/push", response={202: Accepted, 403: Error, 404: Error, 409: Error})
def push_trace(request: HttpRequest, run_id: str) -> Any:
    """Push the run's trace to the configured collector again (after a failed push). 409 while
    a push of it is queued and may still be sending, saying from when it can be asked again."""
    run = run_for(request, run_id)
    require_steer(request.user, run, "push its trace")
    refusal = push_refusal(run)
    if refusal:
        return Status(409, {"detail": refusal})
    try:
        return Status(202, {"detail": traces.ask_for_push(run_id, by=user_name(request))})
    except traces.PushWaiting as exc:
        return Status(409, {"detail": str(exc)})


def push_refusal(run: RunSummary) -> str:
    """Why the run's trace cannot be pushed now ("" when it can)."""
    if not traces.enabled():
        return "no collector is configured (MINUTES_OTLP_ENDPOINT)"
    if not status.is_terminal(run.status):
        return f"the run is {run.status}: its trace is pushed once it has ended"
    return ""


@router.post("/{run_id}/interrupt", response={202: Accepted, 403: Error, 404: Error, 409: Error})
def interrupt(request: HttpRequest, run_id: str, body: ReasonIn | None = None) -> Any:
    """Stop the run at its next turn boundary; the body, and its reason, are optional."""
    return steer(request, run_id, "interrupt", body.reason if body else "")


@router.post("/{run_id}/resume", response={202: Accepted, 403: Error, 404: Error, 409: Error})
def resume(request: HttpRequest, run_id: str, body: ReasonIn | None = None) -> Any:
    """Go on with an interrupted run; the body, and its reason, are optional."""
    return steer(request, run_id, "resume", body.reason if body else "")


def steer(request: HttpRequest, run_id: str, action: str, reason: str) -> Any:
    require_steer(request.user, run_for(request, run_id))
    return Status(202, {"detail": actions.steer(run_id, action, user_name(request), reason)})


@router.post("/{run_id}/replay", response={200: ReplayOut, 403: Error, 404: Error, 409: Error})
def replay(request: HttpRequest, run_id: str) -> Any:
    """Fly the run again from its journal alone: whether it reproduces every event. For whoever
    may stop or resume the run; a run longer than MINUTES_REPLAY_MAX_EVENTS events is refused
    (409) with the command that replays it off the web server."""
    require_steer(request.user, run_for(request, run_id), "check a replay of it")
    report = runs.replay(run_id)
    return {
        "identical": report.identical,
        "events": report.events,
        "complete": report.complete,
        "difference": report.difference,
        "ended_by": report.ended_by,
        "read_back": report.read_back,
    }


@router.post(
    "/{run_id}/fork",
    response={200: RunOut, 201: RunOut, 400: Error, 404: Error, 409: Error, 429: Error, 503: Error},
    openapi_extra={"responses": {429: {"description": FORKS_AT_CAPACITY}}},
)
def fork(
    request: HttpRequest,
    response: HttpResponse,
    run_id: str,
    body: ForkIn,
    key: Key = KEY,
) -> Any:
    """A new run whose past is this run's up to the event at position `at` (read back from the
    record: no model asked, no tool run, no side effect made again), going on live after it
    with the changes given. Checked by replaying it before anything is written; refused (400)
    naming the event when the run's past would not replay under the fork's settings, at or
    after a dead letter in the run's journal, or when its team cannot go on live here, (409)
    when the run's own settings do not validate here, as its replay says, and (422 at `at`)
    when no event of the run is at `at`. Every fault in one 422: the schema's, the key's and,
    with them or with such an `at`, the checks that need the run (an agent it has not, an
    endpoint this server cannot use, a result replaced at no tool's; api/fork_refusals.py),
    each at its field; alone, those are the 400s above. Written whole or not at all: when the
    database does not take it (busy, read-only, full) the answer is a 503 saying so (409
    when another writer took its stream), nothing of it is written, and the same request
    may be sent again. With an `Idempotency-Key`, a fork sent again (its answer lost, a
    second click) is answered the fork the first made (200), whose journal and workspace
    are left as they are; the same key with another body is a 422 naming what differs, and
    a key that names a run you did not fork (imported, or someone else's) a 409. A fork is
    a run of yours: a 429 when you have as many live runs as one person may
    (MINUTES_RUNS_PER_PERSON), as a start's; nothing is written."""
    run_for(request, run_id)
    changes = body.changes()
    if fork_refusals.no_event(run_id, body.at):
        # The fork page's sentence, at the field, where it was the service's 400; with the
        # run's other checks of the changes (an agent it has not, an unusable endpoint), which
        # were said once `at` was mended. Where `at` names an event, those are the service's
        # (400), after a keyed fork sent again is answered.
        raise invalid("body", fork_refusals.of_run(request.user, run_id, body.at, changes))
    try:
        begun = forks.begin_fork(
            run_id, body.at, changes, user_name(request), key, settings.RUNS_PER_PERSON
        )
    except runs.KeyReused as exc:
        raise invalid("header", {"Idempotency-Key": str(exc)}) from None
    return started(request, response, begun)


@router.get("/{run_id}/tags", response={200: TagsOut, 404: Error})
def get_tags(request: HttpRequest, run_id: str) -> Any:
    run_for(request, run_id)
    return {"tags": tags.of(run_id)}


@router.post("/{run_id}/tags", response={200: TaggedOut, 400: Error, 404: Error, 409: Error})
def set_tags(request: HttpRequest, run_id: str, body: TagsIn) -> Any:
    """Put tags on the run (`add`) and take others off (`remove`); journalled (RunTagged, who
    and when) in the run's control stream. Find tagged runs with GET /api/runs?tag=…
    `unchanged` says what was so already ("already tagged nightly", "not tagged x"). A tag
    that is none, or one too many, is a 422 at its field, as the body's other checks."""
    run_for(request, run_id)
    try:
        done = tags.tag(run_id, body.add, body.remove, user_name(request))
    except tags.BadTag as exc:
        # Where it was the 400 of every RunError, with only a `detail` string. "add and
        # remove": a tag in both, named at both.
        said = str(exc).removeprefix(f"{exc.field}: ")
        raise invalid("body", dict.fromkeys(exc.field.split(" and "), said)) from None
    return {"tags": done.tags, "unchanged": done.unchanged}
