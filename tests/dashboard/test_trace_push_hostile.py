"""The push tasks against collectors that answer badly: what the journal keeps, and the
tasks' time limits (services/traces.py, tasks/traces.py)."""

from __future__ import annotations

import socket

import pytest

from journal_store.journal import DjangoJournal
from runtime.events import TracePushFailed, TracePushQueued
from services import traces
from tasks import traces as trace_tasks
from tests.dashboard.conftest import run_of
from tests.hostile_collector import Collector, ok, status

pytestmark = pytest.mark.django_db
SECRET = "Bearer team-secret-0123456789"


def events(run_id: str) -> list:
    return [r.event for r in DjangoJournal().read(f"traces-{run_id}")]


def test_the_push_tasks_have_time_limits_past_their_attempts() -> None:
    for task in (trace_tasks.push, trace_tasks.push_live):
        assert task.soft_time_limit and task.time_limit > task.soft_time_limit
    assert trace_tasks.push.soft_time_limit >= traces.budget(live=True)


def test_a_push_past_its_time_limit_is_recorded_failed_not_left_queued(owner, settings) -> None:
    settings.OTLP_ENDPOINT = "http://127.0.0.1:9"
    run_id = run_of("premature-done")
    traces.request_push(run_id)
    assert isinstance(events(run_id)[-1], TracePushQueued)

    assert traces.out_of_time(run_id) == "failed"

    last = events(run_id)[-1]
    assert isinstance(last, TracePushFailed)
    assert f"did not end within its task's {traces.budget(live=False)} s time limit" in last.error


def test_a_redirect_is_recorded_failed_and_nothing_reaches_its_target(
    owner, settings, collectors
) -> None:
    target = collectors(ok)

    def redirect(conn: socket.socket, collector: Collector) -> None:
        moved = f"Location: {target.url}/steal\r\n"
        collector.write(conn, status(302, "Found", extra=moved))

    collector = collectors(redirect)
    settings.OTLP_ENDPOINT = collector.url
    settings.OTLP_HEADERS = {"authorization": SECRET}
    run_id = run_of("premature-done")

    assert trace_tasks.push(run_id) == "failed"

    last = events(run_id)[-1]
    assert isinstance(last, TracePushFailed) and last.status == 302
    assert "not followed" in last.error and "MINUTES_OTLP_ENDPOINT" in last.error
    assert target.seen == []


def test_a_refusal_echoing_the_headers_keeps_them_out_of_journal_page_and_log(
    owner, as_owner, settings, collectors, caplog
) -> None:
    def echo401(conn: socket.socket, collector: Collector) -> None:
        said = "unauthorized: " + repr(collector.seen[-1].headers)
        collector.write(conn, status(401, "Unauthorized", said.encode()))

    collector = collectors(echo401)
    settings.OTLP_ENDPOINT = collector.url
    settings.OTLP_HEADERS = {"authorization": SECRET}
    run_id = run_of("premature-done")

    assert trace_tasks.push(run_id) == "failed"

    last = events(run_id)[-1]
    assert isinstance(last, TracePushFailed) and last.status == 401
    assert "HTTP 401: unauthorized:" in last.error
    assert "[header value hidden]" in last.error
    stored = "".join(r.event.model_dump_json() for r in DjangoJournal().read(f"traces-{run_id}"))
    assert "team-secret" not in stored
    assert "team-secret" not in caplog.text and "HTTP 401" in caplog.text
    page = as_owner.get(f"/runs/{run_id}/").content.decode()
    assert "team-secret" not in page and "header value hidden" in page


@pytest.mark.parametrize("value", ["Bearer tok-SECRET-123\n", "Bearer tok-SECRET-é€"])
def test_a_header_value_that_cannot_be_sent_is_recorded_failed_not_left_queued(
    owner, settings, collectors, caplog, value
) -> None:
    settings.OTLP_ENDPOINT = collectors(ok).url
    settings.OTLP_HEADERS = {"authorization": value}
    run_id = run_of("premature-done")

    assert trace_tasks.push(run_id) == "failed"

    last = events(run_id)[-1]
    assert isinstance(last, TracePushFailed) and last.attempts == 1
    assert "MINUTES_OTLP_HEADERS" in last.error
    assert "SECRET" not in last.error and "SECRET" not in caplog.text
