"""Importing a journal whose events this store holds already (the export of a run flown here,
or a file imported before) adds nothing and says so: not "imported", and 200 rather than 201
Created, on the page, in the API and from the command."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from journal_store.models import StoredEvent
from tests.dashboard.test_run_status_pages import journal_file

pytestmark = pytest.mark.django_db


def upload(body: bytes, name: str) -> io.BytesIO:
    file = io.BytesIO(body)
    file.name = name
    return file


def test_the_export_of_a_run_flown_here_is_all_here_already(as_owner, done_run):
    exported = b"".join(as_owner.get(f"/runs/{done_run}/export.jsonl").streaming_content)
    lines = len(exported.splitlines())
    before = StoredEvent.objects.count()
    page = as_owner.post("/import", {"journal": upload(exported, f"{done_run}.jsonl")})
    assert page.status_code == 200
    html = page.content.decode()
    assert "<h2>Nothing added</h2>" in html
    assert f"All {lines} events of this file are in this store already." in html
    assert "already imported" not in html and "<h2>Imported</h2>" not in html
    assert f'href="/runs/{done_run}/"' in html
    api = as_owner.post("/api/journals", {"journal": upload(exported, "again.jsonl")})
    assert api.status_code == 200 and api.json()["added"] == 0
    assert StoredEvent.objects.count() == before


def test_a_new_journal_is_created_and_a_second_import_of_it_is_not(as_owner):
    body = journal_file("legacy-9")
    first = as_owner.post("/import", {"journal": upload(body, "legacy.jsonl")})
    assert first.status_code == 201
    assert "<h2>Imported</h2>" in first.content.decode()
    assert "2 of 2 events added." in first.content.decode()
    again = as_owner.post("/import", {"journal": upload(body, "legacy.jsonl")})
    assert again.status_code == 200
    assert "All 2 events of this file are in this store already." in again.content.decode()


def test_the_command_says_the_events_are_here_already(tmp_path, capsys):
    path = tmp_path / "legacy.jsonl"
    path.write_bytes(journal_file("legacy-10"))
    call_command("import_journal", str(path))
    call_command("import_journal", str(path))
    err = capsys.readouterr().err
    assert "every event is in this store already; nothing added" in err
    assert "already imported" not in err
