"""The trace a run's end pushes and the one a person downloads are folded from the same
records (journal_store/traces.py, `traced`): the run's own stream, its specialists', and its
waits for a person; none of its other streams (its lease's heartbeats, its traces stream)."""

from __future__ import annotations

import io
import json

import pytest
from django.urls import reverse

from journal_store import projection
from journal_store import traces as journal_traces
from journal_store.journal import DjangoJournal
from journal_store.transfer import import_journal
from runtime import streams
from runtime.events import DeadLetterDiscarded, DeadLettered, LeaseRenewed
from runtime.journal import append_next
from services import traces
from tasks import traces as trace_tasks
from tests.dashboard.test_trace_push_batches import as_sent, collector, whole  # noqa: F401

pytestmark = pytest.mark.django_db


def test_the_pushed_trace_is_the_downloaded_one_with_specialists_and_a_wait(
    as_owner,
    fly_team,
    collector,  # noqa: F811
):
    flown = fly_team("broken-policy", team="support-triage")
    report = import_journal(io.BytesIO(flown.path.read_bytes()), run_id="r-tri")
    assert report.run_ids == ["r-tri"]
    projection.catch_up()  # its page (the download's) reads its summary
    journal = DjangoJournal()
    assert journal.read_prefix("worker-r-tri-")  # its specialists'
    # A wait for a person on the run's control stream, and its lease's heartbeats: the one in
    # the trace, the other not.
    append_next(
        journal,
        streams.control("r-tri"),
        [
            DeadLettered(run_id="r-tri", letter_id="L1", reason="a step kept failing"),
            DeadLetterDiscarded(run_id="r-tri", letter_id="L1", by="owner", reason="enough"),
        ],
    )
    append_next(
        journal,
        streams.driver_lease("r-tri"),
        [
            LeaseRenewed(run_id="r-tri", resource="r-tri", holder="w", expires=9e9, epoch=1)
            for _ in range(3)
        ],
    )

    assert traces.request_push("r-tri") == "queued"
    assert trace_tasks.push("r-tri") == "pushed"
    shown = whole("r-tri")
    assert as_sent(collector.spans()) == shown
    names = [s.name for s in collector.spans()]
    assert "wait for a person: dead letter" in names
    assert len(collector.spans()) == len(shown)  # each span once

    # The download is the same trace, span for span.
    body = b"".join(as_owner.get(reverse("export_otlp", args=["r-tri"])).streaming_content)
    downloaded = json.loads(body)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert sorted(s["spanId"] for s in downloaded) == sorted(s.hex() for s in shown)
    # What the push folded is what the download reads, record for record: the run's own, its
    # specialists' and its wait, not its lease's heartbeats nor its pushes.
    read = journal_traces.records("r-tri")
    pushed = list(journal_traces.paged("r-tri", journal_traces.last_position()))
    assert [r.position for r in pushed] == [r.position for r in read]
    assert {r.stream.split("-")[0] for r in read} == {"run", "worker", "control"}
    assert [r.event.kind for r in read if r.stream == streams.control("r-tri")] == [
        DeadLettered.kind,
        DeadLetterDiscarded.kind,
    ]


def test_the_download_reads_the_run_a_page_at_a_time_as_it_streams(as_owner, fly_team, monkeypatch):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    flown = fly_team("broken-policy", team="support-triage")
    import_journal(io.BytesIO(flown.path.read_bytes()), run_id="r-tri")
    projection.catch_up()
    monkeypatch.setattr(journal_traces, "PAGE", 5)
    pages = len(journal_traces.records("r-tri")) // 5
    assert pages >= 4

    def pages_read(queries: CaptureQueriesContext) -> int:
        return sum(" LIMIT " in q["sql"] and "journal_event" in q["sql"] for q in queries)

    for name in ("export_otlp", "export_otlp_pb"):
        with CaptureQueriesContext(connection) as answered:
            response = as_owner.get(reverse(name, args=["r-tri"]))
        # Before the file is written: the first page, where the journal's times are found.
        assert pages_read(answered) == 1
        with CaptureQueriesContext(connection) as written:
            body = b"".join(response.streaming_content)
        assert pages_read(written) >= pages  # each page as its spans are written
        assert body
