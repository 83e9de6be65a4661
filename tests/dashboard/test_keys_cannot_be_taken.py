"""An idempotency key names a run that only its owner can be answered: a run put at the key's
id by an import, or begun by someone else, is refused (409), never answered as theirs; the id
is worked out under the server's secret, so the run an old-style hash names is not the one
the key names here; a start sent again is answered whatever changed on the server since it
was first sent; the command line's keys are not a web user named "operator"'s."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.test import Client

from dashboard.models import ApiToken
from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary
from runtime import flight, streams
from runtime import keys as plain_keys
from runtime.events import RunForked, TeamStarted
from services import keys, local_model, runs
from tests.dashboard.conftest import make_user

pytestmark = pytest.mark.django_db

BODY = {"team": "repo-fix", "scenario": "first-flight"}
KEY = "nightly-2026-12-06"


def api_for(user) -> Client:
    client = Client()
    client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {ApiToken.issue(user, 't')[1]}"
    return client


def post(api: Client, path: str, body: dict | None = None, key: str | None = None):
    headers = {"Idempotency-Key": key} if key is not None else {}
    return api.post(path, body or {}, content_type="application/json", headers=headers)


def upload(lines: list[dict], name: str = "mine.jsonl") -> io.BytesIO:
    file = io.BytesIO("".join(json.dumps(line) + "\n" for line in lines).encode())
    file.name = name
    return file


def started_line(run_id: str, by: str, asked: dict | None = None) -> dict:
    """A TeamStarted as a file would hold it: the run the owner's key would begin, to the
    letter (its `asked` too, when given)."""
    config = flight.plan("repo-fix", "first-flight", run_id, park=True, started_by=by)
    line = {
        "kind": "TeamStarted",
        "v": 2,
        "run_id": run_id,
        "team": "repo-fix",
        "scenario": "first-flight",
        "task": config.task,
        "config": config.model_dump(mode="json"),
        "t": 1_800_000_000.0,
    }
    return line | ({"asked": asked} if asked is not None else {})


def started_event(run_id: str, by: str, asked: dict | None = None) -> TeamStarted:
    """The same, as an event to append."""
    line = started_line(run_id, by, asked)
    return TeamStarted(**{k: v for k, v in line.items() if k not in ("kind", "v")})


def imported_by(user, lines: list[dict]) -> None:
    """`user` imports the file through the API, as any signed-in person may."""
    answer = api_for(user).post("/api/journals", {"journal": upload(lines)})
    assert answer.status_code == 201, answer.content


def starts_by(by: str) -> list[str]:
    found = DjangoJournal().select("WHERE kind = %s ORDER BY position", [TeamStarted.kind])
    return [r.event.run_id for r in found if r.event.config.get("started_by") == by]


def test_a_run_imported_where_the_old_hash_put_the_key_does_not_stop_its_owner(owner):
    """The review's reproduction: mallory imports a one-line journal at sha256(run, owner,
    key)[:12], as anyone could work out. The owner's keyed start is not refused (a 422 "this
    key began run ... with other settings", for a run they never began): the key names
    another id here, and their run begins."""
    mallory = make_user("mallory")
    planted = plain_keys.run_id(KEY, "owner", "run")
    imported_by(mallory, [started_line(planted, "mallory", {"team": "repo-fix"})])
    answer = post(api_for(owner), "/api/runs", BODY, key=KEY)
    assert answer.status_code == 201, answer.content
    assert answer.json()["run_id"] not in (planted, "") and answer.json()["started_by"] == "owner"
    again = post(api_for(owner), "/api/runs", BODY, key=KEY)
    assert (again.status_code, again.json()["run_id"]) == (200, answer.json()["run_id"])


@pytest.mark.parametrize("asked", [dict(BODY), None])
def test_a_run_imported_at_the_keys_own_id_is_refused_never_answered(owner, asked):
    """Even one who knows the server's secret (a development key) and imports a run at the
    very id the owner's key names, asked the same: the owner's start is a 409 saying the key
    names a run they did not begin, nothing is written, and sent again it is refused again."""
    mallory = make_user("mallory")
    planted = keys.run_id(KEY, "owner", "run")
    imported_by(mallory, [started_line(planted, "mallory", asked)])
    top = DjangoJournal().last_position()
    for _ in range(2):
        answer = post(api_for(owner), "/api/runs", BODY, key=KEY)
        assert answer.status_code == 409, answer.content
        said = answer.json()["detail"]
        assert said.startswith(f"this key names run {planted}, a run you did not begin")
        assert "choose another key" in said
    assert DjangoJournal().last_position() == top
    assert starts_by("owner") == []


def test_an_imported_run_is_refused_even_to_the_person_who_imported_it(owner):
    """Imported by the owner themself, with their name as its starter: still not a run their
    key began here, so not answered as one."""
    planted = keys.run_id(KEY, "owner", "run")
    imported_by(owner, [started_line(planted, "owner", dict(BODY))])
    answer = post(api_for(owner), "/api/runs", BODY, key=KEY)
    assert answer.status_code == 409, answer.content


def test_a_run_begun_by_another_at_the_keys_id_is_refused(owner):
    planted = keys.run_id(KEY, "owner", "run")
    DjangoJournal().append(streams.journal(planted), [started_event(planted, "mallory", BODY)], 0)
    top = DjangoJournal().last_position()
    answer = post(api_for(owner), "/api/runs", BODY, key=KEY)
    assert answer.status_code == 409, answer.content
    assert DjangoJournal().last_position() == top


def test_a_fork_whose_key_names_an_imported_run_is_refused(owner):
    """The fork's id, imported first: the owner's keyed fork is a 409 (where it was a 422
    naming "parent", a fork they never asked for), and nothing is forked."""
    parent = runs.start_run("repo-fix", "first-flight", by="owner")
    at = DjangoJournal().read(streams.journal(parent))[0].position
    mallory = make_user("mallory")
    planted = keys.fork_id("fork-1", "owner", parent)
    imported_by(mallory, [started_line(planted, "mallory")])
    top = DjangoJournal().last_position()
    answer = post(api_for(owner), f"/api/runs/{parent}/fork", {"at": at}, key="fork-1")
    assert answer.status_code == 409, answer.content
    assert "a run you did not begin" in answer.json()["detail"]
    assert DjangoJournal().last_position() == top
    assert not RunSummary.objects.filter(parent_id=parent).exists()


def test_a_fork_another_person_made_at_the_keys_id_is_refused(owner):
    parent = runs.start_run("repo-fix", "first-flight", by="owner")
    at = DjangoJournal().read(streams.journal(parent))[0].position
    planted = keys.fork_id("fork-1", "owner", parent)
    started = started_event(planted, "mallory")
    forked = RunForked(run_id=planted, parent=parent, at=at, number=1, by="mallory")
    DjangoJournal().append(streams.journal(planted), [started, forked], 0)
    top = DjangoJournal().last_position()
    answer = post(api_for(owner), f"/api/runs/{parent}/fork", {"at": at}, key="fork-1")
    assert answer.status_code == 409, answer.content
    assert DjangoJournal().last_position() == top


def test_the_ids_are_the_servers_own(settings):
    """Worked out under the server's secret: not the plain hash anyone can compute, and
    another secret names other ids."""
    here = keys.run_id(KEY, "owner", "run")
    assert here != plain_keys.run_id(KEY, "owner", "run")
    assert keys.fork_id(KEY, "owner", "r-1") != plain_keys.run_id(KEY, "owner", "fork of r-1")
    settings.SECRET_KEY = "another-" + "y" * 50
    assert keys.run_id(KEY, "owner", "run") != here


# --- a start sent again is answered whatever changed on the server since -------------------


def test_a_start_sent_again_after_the_sandbox_setting_changed_is_answered(owner, settings):
    """Where it was a 422 "other settings (sandbox): send the same request again", to a
    client that had sent the same request again."""
    api = api_for(owner)
    first = post(api, "/api/runs", BODY, key=KEY)
    assert first.status_code == 201, first.content
    top = DjangoJournal().last_position()
    settings.SANDBOX = "off"
    again = post(api, "/api/runs", BODY, key=KEY)
    assert (again.status_code, again.json()["run_id"]) == (200, first.json()["run_id"])
    assert again.headers["Idempotent-Replayed"] == "true"
    assert DjangoJournal().last_position() == top
    # Asked otherwise, it is named by what the request asked, not by what the server made.
    other = post(api, "/api/runs", {**BODY, "allowance": 999}, key=KEY)
    assert other.status_code == 422
    [problem] = other.json()["detail"]
    assert problem["loc"] == ["header", "Idempotency-Key"]
    assert "other settings (allowance)" in problem["msg"]


def test_a_start_sent_again_while_the_local_model_is_down_is_answered(owner, monkeypatch):
    """Where it was a 503 saying the local model server is not answering, for a run that
    had begun."""
    body = {"team": "solo", "scenario": "solo-fix", "model": "local"}
    monkeypatch.setattr(local_model, "unavailable", lambda: None)
    api = api_for(owner)
    first = post(api, "/api/runs", body, key=KEY)
    assert first.status_code == 201, first.content
    monkeypatch.setattr(local_model, "unavailable", lambda: "the local model server is down")
    again = post(api, "/api/runs", body, key=KEY)
    assert (again.status_code, again.json()["run_id"]) == (200, first.json()["run_id"])
    fresh = post(api, "/api/runs", body, key="another")  # a new run is still checked
    assert fresh.status_code == 503


def test_a_start_sent_again_once_the_endpoint_is_gone_is_answered(owner, settings):
    """Where it was a 422 at the body's `model` (no endpoint configured), for a run that had
    begun on it."""
    settings.MODELS = {"MINUTES_MODEL_BASE_URL": "http://127.0.0.1:9/v1", "MINUTES_MODEL": "m"}
    settings.MODEL_BASE_URL = "http://127.0.0.1:9/v1"
    body = {**BODY, "model": "endpoint"}
    api = api_for(owner)
    first = post(api, "/api/runs", body, key=KEY)
    assert first.status_code == 201, first.content
    settings.MODELS, settings.MODEL_BASE_URL = {}, ""
    again = post(api, "/api/runs", body, key=KEY)
    assert (again.status_code, again.json()["run_id"]) == (200, first.json()["run_id"])


def test_a_baseline_sent_again_after_the_sandbox_setting_changed_is_answered(owner, settings):
    api = api_for(owner)
    run_id = post(api, "/api/runs", BODY).json()["run_id"]
    first = post(api, f"/api/runs/{run_id}/baseline", key="b1")
    assert first.status_code == 201, first.content
    settings.SANDBOX = "off"
    again = post(api, f"/api/runs/{run_id}/baseline", key="b1")
    assert (again.status_code, again.json()["run_id"]) == (200, first.json()["run_id"])


def test_a_baselines_key_reused_is_the_starts_422_at_the_header(owner):
    """Where the baseline endpoint answered it a 400 of another shape than /api/runs' 422."""
    api = api_for(owner)
    run_id = post(api, "/api/runs", BODY).json()["run_id"]
    solo = keys.run_id("b1", "owner", f"baseline of {run_id}")
    event = started_event(solo, "owner", {"baseline_of": "r-000000000000"})
    DjangoJournal().append(streams.journal(solo), [event], 0)
    answer = post(api, f"/api/runs/{run_id}/baseline", key="b1")
    assert answer.status_code == 422, answer.content
    [problem] = answer.json()["detail"]
    assert problem["loc"] == ["header", "Idempotency-Key"]
    assert f"this key began run {solo} with other settings (baseline_of)" in problem["msg"]


# --- the command line's keys are its own ------------------------------------------------------


def test_a_web_user_named_operator_does_not_share_the_command_lines_keys(db):
    """Where web user "operator" sending the command's key was answered the command's run."""
    out = io.StringIO()
    call_command("start_run", "--scenario", "first-flight", "--key", "cron-1", stdout=out)
    cli_run = out.getvalue().strip()
    operator = make_user("operator")
    answer = post(api_for(operator), "/api/runs", BODY, key="cron-1")
    assert answer.status_code == 201, answer.content
    assert answer.json()["run_id"] != cli_run
    # The command's run is still its own: run again, it prints the same run.
    out = io.StringIO()
    call_command("start_run", "--scenario", "first-flight", "--key", "cron-1", stdout=out)
    assert out.getvalue().strip() == cli_run
    assert cli_run == keys.run_id("cron-1", keys.command_line("operator"), "run")
