"""One run as its page shows it (GET /api/runs/RUN): the list's summary, and what only the
page says of it: a stop on its way, failing steps, specialists whose endpoint is down, the
answer it composed, whether it ran without the sandbox, where it was imported from, its forks.
Each is resolved from the read models or the run's own kind-indexed events."""

# No `from __future__ import annotations`: django-ninja reads these classes at runtime.

from datetime import UTC, datetime

from ninja import Field, Schema

from dashboard import queries
from dashboard.api.run_schemas import RunOut
from journal_store.models import RunSummary
from runtime import status


class StopOut(Schema):
    by: str
    reason: str


class FailingOut(Schema):
    since: datetime = Field(description="when the first of the failed steps failed")
    tries: int = Field(description="steps failed since the run last moved")
    last_error: str = Field(description="the latest failure, as 'Type: message'")
    outage: bool = Field(
        description="every failure was the model endpoint not answering (EndpointDown): "
        "waited out until `until`, then dead-lettered"
    )
    until: datetime | None = Field(
        None, description="how long an outage is waited out (MINUTES_OUTAGE_SECONDS)"
    )


class SpecialistDownOut(Schema):
    sub_id: str = Field(description="the sub-task the specialist works on")
    worker_id: str = Field(description="the specialist")
    since: datetime = Field(description="when the outage's first start gave its lease back")
    starts: int = Field(description="its starts that met the endpoint down, waited out")
    last: str = Field(description="what the latest said, as 'Type: message'")
    until: datetime = Field(
        description="how long it is waited out (MINUTES_OUTAGE_SECONDS); then its starts "
        "count toward its restarts"
    )


class AnswerOut(Schema):
    text: str = Field(description="the answer the run composed, as journalled (agent output)")
    degraded: str | None = Field(description="what it could not answer, and why; None: whole")
    sources: list[str] = Field(description="the tool calls its findings rest on")


class OriginOut(Schema):
    file: str = Field(description="the name of the file the run was imported from")
    by: str | None = Field(description="who imported it")
    at: datetime = Field(description="when")


class ForkOut(Schema):
    run_id: str
    fork_at: int | None = Field(
        description="this store's position of the event it was forked after; None: not held here"
    )
    imported: bool = Field(
        description="read from a file: what it says of its forking is the file's"
    )


class ViewStoppedOut(Schema):
    view: str = Field(description="the read model (projector) that stopped applying the run")
    position: int = Field(
        description="the event whose fold raised: the view shows the run as "
        "it stood before it, and skips the rest of it"
    )
    kind: str = Field(description="that event's kind")
    error: str = Field(description="what the fold raised, as 'Type: message', shortened")


class RunDetailOut(RunOut):
    """One run, as the list gives it, and what only its own page shows."""

    answer: AnswerOut | None = Field(
        None, description="the answer a fan-out team composed (None: none composed)"
    )
    unsandboxed: bool = Field(
        False,
        description="started with MINUTES_SANDBOX=off: agent code ran with the worker's rights",
    )
    origin: OriginOut | None = Field(None, description="imported from a file (None: flown here)")
    forks: list[ForkOut] = Field(
        default_factory=list,
        description=f"its newest {queries.FORKS_SHOWN} forks, as its page lists them "
        "(GET /api/runs?parent=RUN lists them all)",
    )

    @staticmethod
    def resolve_answer(run: RunSummary) -> AnswerOut | None:
        found = queries.answer(run.run_id)
        if found is None:
            return None
        return AnswerOut(text=found.text, degraded=found.degraded, sources=list(found.sources))

    @staticmethod
    def resolve_unsandboxed(run: RunSummary) -> bool:
        return queries.unsandboxed(run.run_id)

    @staticmethod
    def resolve_origin(run: RunSummary) -> OriginOut | None:
        found = queries.origin(run.run_id)
        if found is None:
            return None
        return OriginOut(file=found.file, by=found.by, at=datetime.fromtimestamp(found.t, UTC))

    @staticmethod
    def resolve_forks(run: RunSummary) -> list[ForkOut]:
        return [
            ForkOut(run_id=child, fork_at=at, imported=imported)
            for child, at, imported in queries.forks_of(run.run_id).listed
        ]

    views_stopped: list[ViewStoppedOut] = Field(
        default_factory=list,
        description="its read models that stopped at one of its events (a fold raised on it); "
        "`python manage.py rebuild_projections` folds the run again once the cause is fixed. "
        "Empty: every view holds the whole run. A run whose views stopped at its first "
        "event has no summary: its status is `unknown`, its figures zero",
    )

    @staticmethod
    def resolve_views_stopped(run: RunSummary) -> list[ViewStoppedOut]:
        return [ViewStoppedOut(**vars(s)) for s in queries.views_stopped(run.run_id)]

    stop_requested: StopOut | None = Field(
        None,
        description="a stop a person asked of the running run that it has not reached yet (it "
        "stops at its next turn boundary; a resume cancels it); None: none pending",
    )
    failing: FailingOut | None = Field(
        None,
        description="the running run's steps that failed since it last moved (tried again "
        "after a backoff); None: its last step went through",
    )

    specialists_down: list[SpecialistDownOut] = Field(
        default_factory=list,
        description="the running run's specialists whose model endpoint is down, being waited "
        "out (started again a while apart, not counted toward their restarts)",
    )

    @staticmethod
    def resolve_specialists_down(run: RunSummary) -> list[SpecialistDownOut]:
        if run.status != status.RUNNING:
            return []
        return [SpecialistDownOut(**vars(d)) for d in queries.specialists_down(run.run_id)]

    @staticmethod
    def resolve_failing(run: RunSummary) -> FailingOut | None:
        if run.status != status.RUNNING:
            return None
        found = queries.trouble(run.run_id)
        if found is None:
            return None
        return FailingOut(
            since=found.since,
            tries=found.tries,
            last_error=found.last_error,
            outage=found.outage,
            until=found.until,
        )

    @staticmethod
    def resolve_stop_requested(run: RunSummary) -> StopOut | None:
        if not status.is_active(run.status):
            return None
        stop = queries.pending_stop(run.run_id)
        return None if stop is None else StopOut(by=stop.by, reason=stop.reason)
