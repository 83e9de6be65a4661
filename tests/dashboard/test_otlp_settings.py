"""The trace the dashboard serves follows the deployment's settings: its project names the
service, and MINUTES_OTLP_HEADERS is read as key=value pairs, refused loudly when it is not."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from config import env
from tests.startup import refused

pytestmark = pytest.mark.django_db(transaction=True)


def resource(response):
    [spans] = json.loads(b"".join(response.streaming_content))["resourceSpans"]
    return {a["key"]: a["value"]["stringValue"] for a in spans["resource"]["attributes"]}


def test_the_project_setting_names_the_service_of_the_served_trace(as_owner, done_run):
    assert resource(as_owner.get(f"/api/runs/{done_run}/otlp"))["service.name"] == "minutes"
    with override_settings(OTLP_PROJECT="support-prod"):
        served = resource(as_owner.get(f"/api/runs/{done_run}/otlp"))
    assert served == {"service.name": "support-prod", "openinference.project.name": "support-prod"}


def test_headers_are_key_value_pairs_and_a_bad_item_is_refused_without_its_value(monkeypatch):
    monkeypatch.setenv("MINUTES_OTLP_HEADERS", "authorization=Bearer%20s3cret, x-team = ops ,")
    assert env.pairs("MINUTES_OTLP_HEADERS") == {"authorization": "Bearer s3cret", "x-team": "ops"}
    monkeypatch.setenv("MINUTES_OTLP_HEADERS", "x-team=ops,Bearer-s3cret")
    with pytest.raises(ImproperlyConfigured) as refused:
        env.pairs("MINUTES_OTLP_HEADERS")
    assert str(refused.value) == "MINUTES_OTLP_HEADERS: item 2 is not key=value"
    monkeypatch.delenv("MINUTES_OTLP_HEADERS")
    assert env.pairs("MINUTES_OTLP_HEADERS") == {}


@pytest.mark.parametrize(
    "raw", ["authorization=Bearer%20tok-SECRET%0A", "authorization=Bearer tok-SECRET-é€"]
)
def test_a_header_value_http_cannot_carry_is_refused_at_start_naming_the_header(monkeypatch, raw):
    monkeypatch.setenv("MINUTES_OTLP_HEADERS", raw)
    with pytest.raises(ImproperlyConfigured) as refused:
        env.pairs("MINUTES_OTLP_HEADERS")
    assert "'authorization'" in str(refused.value)
    assert "SECRET" not in str(refused.value)


def test_a_header_value_in_latin_1_with_a_tab_is_taken(monkeypatch):
    monkeypatch.setenv("MINUTES_OTLP_HEADERS", "x-team=caf%C3%A9%09ops")
    assert env.pairs("MINUTES_OTLP_HEADERS") == {"x-team": "café\tops"}


PASSWORD = "hunter2-pass-word"


@pytest.mark.parametrize(
    ("url", "said"),
    [
        (f"http://alice:{PASSWORD}@127.0.0.1:4318", "must hold no user name or password"),
        ("http://127.0.0.1:4318/v1\x1b/traces", "must hold no space, control character"),
        ("http://collector host:4318", "must hold no space, control character"),
        ("http://:4318/ingest/key-SECRET", "must name a host after its scheme"),
        ("http://127.0.0.1:99999", "must have a port from 1 to 65535"),
        ("ftp://127.0.0.1:4318", "must start with http:// or https://"),
    ],
)
def test_an_endpoint_no_push_could_reach_is_refused_at_start_naming_the_setting(url, said):
    stderr = refused(MINUTES_OTLP_ENDPOINT=url)
    assert f"ImproperlyConfigured: MINUTES_OTLP_ENDPOINT {said}" in stderr
    assert PASSWORD not in stderr and "SECRET" not in stderr  # nor a path's key


def test_an_endpoint_with_a_path_and_a_port_is_taken():
    started = subprocess.run(
        [sys.executable, "-c", "from django.conf import settings; print(settings.OTLP_ENDPOINT)"],
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "MINUTES_OTLP_ENDPOINT": " https://collector.example:4318/otlp/ ",
        },
        capture_output=True,
        text=True,
    )
    assert started.returncode == 0, started.stderr
    assert started.stdout == "https://collector.example:4318/otlp\n"
