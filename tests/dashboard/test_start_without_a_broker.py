"""Starting a run while the broker is away: the run is recorded once and the answer says so
(201, its id), because the reconciler queues a running run nobody drives once a worker's beat
reaches the broker. An error answer here had scripts start the same run again."""

from __future__ import annotations

import logging
import socket

import pytest
from django.test import Client

from journal_store.models import RunSummary, StoredEvent
from tests.tasks.conftest import use_broker

pytestmark = pytest.mark.django_db


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then let go)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def broker_away(settings):
    from config.celery import app

    policy = app.conf.task_publish_retry_policy
    app.conf.task_publish_retry_policy = {"max_retries": 0}
    use_broker(f"redis://127.0.0.1:{closed_port()}/0", {})
    yield
    app.conf.task_publish_retry_policy = policy
    use_broker("memory://", {})  # as the dashboard's tests have it (tests/conftest.py: nowhere)


def test_a_run_started_while_the_broker_is_away_is_recorded_once_and_answered(
    token, broker_away, caplog, django_capture_on_commit_callbacks
):
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    with (
        caplog.at_level(logging.WARNING, logger="services.queue"),
        django_capture_on_commit_callbacks(execute=True) as sent,
    ):
        answer = api.post("/api/runs", {"team": "solo"}, content_type="application/json")
    assert len(sent) == 1  # the first step's message, tried
    assert answer.status_code == 201, answer.content
    run_id = answer.json()["run_id"]
    assert answer.json()["status"] == "running"
    assert list(RunSummary.objects.values_list("run_id", flat=True)) == [run_id]
    assert StoredEvent.objects.filter(kind="TeamStarted").count() == 1
    said = [r.getMessage() for r in caplog.records if r.name == "services.queue"]
    assert any(f"the broker did not take run {run_id}'s next step" in m for m in said), said
