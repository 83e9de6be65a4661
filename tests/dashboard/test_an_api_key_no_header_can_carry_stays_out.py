"""An API key with a line break inside it (a key file of two lines): the server refuses to
start on it, a run asked for on it is refused where it is asked for, and a run that reaches the
workers with it (its settings changed after it was asked for) ends saying which setting is
wrong; the key is in none of what is answered, shown, exported or logged. It was shown in full
on the run's page, the API, its export, the dead-letter queue and the worker's log: http.client
refused the header with a ValueError quoting it, which no blanking of the key caught."""

from __future__ import annotations

import json
import logging

import pytest

from journal_store.models import RunSummary, StoredEvent
from services import runs
from tests.dashboard.conftest import drive
from tests.startup import refused

pytestmark = pytest.mark.django_db

KEY = "sk-SECRETKEY-0123456789abcdefghijklmnopqrstuvwxyz"
BAD = f"{KEY}\nsecond-line-of-file"
URL = "http://127.0.0.1:9/v1"


@pytest.fixture
def bad_key(settings):
    settings.MODEL_BASE_URL = URL
    settings.MODELS = {
        "MINUTES_MODEL_BASE_URL": URL,
        "MINUTES_MODEL": "some-model",
        "MINUTES_MODEL_API_KEY": BAD,
    }


def test_the_server_refuses_to_start_on_it_without_saying_it() -> None:
    said = refused(MINUTES_MODEL_API_KEY=BAD)
    assert "ImproperlyConfigured: MINUTES_MODEL_API_KEY holds a line break inside it" in said
    assert KEY[:16] not in said and "second-line" not in said


def test_a_run_on_it_is_refused_where_it_is_asked_for(bad_key, api, as_owner) -> None:
    body = {"team": "solo", "scenario": "solo-fix", "model": "endpoint"}

    answer = api.post("/api/runs", json.dumps(body), content_type="application/json")

    assert answer.status_code == 422, answer.content
    assert answer.json()["detail"][0]["msg"].startswith("MINUTES_MODEL_API_KEY holds a line break")
    form = as_owner.post("/runs/new", {**body, "allowance": 5000, "max_turns": 12})
    assert form.status_code == 400
    for text in (answer.content.decode(), form.content.decode()):
        assert KEY[:16] not in text and "second-line" not in text
    assert not RunSummary.objects.exists() and not StoredEvent.objects.exists()


def test_a_run_that_reaches_the_workers_with_it_keeps_it_out(bad_key, as_owner, caplog) -> None:
    run_id = runs.start_run("solo", "solo-fix", by="owner", model="endpoint")

    with caplog.at_level(logging.DEBUG):
        drive(run_id)

    shown = [
        as_owner.get(url).content.decode()
        for url in (
            f"/runs/{run_id}/",
            f"/api/runs/{run_id}",
            f"/api/runs/{run_id}/events",
            "/review/dead-letters",
            "/api/review/dead-letters",
        )
    ]
    export = as_owner.get(f"/runs/{run_id}/export.jsonl")
    shown.append(b"".join(export.streaming_content).decode())
    shown.append(caplog.text)
    for text in shown:
        assert KEY[:16] not in text and "second-line" not in text
    assert "MINUTES_MODEL_API_KEY holds a line break" in shown[1]  # the API says why
