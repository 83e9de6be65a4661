"""Every address of a run, page and API, answers a run with a row no event model reads
(rewritten in the table), which the runs' fold set aside there, and a run the fold set aside
at its first event: each a page, a refusal that says why, or a 404, never a server error.
The timeline, the trace, the run page and its list were each a 500 before (the commits that
mended them name them); this walks the rest with them, so that none is left."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from journal_store import projection
from journal_store.models import StoppedView, StoredEvent
from runtime import streams
from tests.dashboard.conftest import client_for, run_of
from tests.dashboard.test_a_run_stopped_at_its_first_event import unfolded_run

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("recorded_runs")]

TABS = ("timeline", "trace", "threads", "bill", "audit", "findings", "metrics")


def spoiled_in_the_middle(run_id: str) -> int:
    """A model answer of the run, halfway, rewritten so no event model reads it; the runs'
    views set aside there (a rebuild folds it and meets the row): its position."""
    rows = StoredEvent.objects.filter(stream=streams.journal(run_id), kind="ModelResponded")
    row = list(rows.order_by("position"))[rows.count() // 2]
    row.data = json.dumps({**json.loads(row.data), "text": {"<b>x</b>": 1}})
    row.save()
    projection.rebuild()
    assert StoppedView.objects.get(run_id=run_id, projector="runs").position == row.position
    return row.position


def page_addresses(run_id: str, other: str, positions: list[int]) -> list[str]:
    base = f"/runs/{run_id}"
    found = [f"{base}/", f"{base}/row", f"{base}/header", f"{base}/tail?after=0"]
    found += [f"{base}/?tab={tab}" for tab in TABS]
    found += [f"{base}/tabs/{tab}" for tab in TABS]
    found += [f"{base}/?tab=trace&call={p}" for p in positions]
    found += [f"{base}/?tab=timeline&after={p - 1}" for p in positions[:3]]
    found += [f"{base}/export.jsonl", f"{base}/trace.otlp.json", f"{base}/trace.otlp.pb"]
    found += [f"{base}/fork", *(f"{base}/fork?at={p}" for p in positions)]
    found += [f"/runs/compare?a={run_id}&b={other}", f"/runs/compare?a={other}&b={run_id}"]
    found += [f"/?q={run_id}", "/metrics", f"/search?q={run_id}", "/review/dead-letters"]
    return found


def api_addresses(run_id: str, other: str) -> list[str]:
    base = f"/api/runs/{run_id}"
    found = [base, f"{base}/events", f"{base}/events?after=0&limit=1000"]
    found += [f"{base}/{part}" for part in ("bill", "threads", "audit", "resume-point")]
    found += [f"{base}/{part}" for part in ("metrics", "comparison", "findings", "tags")]
    found += [f"{base}/export", f"{base}/otlp", f"{base}/otlp?format=protobuf"]
    found += [f"/api/runs/compare?a={run_id}&b={other}", f"/api/runs?q={run_id}"]
    found += ["/api/metrics", f"/api/search?q={run_id}"]
    return found


def posts(run_id: str, positions: list[int]) -> list[tuple[str, dict]]:
    """The run's actions, page and API (their answers; what they do is others' tests')."""
    base, api = f"/runs/{run_id}", f"/api/runs/{run_id}"
    return [
        (f"{base}/replay", {}),
        (f"{base}/tags", {"tag": "look"}),
        (f"{base}/trace/push", {}),
        *((f"{base}/fork", {"at": p}) for p in positions[:3]),
        (f"{api}/replay", {}),
        (f"{api}/tags", {"add": ["seen"]}),
        (f"{api}/otlp/push", {}),
        *((f"{api}/fork", {"at": p}) for p in positions[:3]),
        (f"{base}/interrupt", {"reason": "look"}),
        (f"{api}/interrupt", {}),
        (f"{base}/resume", {}),
        (f"{api}/resume", {}),
    ]


def walked(run_id: str, other: str, browser: Client, api: Client) -> list[str]:
    """Each address that answered a server error, with the first line of what it raised."""
    rows = StoredEvent.objects.filter(run_id=run_id).order_by("position")
    positions = list(rows.values_list("position", flat=True))
    failed = []
    for address in page_addresses(run_id, other, positions):
        if browser.get(address).status_code >= 500:
            failed.append(f"GET {address}")
    for address in api_addresses(run_id, other):
        if api.get(address).status_code >= 500:
            failed.append(f"GET {address}")
    for address, body in posts(run_id, positions):
        if address.startswith("/api/"):
            answer = api.post(address, json.dumps(body), content_type="application/json")
        else:
            answer = browser.post(address, body)
        if answer.status_code >= 500:
            failed.append(f"POST {address}")
    return failed


def test_no_address_of_either_run_is_a_server_error(reviewer, token):
    done = run_of("premature-done")
    spoiled = run_of("first-flight", by="reviewer")
    bad = spoiled_in_the_middle(spoiled)
    unfolded_run()  # run c: set aside at its first event
    browser = client_for(reviewer, raise_request_exception=False)
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}", raise_request_exception=False)
    failed = walked(spoiled, done, browser, api) + walked("c", done, browser, api)
    assert failed == [], "\n".join(failed)
    # What reads the journal whole refuses, naming the row; the page says it escaped.
    for address in (f"/api/runs/{spoiled}/otlp", f"/api/runs/{spoiled}/replay"):
        answer = api.get(address) if address.endswith("otlp") else api.post(address)
        assert answer.status_code == 409, address
        assert f"the event at position {bad} (ModelResponded)" in answer.json()["detail"]
    page = browser.get(f"/runs/{spoiled}/trace.otlp.json")
    assert page.status_code == 409
    said = page.content.decode()
    assert f"position {bad} (ModelResponded)" in said and "<b>x</b>" not in said
