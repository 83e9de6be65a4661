"""MINUTES_RUNS_PER_PERSON counts every new run a person begins, not only a start: a fork (the
API and the page) and a baseline asked on its own (the API, and one a keyed start sent again
begins) each take a place, refused at the cap as a start is (the same words, a 429 from the
API) with nothing written, and counted under the person's lock (two forks at once at one below
the cap begin one). A resume and a letter's retry begin no run: the run they drive on is live
already, counted, so they go at the cap.

A fork and a baseline are refused on SQLite and on PostgreSQL, where the person's lock is an
advisory lock (owner_on); the races for a last place on PostgreSQL are
test_runs_per_person_on_postgresql.py's."""

from __future__ import annotations

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary, StoredEvent
from services import forks, runs
from services.control import Control
from tests.conftest import on_every_backend
from tests.dashboard.conftest import client_for, drive, make_user, run_of
from tests.dashboard.test_runs_per_person import BODY, api_of, at_once, fill, live

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("recorded_runs")]
KEY = {"Idempotency-Key": "nightly"}
PAIR = {**BODY, "baseline": True}


def read_file_at(run_id: str) -> int:
    """Where a fork of a finished first-flight run may be made: its first read_file's answer."""
    return next(
        r.position
        for r in DjangoJournal().read(f"run-{run_id}")
        if r.event.kind == "ToolReturned" and getattr(r.event, "tool", None) == "read_file"
    )


def rows() -> int:
    return StoredEvent.objects.count()


def capped(said: str, count: int, cap: int) -> None:
    """The start's refusal (runs.AtCapacity), reused: the cap, the live runs, what to do."""
    assert f"owner has {count} live run{'s' * (count != 1)}" in said
    assert f"at most {cap} at once (MINUTES_RUNS_PER_PERSON)" in said
    assert "Nothing was started" in said and "wait for one to finish" in said


@pytest.fixture
def owner_on(alias, request):
    """The owner, and "default" the `alias`'s database for the test: SQLite, then the suite's
    PostgreSQL (tests/dashboard/conftest.py's postgresql), where the person's lock is an
    advisory lock (services/run_cap.py) and not SQLite's one writer."""
    if alias == "postgres":
        request.getfixturevalue("postgresql")
    return make_user("owner")


@on_every_backend(transaction=True)
def test_a_fork_from_the_api_takes_a_place(settings, owner_on):
    parent = run_of("first-flight")  # finished: holds no place
    at = read_file_at(parent)
    settings.RUNS_PER_PERSON = 2
    fill("owner", 2)
    api, before, summaries = api_of(owner_on), rows(), RunSummary.objects.count()

    answer = api.post(f"/api/runs/{parent}/fork", {"at": at}, content_type="application/json")

    assert answer.status_code == 429, answer.content
    capped(answer.json()["detail"], 2, 2)
    assert (rows(), RunSummary.objects.count()) == (before, summaries)
    assert not [p for p in settings.WORKSPACES.iterdir() if p.name.endswith(".staged")]
    settings.RUNS_PER_PERSON = 3
    answer = api.post(f"/api/runs/{parent}/fork", {"at": at}, content_type="application/json")
    assert answer.status_code == 201, answer.content
    assert answer.json()["run_id"] in live("owner")


@on_every_backend(transaction=True)
def test_a_fork_from_the_page_takes_a_place(settings, owner_on):
    parent = run_of("first-flight")
    at = read_file_at(parent)
    settings.RUNS_PER_PERSON = 1
    fill("owner", 1)
    page, before = client_for(owner_on), rows()

    answer = page.post(f"/runs/{parent}/fork", {"at": at})

    assert answer.status_code == 400
    capped(answer.content.decode(), 1, 1)
    assert rows() == before
    settings.RUNS_PER_PERSON = 2
    assert page.post(f"/runs/{parent}/fork", {"at": at}).status_code == 302
    assert len(live("owner")) == 2


def test_a_keyed_fork_sent_again_at_the_cap_is_answered_its_fork(settings, owner):
    parent = run_of("first-flight")
    body = {"at": read_file_at(parent)}
    settings.RUNS_PER_PERSON = 1
    api = api_of(owner)
    first = api.post(f"/api/runs/{parent}/fork", body, content_type="application/json", headers=KEY)
    assert first.status_code == 201, first.content
    before = rows()
    again = api.post(f"/api/runs/{parent}/fork", body, content_type="application/json", headers=KEY)
    assert again.status_code == 200, again.content
    assert again.json()["run_id"] == first.json()["run_id"] and rows() == before


def test_forks_at_once_at_one_below_the_cap_leave_the_cap(settings, owner):
    """Each passes the early count; the one under the person's lock, with the write, lets one."""
    parent = run_of("first-flight")
    at = read_file_at(parent)
    settings.RUNS_PER_PERSON = 2
    fill("owner", 1)
    workspaces = len(list(settings.WORKSPACES.iterdir()))

    made, capped = at_once(
        3, lambda: forks.begin_fork(parent, at, forks.Changes(), "owner", cap=2).run_id
    )

    assert (len(made), capped) == (1, 2)
    assert len(live("owner")) == 2
    # The workspaces restored for the refused ones are removed: the one made is left.
    assert len(list(settings.WORKSPACES.iterdir())) == workspaces + 1


@on_every_backend(transaction=True)
def test_a_baseline_asked_on_its_own_takes_a_place(settings, owner_on):
    team_run = run_of("first-flight")
    settings.RUNS_PER_PERSON = 1
    fill("owner", 1)
    api, before, summaries = api_of(owner_on), rows(), RunSummary.objects.count()

    answer = api.post(f"/api/runs/{team_run}/baseline")

    assert answer.status_code == 429, answer.content
    capped(answer.json()["detail"], 1, 1)
    assert (rows(), RunSummary.objects.count()) == (before, summaries)
    settings.RUNS_PER_PERSON = 2
    answer = api.post(f"/api/runs/{team_run}/baseline")
    assert answer.status_code == 201, answer.content
    assert answer.json()["run_id"] in live("owner")


def test_the_baseline_a_keyed_start_sent_again_begins_takes_a_place(settings, owner):
    """The first start with the key began the run, not the baseline (it did not ask for one,
    or was cut short before it): sent again asking for it, the baseline is a run begun now."""
    settings.RUNS_PER_PERSON = 2
    api = api_of(owner)
    first = api.post("/api/runs", BODY, content_type="application/json", headers=KEY)
    assert first.status_code == 201
    fill("owner", 1)
    before = rows()

    again = api.post("/api/runs", PAIR, content_type="application/json", headers=KEY)

    assert again.status_code == 429, again.content
    capped(again.json()["detail"], 2, 2)
    assert rows() == before
    settings.RUNS_PER_PERSON = 3
    again = api.post("/api/runs", PAIR, content_type="application/json", headers=KEY)
    assert again.status_code == 200, again.content
    assert len(live("owner")) == 3


def test_a_resume_at_the_cap_goes(settings, owner):
    """The interrupted run holds its place: resuming it takes none more."""
    settings.RUNS_PER_PERSON = 2
    stopped, _ = fill("owner", 2)
    runs.interrupt(stopped, "owner")
    drive(stopped)
    assert runs.status_of(stopped) == "interrupted"

    answer = api_of(owner).post(f"/api/runs/{stopped}/resume", content_type="application/json")

    assert answer.status_code == 202, answer.content
    assert drive(stopped) == "done"


def test_a_letters_retry_at_the_cap_goes(settings, owner, reviewer):
    """The dead-lettered run holds its place: its retry takes none more."""
    settings.RUNS_PER_PERSON = 2
    parked, _ = fill("owner", 2)
    letter = Control(parked).dead_letter("a step kept failing", 4, "Boom").letter_id
    projection.catch_up()
    assert runs.status_of(parked) == "dead-lettered"

    answer = api_of(reviewer).post(
        f"/api/review/dead-letters/{letter}/retry",
        {"reason": "back"},
        content_type="application/json",
    )

    assert answer.status_code == 200, answer.content
    assert runs.status_of(parked) == "running"
    assert len(live("owner")) == 2


def test_the_fork_and_baseline_429s_say_what_the_cap_refused(as_owner):
    """Each its own, naming what was not begun; not the start's (which said "nothing was
    started" and led with nothing a fork's client would know for its own)."""
    paths = as_owner.get("/api/openapi.json").json()["paths"]
    said = {
        path: paths[path]["post"]["responses"]["429"]["description"]
        for path in ("/api/runs", "/api/runs/{run_id}/fork", "/api/runs/{run_id}/baseline")
    }
    assert said["/api/runs/{run_id}/fork"].startswith("no fork was made: a fork is a new run")
    assert said["/api/runs/{run_id}/baseline"].startswith("no baseline was started: a baseline")
    assert said["/api/runs"].startswith("no run was started")
    assert len(set(said.values())) == 3
    for path, description in said.items():
        # The cap first; the lockout, which may answer any request 429, told apart after.
        cap, lockout = description.split(". A 429 with Retry-After")
        assert "MINUTES_RUNS_PER_PERSON" in cap and "sign-in" not in cap, path
        assert "too many failed sign-ins" in lockout, path
