"""A time no clock shows, in a file anybody who may import can write: a driver's lease that
"expires" at -1e18, a stall "since" 1e300, an elapsed time of 1e400 (JSON's reader takes it as
infinity). The import bounded only the envelope's `t`: the file went in, and the stall finding's
time.gmtime raised in the catch-up every page, start and step runs, so the import answered 500
after committing and every page of the store answered 500 after it. Such a line is refused,
naming its line and field, and nothing is written (events/times.py); a store that holds one
from before still answers its pages (runtime/instants.py)."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.test import Client

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from runtime import cli
from runtime.events import LeaseGranted, RunStalled, TeamStarted
from tests.security.import_helpers import (
    CHANNELS,
    an_importer,
    import_via,
    jsonl,
    line,
    refused,
    snapshot,
    team_started,
)

pytestmark = pytest.mark.django_db

RUN = "r-0000000bomb0"
T = 1_700_000_000.0
PAGES = ["/", "/api/runs", "/review/dead-letters", "/api/metrics"]


def placed(row: dict, stream: str, version: int) -> dict:
    return {**row, "stream": stream, "version": version}


def lease_bomb() -> bytes:
    """The reviewer's file: two grants of the run's own driver lease, the first "expiring"
    at -1e18 (the second taking it is where the stall finding formatted that time)."""
    grant = {"resource": RUN, "holder": "w1", "expires": -1e18}
    return jsonl(
        placed(team_started(RUN), f"run-{RUN}", 1),
        placed(line("LeaseGranted", RUN, v=2, **grant), f"lease-{RUN}", 1),
        placed(
            line("LeaseGranted", RUN, v=2, resource=RUN, holder="w2", expires=T + 60),
            f"lease-{RUN}",
            2,
        ),
    )


def one_bad(kind: str, stream: str, **fields) -> bytes:
    return jsonl(
        placed(team_started(RUN), f"run-{RUN}", 1), placed(line(kind, RUN, **fields), stream, 1)
    )


STALL = one_bad("RunStalled", f"control-{RUN}", since=1e300, why="lease expired")


def files():
    yield "lease", lease_bomb(), "line 2: field 'expires': -1e+18 is not a time of a run"
    yield "stall", STALL, "line 2: field 'since': 1e+300 is not a time of a run"
    # 1e400 is no literal JSON's reader refuses (NaN and Infinity are): Python reads it as inf,
    # which the store would have written as null, an event nobody could read back.
    timed_out = jsonl(
        placed(team_started(RUN), f"run-{RUN}", 1),
        placed(
            line("WorkerTimedOut", RUN, worker_id="w", deadline_seconds=30.0, elapsed=7.0),
            f"run-{RUN}",
            2,
        ),
    ).replace(b'"elapsed": 7.0', b'"elapsed": 1e400')
    yield "elapsed", timed_out, "line 2: field 'elapsed': inf is not a number a run records"
    late = jsonl(placed({**team_started(RUN), "t": 1e300}, f"run-{RUN}", 1))
    yield "envelope", late, "line 1: field 't': 1e+300 is not a time of a run"


@pytest.mark.parametrize("channel", CHANNELS)
@pytest.mark.parametrize("name, data, said", list(files()), ids=[f[0] for f in files()])
def test_a_time_no_clock_shows_is_refused_naming_line_and_field(
    channel, name, data, said, tmp_path
):
    importer = an_importer()
    before = snapshot()
    events = StoredEvent.objects.count()
    answer = import_via(channel, importer, data, tmp_path)
    assert answer.status == refused(channel), answer.text
    assert said in answer.text, answer.text
    assert StoredEvent.objects.count() == events
    assert snapshot() == before
    client = Client()
    client.force_login(importer)
    for page in PAGES:
        assert client.get(page).status_code == 200, page


def stored_before_the_bounds(monkeypatch, *placed_events) -> None:
    """Events written as an import let them in before it bounded their times."""
    monkeypatch.setattr("runtime.journal.float_problem", lambda event: None)
    journal = DjangoJournal()
    for stream, events in placed_events:
        journal.append(stream, events, journal.version(stream))
    monkeypatch.undo()


def test_a_store_holding_such_times_from_before_still_answers_its_pages(monkeypatch):
    start = TeamStarted(run_id=RUN, t=T, team="repo-fix", scenario="first-flight", task="x")
    grant = LeaseGranted(run_id=RUN, t=T + 1, resource=RUN, holder="w1", expires=-1e18)
    again = LeaseGranted(run_id=RUN, t=T + 2, resource=RUN, holder="w2", expires=-1e18)
    stall = RunStalled(run_id=RUN, t=T + 3, since=1e300, why="lease expired", holder="w2")
    stored_before_the_bounds(
        monkeypatch,
        (f"run-{RUN}", [start]),
        (f"lease-{RUN}", [grant, again]),
        (f"control-{RUN}", [stall]),
    )
    projection.catch_up()
    client = Client()
    client.force_login(an_importer())
    for page in [*PAGES, f"/runs/{RUN}/", f"/api/runs/{RUN}/findings", f"/api/runs/{RUN}"]:
        assert client.get(page).status_code == 200, page
    for tab in ("timeline", "findings", "trace"):
        assert client.get(f"/runs/{RUN}/?tab={tab}").status_code == 200, tab
    findings = client.get(f"/api/runs/{RUN}/findings").json()
    said = " ".join(str(f) for f in findings)
    assert "t=-1e+18 (not a time)" in said and "t=1e+300 (not a time)" in said
    out = io.StringIO()
    call_command("rebuild_projections", stdout=out)


def test_the_command_line_reads_such_a_file_without_a_traceback(tmp_path, capsys):
    """`python -m runtime views` and `diagnose` read a journal file as it is (no admission:
    it is the runtime's own record, and an old one must still read); they show the time."""
    path = tmp_path / "bomb.jsonl"
    path.write_bytes(lease_bomb() + STALL.splitlines(keepends=True)[1])
    for command in ("views", "diagnose"):
        assert cli.run_command([command, str(path)]) == 0
        assert "t=-1e+18 (not a time)" in capsys.readouterr().out
