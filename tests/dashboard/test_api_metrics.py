"""GET /api/runs/{id}/metrics: a run's coordination metrics from the read models, null with
the reason where the journal cannot tell; an old imported journal measures what it can."""

from __future__ import annotations

from pathlib import Path

import pytest

from journal_store.transfer import import_journal
from runtime.jsonl import JsonlJournal
from runtime.metrics import NAMES, metrics

pytestmark = pytest.mark.django_db
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "journals"


def test_the_api_returns_the_metrics_of_an_imported_old_journal(api):
    path = FIXTURES / "repo-fix.v1.jsonl"
    with path.open("rb") as source:
        run_id = import_journal(source, name=path.name).run_ids[0]
    answer = api.get(f"/api/runs/{run_id}/metrics")
    assert answer.status_code == 200
    body = answer.json()
    assert list(body) == list(NAMES)
    overhead = body["coordination_overhead_ratio"]
    assert overhead["value"] == 0.701
    assert overhead["detail"]["coordination_tokens"] == 340
    assert body["deadlock_rate"]["value"] == 0.0  # its five requests are the waits: no cycle
    assert body["deadlock_rate"]["detail"] == {"deadlocks": 0, "waits": 5}
    direct = metrics(JsonlJournal(path).read_all())
    assert {name: m["value"] for name, m in body.items()} == {
        name: m["value"] for name, m in direct.items()
    }


def test_an_unknown_run_has_no_metrics(api):
    answer = api.get("/api/runs/r-nothere/metrics")
    assert answer.status_code == 404
