"""Shared fixtures for the whole suite."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from runtime import flight
from runtime.journal import Recorded
from runtime.jsonl import JsonlJournal

# Crash-test seams must never leak in from the environment of whoever runs the suite.
os.environ.pop("MINUTES_FAULT", None)
os.environ.pop("MINUTES_EXEC_LOG", None)


@dataclass
class Flown:
    path: Path
    run_id: str
    outcome: flight.FlightOutcome
    workspace: Path

    @property
    def records(self) -> list[Recorded]:
        return JsonlJournal(self.path).read(f"run-{self.run_id}")

    @property
    def events(self):
        return [r.event for r in self.records]

    def kinds(self) -> list[str]:
        return [e.kind for e in self.events]

    def messages(self) -> list[tuple[str, str, str]]:
        return [
            (e.performative.upper(), e.sender, e.recipient)
            for e in self.events
            if e.kind == "MessageSent"
        ]


@pytest.fixture(scope="session")
def fly_team(tmp_path_factory):
    """fly_team(scenario, team="repo-fix", **settings) -> Flown, cached per arguments."""
    cache: dict[tuple, Flown] = {}
    root = tmp_path_factory.mktemp("flights")

    def fly(scenario: str, team: str = "repo-fix", **settings) -> Flown:
        key = (team, scenario, json.dumps(settings, sort_keys=True))
        if key not in cache:
            run_id = f"r-{scenario}-{len(cache)}"
            path = root / f"{run_id}.jsonl"
            config = flight.plan(team, scenario, run_id, **settings)
            outcome = flight.fly(JsonlJournal(path), config, run_id, root)
            cache[key] = Flown(path, run_id, outcome, root / config.workspace)
        return cache[key]

    return fly


# --- how `make test` shares the suite between its processes ----------------------------------


def share(nodeid: str) -> str:
    """The share of the suite a test goes to one process with: its file (whose module fixtures
    are then built once), or, for the tests on the real local model, all of them: with two
    model servers inferring at once on two cores, the reflection test took 335 s (74 s in a
    suite on one process)."""
    path = nodeid.split("::")[0]
    return "local-model" if path.startswith("tests/local_model/") else path


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """pytest-xdist's scheduling by scope, a share being the scope, taken in the suite's order
    (below) rather than by the number of tests in each."""
    from xdist.scheduler import LoadScopeScheduling

    class ByShare(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return share(nodeid)

    config.option.loadscopereorder = False
    return ByShare(config, log)


@pytest.hookimpl(trylast=True)  # after pytest-django's own ordering, which would undo this
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The shares that spawn processes and servers (the slow ones) go first, the local model's
    first of all, so that the suite's last minutes are quick files on every process rather
    than one long file started late on one."""
    slow = {share(i.nodeid) for i in items if i.get_closest_marker("slow") is not None}
    first = {"local-model": 0}  # the longest share of all
    items.sort(key=lambda i: first.get(share(i.nodeid), 1 if share(i.nodeid) in slow else 2))


# --- every database backend: SQLite always, PostgreSQL when available -----------------------

ALIASES = [alias for alias in ("default", "postgres") if alias in settings.DATABASES]
BACKENDS = ["default", "postgres"]


# A test skipped in these words (their "not available") fails a run of .ci/run, where the
# suite must have its PostgreSQL.
NO_POSTGRES = "PostgreSQL is not available here (install it, or set MINUTES_TEST_POSTGRES_URL)"


def need_postgres() -> None:
    """Skip the test, saying why, where the suite has no PostgreSQL ("postgres")."""
    if "postgres" not in settings.DATABASES:
        pytest.skip(NO_POSTGRES)


@pytest.fixture(params=BACKENDS, ids=["sqlite", "postgres"])
def alias(request):
    if request.param not in settings.DATABASES:
        pytest.skip(NO_POSTGRES)
    return request.param


def on_every_backend(transaction: bool = False):
    """The django_db mark for tests that take the `alias` fixture."""
    return pytest.mark.django_db(databases=ALIASES, transaction=transaction)


# The `server` fixture: a fake OpenAI-compatible endpoint; `collectors`: hostile OTLP collectors.
pytest_plugins = ["tests.fakellm", "tests.hostile_collector"]


@pytest.fixture(autouse=True)
def quick_password_hashing(settings):
    """Hashing a password the production way takes a third of a second; the suite signs in and
    guesses wrong hundreds of times. What is tested (who may sign in, lockouts) is the same."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def nowhere(settings, tmp_path):
    """Enqueued steps go to an in-memory broker nobody reads: the test drives each step."""
    from tests.tasks.conftest import use_broker

    use_broker("memory://", {})
    settings.WORKSPACES = tmp_path / "workspaces"
    settings.CELERY_TASK_ALWAYS_EAGER = False
    yield
    use_broker(settings.CELERY_BROKER_URL, settings.CELERY_BROKER_TRANSPORT_OPTIONS)
