"""Personas and runs for the dashboard and API tests.

owner: started the runs; reviewer: may decide on review items; outsider: signed in, nothing
more. Runs are driven to their end in this process (an in-memory broker nobody reads), so the
tests see real journals, real read models and real workspaces.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from django.db import connections
from django.db.utils import load_backend
from django.test import Client
from ninja.responses import NinjaJSONEncoder

from dashboard.models import ApiToken
from journal_store.models import Conflict
from services import queue, runs
from services.steps import drive_step
from tests.conftest import need_postgres
from tests.dashboard.recorded import Recorder

RECORDER: list[Recorder] = []  # the process's, while a test that opted in runs


@pytest.fixture(autouse=True)
def steps_go_nowhere(nowhere):
    """Enqueued steps go to a broker nobody reads (tests/conftest.py): pages never drive."""


@pytest.fixture
def inline_specialists(monkeypatch):
    """A fan-out run's specialists run inline, when they are sent off (the workers would run
    them as Celery tasks)."""
    from services import specialists

    monkeypatch.setattr(
        specialists,
        "dispatch",
        lambda run, sub, handoff: specialists.run_specialist(run, sub, "inline"),
    )


def make_user(name: str, decide: bool = False) -> User:
    user = User.objects.create_user(name, f"{name}@example.com", "pw")
    if decide:
        user.user_permissions.add(Permission.objects.get(codename="decide"))
    return user


@pytest.fixture
def owner(db):
    return make_user("owner")


@pytest.fixture
def reviewer(db):
    return make_user("reviewer", decide=True)


@pytest.fixture
def outsider(db):
    return make_user("outsider")


def on_postgresql() -> None:
    """This thread's "default" connection: a new one to the suite's PostgreSQL database."""
    found = connections.settings["postgres"]  # its NAME the test database's, once made
    connections["default"] = load_backend(found["ENGINE"]).DatabaseWrapper(found, "default")


@pytest.fixture
def postgresql():
    """The suite's PostgreSQL database (tests/settings.py) is "default", which the services
    read and write, for the test, so the same code runs on it as on a PostgreSQL deployment.
    The test's django_db mark must take the "postgres" database (tests/conftest.py's ALIASES)."""
    need_postgres()
    sqlite = connections["default"]
    on_postgresql()
    assert connections["default"].vendor == "postgresql"
    try:
        yield
    finally:
        connections["default"].close()
        connections["default"] = sqlite


@pytest.fixture
def sent(monkeypatch):
    """The runs a step was sent for, in order (services.queue.advance, still sending)."""
    ids: list[str] = []
    advance = queue.advance

    def noting(run_id: str, **kwargs):
        ids.append(run_id)
        advance(run_id, **kwargs)

    monkeypatch.setattr(queue, "advance", noting)
    return ids


def client_for(user: User, **kwargs) -> Client:
    client = Client(**kwargs)
    client.force_login(user)
    return client


@pytest.fixture
def as_owner(owner):
    return client_for(owner)


@pytest.fixture
def as_reviewer(reviewer):
    return client_for(reviewer)


@pytest.fixture
def as_outsider(outsider):
    return client_for(outsider)


def drive(run_id: str) -> str:
    for _ in range(300):
        outcome = drive_step(run_id, "test")
        if outcome != "stepped":
            return outcome
    raise AssertionError("the run never settled")


@pytest.fixture(scope="session")
def recorder(tmp_path_factory):
    return Recorder(tmp_path_factory.mktemp("recorded-runs"))


@pytest.fixture
def recorded_runs(recorder):
    """run_of's finished runs are written again from the first flown in this process
    (tests/dashboard/recorded.py): for the modules whose tests each need a run standing."""
    RECORDER.append(recorder)
    yield
    RECORDER.remove(recorder)


def run_of(scenario: str, by: str = "owner", steps: int | None = None) -> str:
    """Start a run and drive it to its end (or `steps` steps)."""
    if RECORDER and steps is None:
        return RECORDER[0].run(scenario, by, lambda: flown(scenario, by))
    return flown(scenario, by, steps)


def flown(scenario: str, by: str, steps: int | None = None) -> str:
    run_id = runs.start_run("repo-fix", scenario, by=by)
    if steps is None:
        drive(run_id)
    else:
        for _ in range(steps):
            drive_step(run_id, "test")
    return run_id


@pytest.fixture
def done_run(owner):
    return run_of("premature-done")


@pytest.fixture
def token(reviewer):
    return ApiToken.issue(reviewer, "tests")[1]


@pytest.fixture
def api(token):
    """The API as the reviewer's token sees it (a module may sign in otherwise: its own api)."""
    return Client(HTTP_AUTHORIZATION=f"Bearer {token}")


def two_runs(order: str) -> tuple[Conflict, Conflict]:
    """Two support-desk lost-update runs on one order, driven: the first run's conflict and
    the second's, both parked on `order` (their claims share its stream)."""
    first = runs.start_run("support-desk", "lost-update", by="owner", desk={"order_id": order})
    assert drive(first) == "escalated"
    second = runs.start_run("support-desk", "lost-update", by="owner", desk={"order_id": order})
    assert drive(second) == "escalated"
    return Conflict.objects.get(run_id=first), Conflict.objects.get(run_id=second)


def claim_of(conflict: Conflict, value: str) -> str:
    """The conflict's run's own claim of `value`."""
    (found,) = [
        c["claim_id"]
        for c in conflict.claims
        if c["value"] == value and c["run_id"] == conflict.run_id
    ]
    return found


def stage_waiting(what: str, since) -> str:
    """A waiting run's stage as its header says it: what a person is to decide, and since when
    the oldest item it waits on was opened (a time, which a page left open keeps true)."""
    return (
        f'<dd>waiting for a person: {what}<br><span class="muted small">since <time '
        f'datetime="{since.isoformat()}">{since:%Y-%m-%d %H:%M}</time> UTC</span></dd>'
    )


def api_time(at) -> str:
    """A time as the API writes it (django-ninja's JSON encoder's)."""
    return NinjaJSONEncoder().default(at)
