"""/api/runs: the runs list, starting a run, a run's events and minutes, its files, steering it."""

# No `from __future__ import annotations`: django-ninja reads the annotations at runtime.

from typing import Any

from django.http import HttpRequest
from ninja import Query, Router, Status
from ninja.pagination import paginate

from dashboard import actions, downloads, queries
from dashboard.access import get_run_for_user, require_steer
from dashboard.api.auth import user_name
from dashboard.api.paging import Pages
from dashboard.api.schemas import (
    Accepted,
    AuditEntryOut,
    BillOut,
    ComparisonOut,
    Error,
    EventOut,
    FindingOut,
    MetricOut,
    ReasonIn,
    ReplayOut,
    ResumePointOut,
    RunIn,
    RunOut,
    ThreadsOut,
)
from journal_store.models import RunSummary
from services import baseline as baselines
from services import runs

router = Router(tags=["runs"])


def run_for(request: HttpRequest, run_id: str) -> RunSummary:
    """The run, caught up; RunNotFound (404, by its handler) when there is none."""
    return get_run_for_user(request.user, run_id)


@router.get("", response=list[RunOut])
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


@router.post("", response={201: RunOut, 400: Error, 503: Error})
def start_run(request: HttpRequest, body: RunIn) -> Any:
    run_id = actions.NewRun(**body.model_dump()).start(user_name(request))
    return Status(201, run_for(request, run_id))


@router.get("/{run_id}", response={200: RunOut, 404: Error})
def get_run(request: HttpRequest, run_id: str) -> Any:
    return run_for(request, run_id)


@router.get("/{run_id}/events", response={200: list[EventOut], 404: Error})
def events(
    request: HttpRequest,
    run_id: str,
    after: int = 0,
    kind: str = "",
    limit: int = Query(100, ge=1, le=queries.EVENTS_MAX),  # type: ignore[type-arg]
) -> Any:
    run_for(request, run_id)
    return queries.events(run_id, after, kind, limit=limit)


@router.get("/{run_id}/bill", response={200: BillOut, 404: Error})
def bill(request: HttpRequest, run_id: str) -> Any:
    run_for(request, run_id)
    return queries.bill(run_id)


@router.get("/{run_id}/threads", response={200: ThreadsOut, 404: Error})
def threads(
    request: HttpRequest,
    run_id: str,
    after: int = Query(0, ge=0, description="messages after this position"),  # type: ignore[type-arg]
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
    after: int = Query(0, ge=0, description="entries after this position"),  # type: ignore[type-arg]
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


@router.post("/{run_id}/baseline", response={201: RunOut, 404: Error, 409: Error, 503: Error})
def start_baseline(request: HttpRequest, run_id: str) -> Any:
    """Start the run's single-agent baseline (the solo coder on the same task, template and
    model), linked to it by its TeamStarted's `baseline_of`."""
    run_for(request, run_id)
    solo = baselines.start_baseline(run_id, user_name(request))
    return Status(201, run_for(request, solo))


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
    response={200: dict[str, Any], 404: Error},
    openapi_extra={
        "responses": {
            200: {"description": "the run as an OpenTelemetry trace: an OTLP/JSON export request"}
        }
    },
)
def otlp(request: HttpRequest, run_id: str) -> Any:
    run_for(request, run_id)
    return downloads.otlp(run_id)


@router.post("/{run_id}/interrupt", response={202: Accepted, 403: Error, 404: Error, 409: Error})
def interrupt(request: HttpRequest, run_id: str, body: ReasonIn) -> Any:
    return steer(request, run_id, "interrupt", body.reason)


@router.post("/{run_id}/resume", response={202: Accepted, 403: Error, 404: Error, 409: Error})
def resume(request: HttpRequest, run_id: str, body: ReasonIn) -> Any:
    return steer(request, run_id, "resume", body.reason)


def steer(request: HttpRequest, run_id: str, action: str, reason: str) -> Any:
    require_steer(request.user, run_for(request, run_id))
    return Status(202, {"detail": actions.steer(run_id, action, user_name(request), reason)})


@router.post("/{run_id}/replay", response={200: ReplayOut, 404: Error, 409: Error})
def replay(request: HttpRequest, run_id: str) -> Any:
    run_for(request, run_id)
    report = runs.replay(run_id)
    return {
        "identical": report.identical,
        "events": report.events,
        "complete": report.complete,
        "difference": report.difference,
    }
