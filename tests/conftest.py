"""Shared fixtures for the whole suite."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

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


# --- every database backend: SQLite always, PostgreSQL when available -----------------------

ALIASES = [alias for alias in ("default", "postgres") if alias in settings.DATABASES]
BACKENDS = ["default", "postgres"]


@pytest.fixture(params=BACKENDS, ids=["sqlite", "postgres"])
def alias(request):
    if request.param not in settings.DATABASES:
        pytest.skip(
            "PostgreSQL is not available here (install it, or set MINUTES_TEST_POSTGRES_URL)"
        )
    return request.param


def on_every_backend(transaction: bool = False):
    """The django_db mark for tests that take the `alias` fixture."""
    return pytest.mark.django_db(databases=ALIASES, transaction=transaction)


pytest_plugins = ["tests.fakellm"]  # the `server` fixture: a fake OpenAI-compatible endpoint


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
