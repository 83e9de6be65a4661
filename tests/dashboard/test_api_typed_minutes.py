"""A run's minutes in the API are typed: the schema names every field of the bill, threads,
audit, resume point and findings, and the typed answers drop nothing the read models hold."""

from __future__ import annotations

import pytest

from dashboard import queries
from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import AuditEntry, Finding, RunSummary
from tests.journal_store.test_projection import every_kind_journal

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

MINUTES = ["bill", "threads", "audit", "resume-point", "findings", "metrics"]


def free_form(node, components, path="") -> list[str]:
    """Where the schema allows an object with fields it does not name."""
    if isinstance(node, list):
        return [p for i, n in enumerate(node) for p in free_form(n, components, f"{path}[{i}]")]
    if not isinstance(node, dict):
        return []
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[1]
        return free_form(components[name], components, f"{path}->{name}")
    found = []
    extra = node.get("additionalProperties")
    if extra is True or (node.get("type") == "object" and "properties" not in node and not extra):
        found.append(path or "/")
    for key, value in node.items():
        if key != "additionalProperties" or isinstance(value, dict):
            found += free_form(value, components, f"{path}.{key}")
    return found


def test_the_schema_names_every_field_of_a_runs_minutes(api):
    schema = api.get("/api/openapi.json").json()
    components = schema["components"]["schemas"]
    for part in MINUTES:
        answer = schema["paths"][f"/api/runs/{{run_id}}/{part}"]["get"]["responses"]["200"]
        assert free_form(answer["content"]["application/json"]["schema"], components) == [], part


def test_the_typed_answers_hold_everything_the_read_models_hold(api, fly_team):
    journal = DjangoJournal()
    for stream, events in every_kind_journal(fly_team):
        journal.append(stream, events, journal.version(stream))
    projection.catch_up()
    schemas = api.get("/api/openapi.json").json()["components"]["schemas"]
    audit_fields = set(schemas["AuditDetailOut"]["properties"])
    finding_fields = set(schemas["FindingDetailOut"]["properties"])

    for run_id, state in RunSummary.objects.values_list("run_id", "status"):
        audit = api.get(f"/api/runs/{run_id}/audit").json()
        stored = list(AuditEntry.objects.filter(run_id=run_id).order_by("position"))
        assert [a["detail"] for a in audit] == [e.detail for e in stored]
        assert all(set(e.detail) <= audit_fields for e in stored), run_id
        findings = api.get(f"/api/runs/{run_id}/findings").json()
        stored_findings = list(Finding.objects.filter(run_id=run_id).order_by("first_position"))
        assert [f["detail"] for f in findings] == [f.detail for f in stored_findings]
        assert all(set(f.detail) <= finding_fields for f in stored_findings), run_id
        assert api.get(f"/api/runs/{run_id}/bill").json() == queries.bill(run_id, state)
        assert api.get(f"/api/runs/{run_id}/resume-point").json() == queries.resume_point(run_id)
        metrics = api.get(f"/api/runs/{run_id}/metrics").json()
        assert {
            name: {"value": m["value"], "reason": m["reason"], **m["detail"]}
            for name, m in metrics.items()
        } == queries.metrics(run_id)
        threads = api.get(f"/api/runs/{run_id}/threads").json()
        assert {task: [m["position"] for m in thread] for task, thread in threads.items()} == {
            task: [m.position for m in thread] for task, thread in queries.threads(run_id).items()
        }
    assert AuditEntry.objects.exists() and Finding.objects.exists()
