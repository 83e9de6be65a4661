"""One person may have at most MINUTES_RUNS_PER_PERSON live runs (running, interrupted or
dead-lettered): the new-run form, POST /api/runs (a 429) and `manage.py start_run` each refuse
one more, naming the cap, the person's live runs and how to go on, with nothing written; a run
that ends frees its place; two starts at once at cap-1 leave the cap, not one more."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.core.management import CommandError, call_command
from django.db import connections
from django.test import Client

from dashboard import actions
from dashboard.models import ApiToken
from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary
from services import baseline as baselines
from services import run_cap, runs
from tests.dashboard.conftest import drive, make_user
from tests.startup import refused
from tests.test_settings_from_env import started

BODY = {"team": "repo-fix", "scenario": "first-flight"}
FORM = {**BODY, "model": "scripted", "allowance": 5000, "max_turns": 12}


def api_of(user) -> Client:
    return Client(headers={"Authorization": f"Bearer {ApiToken.issue(user, 'tests')[1]}"})


def post(api: Client, key: str = ""):
    headers = {"Idempotency-Key": key} if key else {}
    return api.post("/api/runs", BODY, content_type="application/json", headers=headers)


def live(person: str) -> list[str]:
    projection.catch_up()
    return sorted(run_cap.live_runs(person).values_list("run_id", flat=True))


def fill(person: str, count: int) -> list[str]:
    return [runs.start_run("repo-fix", "first-flight", by=person) for _ in range(count)]


def at_once(count: int, begin: Callable[[], str]) -> tuple[list[str], int]:
    """`count` threads, each on a connection of its own, calling `begin` together: the runs
    begun, and how many were refused at the cap."""
    barrier = threading.Barrier(count)
    began: list[str] = []
    capped: list[bool] = []

    def go() -> None:
        try:
            barrier.wait()
            began.append(begin())
        except runs.AtCapacity:
            capped.append(True)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=go) for _ in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads)
    return began, len(capped)


@pytest.mark.django_db
def test_the_api_answers_429_naming_the_cap_the_live_runs_and_how_to_go_on(settings, owner):
    settings.RUNS_PER_PERSON = 2
    api = api_of(owner)
    first, second = (post(api) for _ in range(2))
    assert (first.status_code, second.status_code) == (201, 201)
    top, rows = DjangoJournal().last_position(), RunSummary.objects.count()

    answer = post(api)

    assert answer.status_code == 429, answer.content
    said = answer.json()["detail"]
    assert "owner has 2 live runs" in said
    assert "at most 2 at once (MINUTES_RUNS_PER_PERSON)" in said
    assert first.json()["run_id"] in said and second.json()["run_id"] in said
    assert "wait for one to finish" in said and "raise MINUTES_RUNS_PER_PERSON" in said
    assert DjangoJournal().last_position() == top  # nothing written
    assert RunSummary.objects.count() == rows


@pytest.mark.django_db
def test_the_429_is_in_the_schema(as_owner):
    answers = as_owner.get("/api/openapi.json").json()["paths"]["/api/runs"]["post"]["responses"]
    assert "MINUTES_RUNS_PER_PERSON" in answers["429"]["description"]


@pytest.mark.django_db
def test_a_refusal_names_a_few_runs_and_how_many_more(settings, owner):
    fill("owner", 5)
    settings.RUNS_PER_PERSON = 4  # lowered since: each start is refused until one ends
    answer = post(api_of(owner))
    assert answer.status_code == 429
    said = answer.json()["detail"]
    assert "owner has 5 live runs" in said and "and 2 more)" in said
    assert sum(run_id in said for run_id in live("owner")) == run_cap.SHOWN


@pytest.mark.django_db
def test_the_form_is_refused_at_the_cap_and_starts_nothing(settings, as_owner):
    settings.RUNS_PER_PERSON = 1
    [mine] = fill("owner", 1)
    top = DjangoJournal().last_position()

    page = as_owner.post("/runs/new", FORM)

    assert page.status_code == 400
    text = page.content.decode()
    assert "owner has 1 live run " in text and mine in text
    assert "at most 1 at once (MINUTES_RUNS_PER_PERSON)" in text
    assert DjangoJournal().last_position() == top
    assert live("owner") == [mine]


@pytest.mark.django_db
def test_a_run_and_its_baseline_need_two_places(settings, as_owner):
    settings.RUNS_PER_PERSON = 2
    fill("owner", 1)
    top = DjangoJournal().last_position()
    page = as_owner.post("/runs/new", {**FORM, "baseline": "on"})
    assert page.status_code == 400
    assert "this start needs 2 places (the run and its baseline)" in page.content.decode()
    assert DjangoJournal().last_position() == top


@pytest.mark.django_db
def test_the_command_is_refused_at_the_cap_and_starts_nothing(settings):
    settings.RUNS_PER_PERSON = 2
    fill("operator", 2)
    top = DjangoJournal().last_position()
    with pytest.raises(CommandError) as info:
        call_command("start_run", "--team", "repo-fix", "--scenario", "first-flight")
    assert "operator has 2 live runs" in str(info.value)
    assert info.value.returncode == 2  # asked wrongly for now, as any refusal
    assert DjangoJournal().last_position() == top


@pytest.mark.django_db
def test_others_runs_and_a_cap_of_0_do_not_count(settings, owner):
    settings.RUNS_PER_PERSON = 1
    fill("someone-else", 3)
    assert post(api_of(owner)).status_code == 201
    settings.RUNS_PER_PERSON = 0
    assert post(api_of(owner)).status_code == 201


@pytest.mark.django_db
def test_staff_are_capped_too(settings, db):
    settings.RUNS_PER_PERSON = 1
    admin = make_user("admin")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    api = api_of(admin)
    assert post(api).status_code == 201
    assert post(api).status_code == 429


@pytest.mark.django_db
def test_a_keyed_start_sent_again_at_the_cap_is_answered_its_run(settings, owner):
    settings.RUNS_PER_PERSON = 1
    api = api_of(owner)
    first = post(api, key="nightly")
    again = post(api, key="nightly")
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["run_id"] == first.json()["run_id"]
    assert post(api, key="another").status_code == 429


@pytest.mark.django_db
def test_a_run_that_ends_frees_its_place_and_a_stopped_one_keeps_it(settings, owner):
    settings.RUNS_PER_PERSON = 2
    api = api_of(owner)
    first, second = (post(api).json()["run_id"] for _ in range(2))
    runs.interrupt(second, "owner")
    drive(second)  # it stops at its turn boundary: interrupted, still live
    assert runs.status_of(second) == "interrupted"
    assert post(api).status_code == 429

    drive(first)
    assert runs.status_of(first) == "done"
    answer = post(api)
    assert answer.status_code == 201, answer.content
    assert live("owner") == sorted([second, answer.json()["run_id"]])


@pytest.mark.django_db(transaction=True)
def test_starts_at_once_at_one_below_the_cap_leave_the_cap(settings, owner):
    settings.RUNS_PER_PERSON = 3
    fill("owner", 2)
    asked = actions.NewRun(team="repo-fix", scenario="first-flight")

    began, capped = at_once(6, lambda: asked.start("owner").run_id)

    assert (len(began), capped) == (1, 5)
    assert len(live("owner")) == 3


@pytest.mark.parametrize(
    "value, said",
    [
        ("-1", "MINUTES_RUNS_PER_PERSON must be at least 0, got -1"),
        ("five", "MINUTES_RUNS_PER_PERSON must be a whole number, got 'five'"),
        ("2.5", "MINUTES_RUNS_PER_PERSON must be a whole number, got '2.5'"),
    ],
)
def test_a_bad_cap_is_refused_at_start_naming_it(value, said):
    assert said in refused(MINUTES_DEBUG="1", MINUTES_RUNS_PER_PERSON=value)


def test_the_cap_is_5_unless_set_and_0_is_no_cap():
    assert started("RUNS_PER_PERSON", MINUTES_DEBUG="1") == {"RUNS_PER_PERSON": 5}
    assert started("RUNS_PER_PERSON", MINUTES_DEBUG="1", MINUTES_RUNS_PER_PERSON="0") == {
        "RUNS_PER_PERSON": 0
    }


@pytest.mark.django_db(transaction=True)
def test_no_start_is_counted_between_a_run_and_its_baseline(settings, owner, monkeypatch):
    """A single start sent while a run's baseline is on its way is counted after both: the
    run and its baseline took the last two places, so it is refused, where it took the
    baseline's place and the baseline then went past the cap."""
    settings.RUNS_PER_PERSON = 4
    fill("owner", 2)
    single, said = actions.NewRun(team="repo-fix", scenario="first-flight"), []

    def start_single() -> None:
        try:
            said.append(single.start("owner").run_id)
        except runs.AtCapacity as exc:
            said.append(str(exc))
        finally:
            connections.close_all()

    real, other = baselines.start_baseline, threading.Thread(target=start_single)

    def baseline_once_another_start_had_its_chance(*args, **kwargs):
        other.start()
        other.join(3)  # held back by the person's lock: it goes on once both are begun
        return real(*args, **kwargs)

    monkeypatch.setattr(baselines, "start_baseline", baseline_once_another_start_had_its_chance)
    pair = actions.NewRun(team="repo-fix", scenario="first-flight", baseline=True)
    pair.start("owner")
    other.join(120)
    assert len(live("owner")) == 4
    [refusal] = said
    assert "owner has 4 live runs" in refusal
