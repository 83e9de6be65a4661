"""A run's OTLP trace from the dashboard: the run page links it, the page route and the API give
the same file, and nobody gets a trace of a run they cannot see."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse

from journal_store.journal import DjangoJournal
from runtime.otel import otlp_trace
from tests.runtime.test_otel import root_of

pytestmark = pytest.mark.django_db


def test_the_run_page_links_the_trace_and_the_api_serves_the_same_file(as_owner, done_run):
    link = reverse("export_otlp", args=[done_run])
    page = as_owner.get(f"/runs/{done_run}/").content.decode()
    assert f'href="{link}"' in page and "OTLP trace" in page

    download = as_owner.get(link)
    api = as_owner.get(f"/api/runs/{done_run}/otlp")
    for response in (download, api):
        assert response.status_code == 200
        assert response["Content-Type"] == "application/json"
        assert response["Content-Disposition"] == f'attachment; filename="{done_run}.otlp.json"'
    assert download.streaming and api.streaming  # written as the spans end, never held whole
    body = b"".join(download.streaming_content)
    assert b"".join(api.streaming_content) == body

    doc = json.loads(body)
    assert doc == otlp_trace(DjangoJournal().read(f"run-{done_run}"))
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    root = {a["key"]: a["value"] for a in root_of(spans)["attributes"]}
    assert root["minutes.run_id"] == {"stringValue": done_run}
    assert root["minutes.scenario"] == {"stringValue": "premature-done"}
    tokens = sum(
        int(a["value"]["intValue"])
        for s in spans
        for a in s["attributes"]
        if a["key"] == "minutes.usage.total_tokens"
    )
    assert tokens == as_owner.get(f"/api/runs/{done_run}/bill").json()["total"]["tokens"]


def test_no_trace_of_a_run_one_cannot_see(as_owner, done_run):
    assert as_owner.get("/api/runs/r-nope/otlp").status_code == 404
    assert as_owner.get(reverse("export_otlp", args=["r-nope"])).status_code == 404
    stranger = Client()  # not signed in
    assert stranger.get(f"/api/runs/{done_run}/otlp").status_code == 401
    page = stranger.get(reverse("export_otlp", args=[done_run]))
    assert page.status_code == 302 and "login" in page["Location"]
