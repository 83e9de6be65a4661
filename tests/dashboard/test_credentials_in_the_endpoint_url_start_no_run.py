"""A model endpoint URL holding a user name and password: the server refuses to start on it,
and where the settings changed after (as a test's do) a run asked for on it is refused where it
is asked for, naming the setting; the password is in none of what is answered, shown or
written. It was taken, and the run's every call went to the name server as a host named
"alice:pw@127.0.0.1", waited out as an outage, the password shown in the API's answer, the run
page, its bill and findings, its export, the dead letters and the trace; an ftp:// URL's 422
quoted it in full."""

from __future__ import annotations

import json

import pytest

from journal_store.models import RunSummary, StoredEvent
from tests.startup import refused

pytestmark = pytest.mark.django_db

PASSWORD = "hunter2-pass-word"
URLS = [f"http://alice:{PASSWORD}@127.0.0.1:9/v1", f"ftp://bob:{PASSWORD}@10.0.0.1/v1"]


def test_the_server_refuses_to_start_on_one_without_saying_the_password() -> None:
    said = refused(MINUTES_MODEL_BASE_URL=URLS[0], MINUTES_MODEL="m")
    assert "ImproperlyConfigured: MINUTES_MODEL_BASE_URL must hold no user name or password" in said
    assert PASSWORD not in said


@pytest.mark.parametrize("url", URLS)
def test_a_run_on_one_is_refused_without_saying_the_password(url, settings, api, as_owner) -> None:
    settings.MODEL_BASE_URL = url
    settings.MODELS = {"MINUTES_MODEL_BASE_URL": url, "MINUTES_MODEL": "some-model"}
    body = {"team": "solo", "scenario": "solo-fix", "model": "endpoint"}

    answer = api.post("/api/runs", json.dumps(body), content_type="application/json")

    assert answer.status_code == 422, answer.content
    [problem] = answer.json()["detail"]
    assert problem["msg"].startswith("MINUTES_MODEL_BASE_URL must ")
    assert "***@" in problem["msg"] and PASSWORD not in answer.content.decode()

    form = as_owner.post("/runs/new", {**body, "allowance": 5000, "max_turns": 12})
    assert form.status_code == 400 and "MINUTES_MODEL_BASE_URL must " in form.content.decode()
    assert PASSWORD not in form.content.decode()
    page = as_owner.get("/runs/new?model=endpoint")
    assert PASSWORD not in page.content.decode()

    assert not RunSummary.objects.exists() and not StoredEvent.objects.exists()
