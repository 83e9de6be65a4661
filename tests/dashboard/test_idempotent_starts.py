"""A start sent again with its idempotency key begins no second run: the API's
`Idempotency-Key`, the start_run command's --key, and the new-run form posted twice."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from dashboard.models import ApiToken
from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary
from runtime.events import TeamStarted

pytestmark = pytest.mark.django_db

BODY = {"team": "repo-fix", "scenario": "first-flight"}


def api_for(token: str) -> Client:
    client = Client()
    client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    return client


@pytest.fixture
def api(token):
    return api_for(token)


def post(api: Client, path: str, body: dict | None = None, key: str | None = None):
    headers = {"Idempotency-Key": key} if key is not None else {}
    return api.post(path, body or {}, content_type="application/json", headers=headers)


def starts() -> list[str]:
    """The run ids of every TeamStarted in the store, oldest first."""
    found = DjangoJournal().select("WHERE kind = %s ORDER BY position", [TeamStarted.kind])
    return [r.event.run_id for r in found]


def test_a_start_sent_again_with_its_key_answers_the_run_it_began(api):
    first = post(api, "/api/runs", BODY, key="nightly-2026-12-05")
    assert first.status_code == 201, first.content
    assert "Idempotent-Replayed" not in first.headers
    run_id = first.json()["run_id"]
    top = DjangoJournal().last_position()

    again = post(api, "/api/runs", BODY, key="nightly-2026-12-05")
    assert again.status_code == 200, again.content
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["run_id"] == run_id
    assert DjangoJournal().last_position() == top  # nothing written
    assert starts() == [run_id]


def test_without_a_key_each_start_begins_a_run(api):
    ids = {post(api, "/api/runs", BODY).json()["run_id"] for _ in range(2)}
    assert len(ids) == 2 and sorted(starts()) == sorted(ids)


def test_the_same_key_with_other_settings_is_refused_naming_them(api):
    run_id = post(api, "/api/runs", BODY, key="k1").json()["run_id"]
    top = DjangoJournal().last_position()
    response = post(api, "/api/runs", {**BODY, "allowance": 999, "max_turns": 3}, key="k1")
    assert response.status_code == 422, response.content
    [problem] = response.json()["detail"]
    assert problem["loc"] == ["header", "Idempotency-Key"]
    assert run_id in problem["msg"] and "allowance, max_turns" in problem["msg"]
    assert DjangoJournal().last_position() == top


def test_the_same_key_on_another_team_is_refused_as_another_team(api):
    post(api, "/api/runs", BODY, key="k1")
    response = post(api, "/api/runs", {"team": "support-triage"}, key="k1")
    assert response.status_code == 422
    assert "(team)" in response.json()["detail"][0]["msg"]


def test_another_persons_key_names_another_run(api, owner):
    mine = post(api, "/api/runs", BODY, key="shared-name").json()["run_id"]
    theirs = post(api_for(ApiToken.issue(owner, "t")[1]), "/api/runs", BODY, key="shared-name")
    assert theirs.status_code == 201 and theirs.json()["run_id"] != mine


@pytest.mark.parametrize(
    "key, said",
    [
        ("two words", "visible ASCII"),
        ("x" * 256, "256 characters"),
        ("caf\u00e9", "visible ASCII"),
    ],
)
def test_a_key_that_cannot_be_one_is_refused_before_anything_is_written(api, key, said):
    response = post(api, "/api/runs", BODY, key=key.encode("utf-8").decode("latin-1"))
    assert response.status_code == 422, response.content
    [problem] = response.json()["detail"]
    assert problem["loc"] == ["header", "Idempotency-Key"] and said in problem["msg"]
    assert DjangoJournal().last_position() == 0


def test_a_baseline_asked_for_again_with_its_key_is_the_same_baseline(api):
    run_id = post(api, "/api/runs", BODY).json()["run_id"]
    path = f"/api/runs/{run_id}/baseline"
    first = post(api, path, key="b1")
    assert first.status_code == 201, first.content
    again = post(api, path, key="b1")
    assert (again.status_code, again.json()["run_id"]) == (200, first.json()["run_id"])
    other = post(api, path)  # without a key, another baseline: a real model's runs differ
    assert other.status_code == 201 and other.json()["run_id"] != first.json()["run_id"]
    assert len(RunSummary.objects.filter(baseline_of=run_id)) == 2


def test_a_start_cut_short_before_its_baseline_begins_it_when_sent_again(api):
    """The team run was begun, its baseline not (the answer lost between the two): the start
    sent again answers the team run and begins the baseline, which the key names."""
    run_id = post(api, "/api/runs", BODY, key="k2").json()["run_id"]
    again = post(api, "/api/runs", {**BODY, "baseline": True}, key="k2")
    assert (again.status_code, again.json()["run_id"]) == (200, run_id)
    [solo] = RunSummary.objects.filter(baseline_of=run_id).values_list("run_id", flat=True)
    # The same baseline the run's own baseline endpoint answers for that key.
    asked = post(api, f"/api/runs/{run_id}/baseline", key="k2")
    assert (asked.status_code, asked.json()["run_id"]) == (200, solo)


def test_the_start_run_command_with_a_key_starts_one_run(owner):
    said = []
    for _ in range(2):
        out = io.StringIO()
        call_command("start_run", "--scenario", "first-flight", "--key", "cron-1", stdout=out)
        said.append(out.getvalue().strip())
    assert said[0] == said[1] and starts() == [said[0]]
    with pytest.raises(CommandError, match="--key: the key is 1 to 255 visible ASCII"):
        call_command("start_run", "--key", "with space", stdout=io.StringIO())


def test_the_form_posted_twice_alike_lands_on_one_run(as_owner):
    page = as_owner.get("/runs/new").content.decode()
    [sent_from] = re.findall(r'name="sent_from" value="([0-9a-f]{32})"', page)
    form = {"team": "repo-fix", "scenario": "first-flight", "model": "scripted"}
    form.update(presets_of="repo-fix/first-flight", sent_from=sent_from)
    first = as_owner.post("/runs/new", form)
    second = as_owner.post("/runs/new", form)
    assert first.status_code == second.status_code == 302
    assert first["Location"] == second["Location"] and len(starts()) == 1
    # Changed (back, another allowance, start): another run.
    third = as_owner.post("/runs/new", {**form, "allowance": "777"})
    assert third.status_code == 302 and third["Location"] != first["Location"]
    # Another form drawn: another run, though its choices are the same.
    drawn = as_owner.get("/runs/new").content.decode()
    assert sent_from not in drawn
    assert len(starts()) == 2


def test_a_form_whose_hidden_key_was_tampered_with_starts_nothing(as_owner):
    form = {"team": "repo-fix", "scenario": "first-flight", "model": "scripted"}
    response = as_owner.post("/runs/new", {**form, "sent_from": "<script>"})
    assert response.status_code == 400 and b"<script>" not in response.content
    assert b"hidden sent_from field was changed" in response.content
    assert starts() == []
