"""A fork sent again with its idempotency key makes no second fork: the API's
`Idempotency-Key`, the fork form posted twice, and two asked at once. The fork the first made
is answered, its journal and its workspace left as they are (a naive replay would restore the
workspace again over the first fork's, and a lost race would remove it)."""

from __future__ import annotations

import re
import subprocess
import threading
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connections
from django.test import Client

from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary
from runtime import fork
from services import forks
from tests.dashboard.conftest import run_of

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("recorded_runs")]


def read_file_at(run_id: str) -> int:
    """The position of the coder's first read_file result: a fork there restores a
    workspace."""
    return next(
        r.position
        for r in DjangoJournal().read(f"run-{run_id}")
        if r.event.kind == "ToolReturned" and getattr(r.event, "tool", None) == "read_file"
    )


def post_fork(client: Client, parent: str, body: dict, key: str | None = None):
    headers = {"Idempotency-Key": key} if key is not None else {}
    return client.post(
        f"/api/runs/{parent}/fork", body, content_type="application/json", headers=headers
    )


def forks_of(parent: str) -> list[str]:
    return sorted(RunSummary.objects.filter(parent_id=parent).values_list("run_id", flat=True))


def workspace(run_id: str) -> Path:
    return settings.WORKSPACES / f"{run_id}.workspace"


def head(path: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()


def files(path: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(path)): p.read_bytes()
        for p in sorted(path.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(path).parts
    }


def leftovers() -> list[str]:
    """Workspaces restored for a fork and never put in place."""
    return sorted(p.name for p in settings.WORKSPACES.iterdir() if p.name.endswith(".staged"))


def test_a_fork_sent_again_with_its_key_answers_the_first_and_touches_nothing(as_owner, owner):
    parent = run_of("first-flight")
    body = {"at": read_file_at(parent), "message": {"agent": "coder", "text": "Keep it small."}}
    first = post_fork(as_owner, parent, body, key="fork-1")
    assert first.status_code == 201, first.content
    assert "Idempotent-Replayed" not in first.headers
    child = first.json()["run_id"]
    # The fork's workers have been at work in its workspace since: an edit nothing committed.
    own = workspace(child)
    (own / "NOTES.md").write_text("the coder's work in progress\n")
    before = (files(own), head(own), own.stat().st_ino)
    events = len(DjangoJournal().read(f"run-{child}"))
    top = DjangoJournal().last_position()

    again = post_fork(as_owner, parent, body, key="fork-1")
    assert again.status_code == 200, again.content
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["run_id"] == child
    assert again.json()["parent_id"] == parent
    assert DjangoJournal().last_position() == top  # nothing written
    assert len(DjangoJournal().read(f"run-{child}")) == events
    assert (files(own), head(own), own.stat().st_ino) == before  # not restored again
    assert forks_of(parent) == [child]
    assert leftovers() == []


def test_the_same_key_with_another_body_is_refused_naming_what_differs(as_owner, owner):
    parent = run_of("first-flight")
    at = read_file_at(parent)
    child = post_fork(as_owner, parent, {"at": at}, key="k1").json()["run_id"]
    top = DjangoJournal().last_position()
    response = post_fork(
        as_owner,
        parent,
        {"at": at, "max_turns": 7, "message": {"agent": "coder", "text": "hi"}},
        key="k1",
    )
    assert response.status_code == 422, response.content
    [problem] = response.json()["detail"]
    assert problem["loc"] == ["header", "Idempotency-Key"]
    assert child in problem["msg"] and "(max_turns, message)" in problem["msg"]
    assert DjangoJournal().last_position() == top
    assert forks_of(parent) == [child]


def test_a_key_is_the_persons_and_the_parents(as_owner, owner, token):
    """Another person's key, or the same key on a fork of another run, names another fork;
    a key that cannot be one is refused before anything is written."""
    parent = run_of("first-flight")
    body = {"at": read_file_at(parent)}
    mine = post_fork(as_owner, parent, body, key="shared").json()["run_id"]
    theirs = Client(headers={"Authorization": f"Bearer {token}"})
    other = post_fork(theirs, parent, body, key="shared")
    assert other.status_code == 201 and other.json()["run_id"] != mine
    top = DjangoJournal().last_position()
    bad = post_fork(as_owner, parent, body, key="two words")
    assert bad.status_code == 422
    assert bad.json()["detail"][0]["loc"] == ["header", "Idempotency-Key"]
    assert DjangoJournal().last_position() == top


def test_a_fork_written_first_by_the_same_request_sent_at_once_is_answered(
    as_owner, owner, monkeypatch, settings
):
    """The two requests interleaved where they race: this one has checked its fork and
    restored its workspace when the other makes the same fork whole. This one's write loses;
    it removes only the workspace it restored, and answers the other's fork, whose workspace
    stays."""
    # No cap: the other request, made here inside this one's write, would be inside this
    # one's hold of the person's lock (on SQLite one transaction, rolled back whole with this
    # write), where two real requests wait on each other for it (services/run_cap.py).
    settings.RUNS_PER_PERSON = 0
    parent = run_of("first-flight")
    at = read_file_at(parent)
    write = fork.write
    other: list[str] = []

    def the_other_request_first(journal, planned):
        if not other:
            other.append("")  # the other request does not race again
            begun = forks.begin_fork(parent, at, fork.Changes(), "owner", key="same")
            other[0] = begun.run_id
            assert begun.new
            (workspace(begun.run_id) / "NOTES.md").write_text("the other's fork, at work\n")
        write(journal, planned)

    monkeypatch.setattr(fork, "write", the_other_request_first)
    response = post_fork(as_owner, parent, {"at": at}, key="same")
    assert response.status_code == 200, response.content
    assert response.headers["Idempotent-Replayed"] == "true"
    assert response.json()["run_id"] == other[0]
    assert forks_of(parent) == other
    own = workspace(other[0])
    assert (own / ".git").is_dir()
    assert (own / "NOTES.md").read_text() == "the other's fork, at work\n"
    assert leftovers() == []


def test_keyed_forks_sent_at_once_make_one_fork(token, owner):
    parent = run_of("first-flight")
    body = {"at": read_file_at(parent)}
    barrier, answers = threading.Barrier(3), []

    def send() -> None:
        try:
            client = Client(headers={"Authorization": f"Bearer {token}"})
            barrier.wait()
            answer = post_fork(client, parent, body, key="at-once")
            answers.append((answer.status_code, answer.json().get("run_id")))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=send) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert sorted(code for code, _ in answers) == [200, 200, 201], answers
    [child] = {run_id for _, run_id in answers}
    assert forks_of(parent) == [child]
    assert (workspace(child) / ".git").is_dir()
    assert leftovers() == []


def test_the_fork_form_posted_twice_alike_forks_once(as_owner, owner):
    parent = run_of("first-flight")
    where = read_file_at(parent)
    page = as_owner.get(f"/runs/{parent}/fork?at={where}").content.decode()
    [sent_from] = re.findall(r'name="sent_from" value="([0-9a-f]{32})"', page)
    form = {"at": where, "to": "coder", "message": "Keep it small.", "sent_from": sent_from}
    first = as_owner.post(f"/runs/{parent}/fork", form)
    assert first.status_code == 302, first.content
    child = first["Location"].split("/")[2]
    own = workspace(child)
    (own / "NOTES.md").write_text("at work\n")
    events = len(DjangoJournal().read(f"run-{child}"))
    second = as_owner.post(f"/runs/{parent}/fork", form)
    assert second.status_code == 302 and second["Location"] == first["Location"]
    assert forks_of(parent) == [child]
    assert len(DjangoJournal().read(f"run-{child}")) == events
    assert (own / "NOTES.md").read_text() == "at work\n"
    # Changed (another message, fork): another fork.
    third = as_owner.post(f"/runs/{parent}/fork", {**form, "message": "Or not."})
    assert third.status_code == 302 and third["Location"] != first["Location"]
    # Another form drawn: another fork, though its choices are the same.
    drawn = as_owner.get(f"/runs/{parent}/fork?at={where}").content.decode()
    assert sent_from not in drawn
    assert len(forks_of(parent)) == 2


def test_a_fork_form_whose_hidden_key_was_tampered_with_forks_nothing(as_owner, owner):
    parent = run_of("first-flight")
    where = read_file_at(parent)
    response = as_owner.post(f"/runs/{parent}/fork", {"at": where, "sent_from": "<script>"})
    assert response.status_code == 400 and b"<script>" not in response.content
    assert b"hidden sent_from field was changed" in response.content
    assert forks_of(parent) == []
