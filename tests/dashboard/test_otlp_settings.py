"""The trace the dashboard serves follows the deployment's settings: its project names the
service, and MINUTES_OTLP_HEADERS is read as key=value pairs, refused loudly when it is not."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from config import env

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
