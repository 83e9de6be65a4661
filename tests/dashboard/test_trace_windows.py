"""A long run's trace is drawn a window at a time: each window reads a bounded number of rows
whatever the run's length, links its neighbours, and windows side by side show every call of
the export once, with the export's timings."""

from __future__ import annotations

import pytest

from dashboard import trace
from journal_store.journal import DjangoJournal
from runtime import flight
from runtime.otel import otlp_trace
from tests.dashboard.conftest import run_of

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("recorded_runs")]

SIZE, MARGIN = 20, 5


@pytest.fixture
def small_windows(monkeypatch):
    monkeypatch.setattr(trace, "WINDOW", SIZE)
    monkeypatch.setattr(trace, "MARGIN", MARGIN)


def exported_calls(run_id: str) -> dict[str, tuple[int, int]]:
    doc = otlp_trace(flight.run_records(DjangoJournal(), run_id))
    return {
        s["spanId"]: (int(s["startTimeUnixNano"]), int(s["endTimeUnixNano"]))
        for s in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
        if s["name"].split()[0] in ("chat", "execute_tool")
    }


def test_windows_side_by_side_show_every_call_once_and_read_a_bounded_number_of_rows(
    small_windows,
):
    run_id = run_of("first-flight")
    events = len(flight.run_records(DjangoJournal(), run_id))
    assert events > 3 * SIZE
    seen: dict[str, tuple[int, int]] = {}
    after, windows, previous = 0, 0, None
    while after is not None:
        found = trace.window(run_id, after, size=SIZE)
        assert found.earlier == previous  # "Earlier" goes back to the window before
        previous = after
        # The window, a margin either side (longer only while a call lacks its other end),
        # and the run's TeamStarted: however long the run.
        assert found.read <= SIZE + 2 * MARGIN * (1 + trace.EXTEND) + 1
        for bar in found.view(run_id, [], False).bars:
            assert bar.span_id not in seen
            seen[bar.span_id] = (bar.start, bar.end)
        windows += 1
        after = found.later
    assert windows == -(-events // SIZE)
    assert seen == exported_calls(run_id)


def test_the_page_links_earlier_and_later_windows_and_the_latest_ends_the_run(
    as_owner, small_windows
):
    run_id = run_of("first-flight")
    records = flight.run_records(DjangoJournal(), run_id)
    first = as_owner.get(f"/runs/{run_id}/?tab=trace")
    assert first.context["earlier"] is None and first.context["later"] is not None
    assert first.context["window"].last == records[SIZE - 1].position
    html = first.content.decode()
    assert "Later →" in html and "← Earlier" not in html

    second = as_owner.get(first.context["later"]["href"])
    assert second.context["window"].first == records[SIZE].position
    assert second.context["earlier"]["href"].endswith("after=0")
    assert "← Earlier" in second.content.decode()

    latest = as_owner.get(f"/runs/{run_id}/?tab=trace&latest=1")
    assert latest.context["later"] is None
    assert latest.context["window"].last == records[-1].position
    assert latest.context["window"].first == records[-SIZE].position

    # A partial for htmx: the tab's content alone, the same window.
    partial = as_owner.get(
        f"/runs/{run_id}/tabs/trace?after={records[SIZE].position - 1}",
        headers={"HX-Request": "true", "HX-Target": "tab"},
    )
    assert partial.status_code == 200 and "<html" not in partial.content.decode()
    assert partial.context["window"].first == records[SIZE].position


def test_a_call_asked_for_opens_the_window_around_it(as_owner, small_windows):
    run_id = run_of("first-flight")
    records = flight.run_records(DjangoJournal(), run_id)
    late = [r for r in records if r.event.kind == "ModelCalled"][-1]
    page = as_owner.get(f"/runs/{run_id}/?tab=trace&call={late.position}")
    window = page.context["window"]
    assert window.first <= late.position <= window.last
    assert any(b["position"] == late.position for b in page.context["drawing"]["bars"])


def test_a_run_not_yet_flown_shows_an_empty_trace(as_owner):
    run_id = run_of("first-flight", steps=0)
    page = as_owner.get(f"/runs/{run_id}/?tab=trace")
    assert page.status_code == 200
    assert page.context["drawing"]["bars"] == [] and page.context["later"] is None
    assert 'class="trace"' in page.content.decode()
