"""Who may see and do what, in one place: runs are visible to every signed-in user; stopping
and resuming a run (and checking its replay, pushing its trace) is for whoever started it or a
reviewer; decisions are for reviewers. Tags are the team's shared notes on runs, so anyone
signed in may put them on or take them off any run, named in its journal for each change; and
anyone may fork a run, since a fork is a new run of their own."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails

from journal_store import projection, stopped
from journal_store.models import RunSummary, StoredEvent
from services.runs import RunNotFound

DECIDE = "dashboard.decide"


class HtmxHttpRequest(HttpRequest):
    """A request as django-htmx's middleware leaves it (for the type checker)."""

    htmx: HtmxDetails


User = AbstractBaseUser | AnonymousUser


def can_decide(user: Any) -> bool:
    return bool(user.is_authenticated and user.has_perm(DECIDE))


def role_of(user: Any) -> str:
    """The person's role as the mutation gate's authority check reads it: `reviewer` (may
    decide on review items) or `viewer`."""
    return "reviewer" if can_decide(user) else "viewer"


def get_run_for_user(user: Any, run_id: str, fresh: bool = True) -> RunSummary:
    """The run's summary, caught up with the journal; RunNotFound (a 404) when there is none."""
    if not user.is_authenticated:
        raise PermissionDenied("sign in first")
    if fresh:
        projection.catch_up(wait=False)
    try:
        return RunSummary.objects.get(run_id=run_id)
    except RunSummary.DoesNotExist:
        raise RunNotFound(run_id) from None


# The status of a run its summary's fold stopped at its first event: nothing of it is folded.
UNFOLDED = stopped.UNFOLDED


def run_or_unfolded(user: Any, run_id: str) -> RunSummary:
    """get_run_for_user, and for a run with no summary because the runs' fold stopped at its
    first event (journal_store/stopped.py), a summary not saved that says only that: status
    UNFOLDED, its start as its first row says; its page and the API's detail say why, where
    they answered 404 and nothing said why."""
    try:
        return get_run_for_user(user, run_id)
    except RunNotFound:
        if not stopped.of_run(run_id):
            raise
    first = StoredEvent.objects.filter(run_id=run_id).order_by("position").values("t").first()
    t = first["t"] if first else 0.0
    start = datetime.fromtimestamp(t, UTC) if t > 0 else None
    return RunSummary(run_id=run_id, status=UNFOLDED, stage="", started_at=start)


def can_steer(user: Any, run: RunSummary) -> bool:
    """Interrupt and resume: the person who started the run, or a reviewer."""
    return bool(
        user.is_authenticated and (run.started_by == user.get_username() or can_decide(user))
    )


def require_steer(user: Any, run: RunSummary, what: str = "stop or resume it") -> None:
    if not can_steer(user, run):
        raise PermissionDenied(f"only who started this run, or a reviewer, may {what}")


def require_decide(user: Any, what: str = "deciding on review items") -> None:
    """PermissionDenied naming `what` was asked, unless the person has the reviewer permission."""
    if not can_decide(user):
        raise PermissionDenied(f"{what} needs the reviewer permission")
