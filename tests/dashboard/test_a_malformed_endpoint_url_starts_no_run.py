"""A model endpoint's URL no request could be made to: the server refuses to start on it, and
where the settings changed after (as a test's do) a run asked for on it is refused where it is
asked for, naming the setting, with nothing written. `http://[::1/v1` gave a 500 on both the
API and the form (ValueError out of the plain-HTTP check), and the others were taken, each run
waited out for a quarter of an hour as an endpoint down before its dead letter."""

from __future__ import annotations

import json

import pytest

from journal_store.models import RunSummary, StoredEvent
from tests.startup import refused

pytestmark = pytest.mark.django_db

URLS = ["http://[::1/v1", "http://", "http:///v1", "http://127.0.0.1:notaport/v1", "http://a b/v1"]


def test_the_server_refuses_to_start_on_one() -> None:
    said = refused(MINUTES_MODEL_BASE_URL="http://127.0.0.1:notaport/v1", MINUTES_MODEL="m")
    assert "ImproperlyConfigured: MINUTES_MODEL_BASE_URL must have a port from 1 to 65535" in said
    said = refused(MINUTES_MODEL_BASE_URL="http://[::1/v1")
    assert "ImproperlyConfigured: MINUTES_MODEL_BASE_URL must be a URL" in said
    said = refused(MINUTES_MODEL_TIMEOUT="1e-300")
    assert "ImproperlyConfigured: MINUTES_MODEL_TIMEOUT must be a number of seconds from 1" in said


@pytest.mark.parametrize("url", URLS)
def test_a_run_on_one_is_refused_where_it_is_asked_for(url, settings, api, as_owner) -> None:
    settings.MODEL_BASE_URL = url
    settings.MODELS = {"MINUTES_MODEL_BASE_URL": url, "MINUTES_MODEL": "some-model"}
    body = {"team": "solo", "scenario": "solo-fix", "model": "endpoint"}

    answer = api.post("/api/runs", json.dumps(body), content_type="application/json")

    assert answer.status_code == 422, answer.content
    [problem] = answer.json()["detail"]
    assert problem["loc"] == ["body", "model"]
    assert problem["msg"].startswith("MINUTES_MODEL_BASE_URL must ")

    form = as_owner.post("/runs/new", {**body, "allowance": 5000, "max_turns": 12})
    assert form.status_code == 400  # the form again, saying why
    assert "MINUTES_MODEL_BASE_URL must " in form.content.decode()

    assert not RunSummary.objects.exists() and not StoredEvent.objects.exists()
