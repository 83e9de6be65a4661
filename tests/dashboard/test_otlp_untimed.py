"""A run imported from a journal that records no times (the reference runtime's abridged lines,
without `t`) has no trace to give: the download, the API and a push say so, where they gave
spans that all started and ended at 0, 1 January 1970. A timed reference journal exports."""

from __future__ import annotations

import io
import json

import pytest
from django.urls import reverse

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.transfer import import_journal
from runtime.events import TracePushFailed
from runtime.otel import UNTIMED
from services import traces
from tasks import traces as trace_tasks
from tests.dashboard.test_trace_push import collector  # noqa: F401  (a fixture)

pytestmark = pytest.mark.django_db

LINES = [
    {"kind": "RunStarted", "agent": "coder", "task": "Make the failing parser test pass."},
    {"kind": "ModelResponded", "agent": "coder", "usage": 120},
    {"kind": "AgentFinished", "agent": "coder"},
]


def imported(name: str, timed: bool) -> str:
    rows = [
        {"v": 1, "t": 1_796_063_421.5 + i, **line} if timed else line
        for i, line in enumerate(LINES)
    ]
    data = "".join(json.dumps(row) + "\n" for row in rows).encode()
    [run_id] = import_journal(io.BytesIO(data), name=name, size=len(data), by="owner").run_ids
    projection.catch_up()
    return run_id


def test_the_trace_of_a_run_whose_journal_records_no_times_is_refused_saying_why(as_owner):
    run_id = imported("abridged.jsonl", timed=False)
    for url in (
        reverse("export_otlp", args=[run_id]),
        reverse("export_otlp_pb", args=[run_id]),
        f"/api/runs/{run_id}/otlp",
        f"/api/runs/{run_id}/otlp?format=protobuf",
    ):
        answer = as_owner.get(url)
        assert answer.status_code == 409, url
        assert answer.json() == {"detail": UNTIMED}

    timed = imported("timed.jsonl", timed=True)
    answer = as_owner.get(f"/api/runs/{timed}/otlp")
    assert answer.status_code == 200
    spans = json.loads(b"".join(answer.streaming_content))["resourceSpans"][0]["scopeSpans"][0]
    assert all(int(s["startTimeUnixNano"]) > 0 for s in spans["spans"])


def test_a_push_of_it_fails_saying_why_and_sends_nothing(owner, collector):  # noqa: F811
    run_id = imported("abridged.jsonl", timed=False)
    assert traces.request_push(run_id, by="owner") == "queued"
    assert trace_tasks.push(run_id) == "failed"
    assert collector.got == []
    last = DjangoJournal().read(f"traces-{run_id}")[-1].event
    assert isinstance(last, TracePushFailed) and last.error == UNTIMED and last.attempts == 0


def test_the_run_page_offers_no_trace_download_for_it_and_says_why(as_owner):
    untimed, timed = imported("abridged.jsonl", timed=False), imported("timed.jsonl", timed=True)
    page = as_owner.get(reverse("run", args=[untimed])).content.decode()
    assert "no OTLP trace: the journal records no times" in page
    assert reverse("export_otlp", args=[untimed]) not in page
    page = as_owner.get(reverse("run", args=[timed])).content.decode()
    assert reverse("export_otlp", args=[timed]) in page
    assert 'id="no-trace"' not in page


def test_the_trace_tab_links_no_download_for_it_either(as_owner):
    """The trace tab said its bars were the spans of the OTLP trace, a link answered 409."""
    untimed, timed = imported("abridged.jsonl", timed=False), imported("timed.jsonl", timed=True)
    tab = as_owner.get(reverse("run", args=[untimed]) + "?tab=trace").content.decode()
    assert reverse("export_otlp", args=[untimed]) not in tab
    assert "Bars are the spans of the" not in tab
    assert "The journal records no times, so there is no OTLP trace" in tab
    tab = as_owner.get(reverse("run", args=[timed]) + "?tab=trace").content.decode()
    assert f'Bars are the spans of the <a href="{reverse("export_otlp", args=[timed])}">' in tab
