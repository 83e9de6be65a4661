"""An export from before 2026-12-03 carries the run's pushes of its trace to the exporting
store's collector (its traces-RUN stream), and its store may be gone: it cannot be exported
again. It imports without them, and the page, the API and the command say what was left out;
the run's push status here is a run's that was never pushed, and nothing waits to be pushed.
A line of pushes anywhere else is still refused (tests/journal_store/test_transfer_versions.py).
"""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils.html import escape

from journal_store import projection, traces
from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from runtime import events as ev
from tests.journal_store.test_transfer_versions import counts, line, run_events

pytestmark = pytest.mark.django_db

RUN = "r-old"
COLLECTOR = "http://collector.gone:4318"
SAID = (
    "eft out 4 lines of the run's trace pushes to the exporting store's collector "
    "(traces-r-old): this store pushes the run's trace itself"
)


def pushes() -> list[ev.Event]:
    """Pushed once, then queued again: imported, it was shown pushed and counted waiting."""
    r = {"run_id": RUN, "endpoint": COLLECTOR}
    return [
        ev.TracePushQueued(**r),
        ev.TraceBatchPushed(**r, first=0, count=5, spans=5, bytes=10, attempts=1, upto=11),
        ev.TracePushed(**r, spans=5, bytes=10, attempts=1),
        ev.TracePushQueued(**r, by="ann"),
    ]


def old_export(run_id: str = RUN, with_pushes: bool = True) -> bytes:
    """The run's lines as an export before 2026-12-03 wrote them: its traces stream's between
    its journal's, in the order the source store appended them. (New event ids each call.)"""
    events = run_events(run_id)
    lines = [line(e, f"run-{run_id}", n) for n, e in enumerate(events[:-1], 1)]
    if with_pushes:
        lines += [line(e, f"traces-{run_id}", n) for n, e in enumerate(pushes(), 1)]
    lines.append(line(events[-1], f"run-{run_id}", len(events)))
    return ("\n".join(lines) + "\n").encode()


def upload(body: bytes, name: str = "old.jsonl") -> io.BytesIO:
    file = io.BytesIO(body)
    file.name = name
    return file


def push_status(client: Client, run_id: str) -> str:
    html = client.get(f"/runs/{run_id}/").content.decode()
    found = re.search(r'<span class="trace-push" id="trace-push">.*?\n</span>', html, re.S)
    assert found is not None  # (a collector is configured: the run page says its pushes)
    shown = found.group(0).replace(run_id, "RUN")
    return re.sub(r'name="csrfmiddlewaretoken" value="\w+"', "", shown)  # (one a request)


def test_the_page_imports_an_old_export_without_its_pushes_and_says_so(as_owner, settings):
    settings.OTLP_ENDPOINT = "http://collector.here:4318"
    before = StoredEvent.objects.count()
    body = old_export()
    page = as_owner.post("/import", {"journal": upload(body)})
    assert page.status_code == 201
    html = page.content.decode()
    assert "<h2>Imported</h2>" in html and "11 of 11 events added." in html
    assert f"<p hx-disable>{escape('L' + SAID)}.</p>" in html
    assert StoredEvent.objects.count() == before + 12  # the run's 11 and the import's note
    assert not DjangoJournal().read_prefix("traces-")

    # Its push status is a run's never pushed: the same file without the pushes, as another run.
    never = as_owner.post("/import", {"journal": upload(old_export("r-never", False))})
    assert never.status_code == 201 and "eft out" not in never.content.decode()
    projection.catch_up()
    assert traces.state(RUN) is None and traces.waiting() == 0
    assert push_status(as_owner, RUN) == push_status(as_owner, "r-never")
    assert "Trace push" not in push_status(as_owner, RUN)
    assert "Push trace" in push_status(as_owner, RUN)  # (as for any run ended here)

    stored = counts()
    again = as_owner.post("/import", {"journal": upload(body)})
    assert again.status_code == 200
    html = again.content.decode()
    assert "All 11 events of this file are in this store already." in html
    assert f"<p hx-disable>{escape('L' + SAID)}.</p>" in html
    assert counts() == stored


def test_the_api_says_what_it_left_out(as_owner):
    body = old_export()
    first = as_owner.post("/api/journals", {"journal": upload(body)})
    assert first.status_code == 201
    left_out = [{"stream": "traces-r-old", "lines": 4, "said": "l" + SAID}]
    assert first.json()["left_out"] == left_out
    assert first.json()["events"] == first.json()["added"] == 11
    stored = counts()
    again = as_owner.post("/api/journals", {"journal": upload(body)})
    assert again.status_code == 200 and again.json()["added"] == 0
    assert again.json()["left_out"] == left_out
    assert counts() == stored


def test_the_api_refuses_pushes_on_another_runs_traces_stream_naming_the_line(as_owner):
    body = old_export().replace(b'"stream": "traces-r-old"', b'"stream": "traces-r-older"', 1)
    stored = counts()
    refused = as_owner.post("/api/journals", {"journal": upload(body)})
    assert refused.status_code == 400
    assert refused.json()["problems"][0].startswith(
        "line 11: field 'stream': 'traces-r-older' is not the traces stream of the line's run "
        "'r-old' (traces-r-old)"
    )
    assert counts() == stored


def test_the_command_says_what_it_left_out_each_time(tmp_path, capsys):
    path = tmp_path / "old.jsonl"
    path.write_bytes(old_export())
    call_command("import_journal", str(path), "--run-id", "r-renamed")
    out, err = capsys.readouterr()
    assert out == "r-renamed\n"
    assert f"{path}: l{SAID}" in err.splitlines()
    call_command("import_journal", str(path), "--run-id", "r-renamed")
    out, err = capsys.readouterr()
    assert f"{path}: l{SAID}" in err.splitlines()
    assert "every event is in this store already; nothing added" in err
    assert not DjangoJournal().read_prefix("traces-")
    assert StoredEvent.objects.filter(run_id="r-renamed").count() == 12


def test_a_file_of_pushes_alone_holds_no_events(as_owner):
    body = b"".join(line(e, f"traces-{RUN}", n).encode() + b"\n" for n, e in enumerate(pushes(), 1))
    stored = counts()
    page = as_owner.post("/import", {"journal": upload(body)})
    assert page.status_code == 400
    assert "the file holds no events but pushes of a run&#x27;s trace" in page.content.decode()
    assert counts() == stored
