"""The run's trace as OTLP/protobuf from the dashboard: the run page links it, the page route and
the API (`?format=protobuf`) give the same bytes, and nobody gets a run they cannot see."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from journal_store.journal import DjangoJournal
from runtime import flight
from runtime.otel import otlp_protobuf

pytestmark = pytest.mark.django_db


def test_the_run_page_links_the_protobuf_trace_and_the_api_serves_the_same_bytes(
    as_owner, done_run
):
    link = reverse("export_otlp_pb", args=[done_run])
    assert f'href="{link}"' in as_owner.get(f"/runs/{done_run}/").content.decode()
    download = as_owner.get(link)
    api = as_owner.get(f"/api/runs/{done_run}/otlp?format=protobuf")
    for response in (download, api):
        assert response.status_code == 200
        assert response["Content-Type"] == "application/x-protobuf"
        assert response["Content-Disposition"] == f'attachment; filename="{done_run}.otlp.pb"'
    body = b"".join(api.streaming_content)  # streamed, a ResourceSpans at a time
    assert body == b"".join(download.streaming_content)
    assert body == otlp_protobuf(flight.run_records(DjangoJournal(), done_run))
    parsed = ExportTraceServiceRequest.FromString(body)
    spans = parsed.resource_spans[0].scope_spans[0].spans
    as_json = json.loads(b"".join(as_owner.get(f"/api/runs/{done_run}/otlp").streaming_content))
    assert len(spans) == len(as_json["resourceSpans"][0]["scopeSpans"][0]["spans"])
    assert {len(s.trace_id) for s in spans} == {16}


def test_an_unknown_format_is_refused_and_no_trace_of_a_run_one_cannot_see(as_owner, done_run):
    assert as_owner.get(f"/api/runs/{done_run}/otlp?format=xml").status_code == 422
    assert as_owner.get("/api/runs/r-nope/otlp?format=protobuf").status_code == 404
    assert as_owner.get(reverse("export_otlp_pb", args=["r-nope"])).status_code == 404
    stranger = Client()
    assert stranger.get(f"/api/runs/{done_run}/otlp?format=protobuf").status_code == 401
    page = stranger.get(reverse("export_otlp_pb", args=[done_run]))
    assert page.status_code == 302 and "login" in page["Location"]
