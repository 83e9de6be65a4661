"""A journal whose final line is torn (the writer was killed mid-line) can be imported from the
page, as from the API and the command: the refusal said to allow a torn final line with
allow_torn=true in the API or --allow-torn on the command line, and the page had no way to."""

from __future__ import annotations

import io

import pytest

from journal_store.models import RunSummary, StoredEvent
from tests.dashboard.test_run_status_pages import journal_file

pytestmark = pytest.mark.django_db(transaction=True)


def torn(run_id: str) -> io.BytesIO:
    file = io.BytesIO(journal_file(run_id) + b'{"kind": "ModelResp')
    file.name = "killed.jsonl"
    return file


def test_the_page_refuses_a_torn_journal_and_says_how_to_import_the_rest_there(as_owner):
    page = as_owner.post("/import", {"journal": torn("r-70a17000001")})
    assert page.status_code == 400
    html = page.content.decode()
    assert "line 3: torn final line" in html
    assert "tick “Import the rest if the last line is torn”" in html
    assert StoredEvent.objects.count() == 0

    page = as_owner.post("/import", {"journal": torn("r-70a17000001"), "allow_torn": "on"})
    assert page.status_code == 201
    html = page.content.decode()
    assert "<h2>Imported</h2>" in html and "2 of 2 events added" in html
    assert "line 3: torn final line" in html  # said, not hidden
    assert RunSummary.objects.filter(run_id="r-70a17000001").exists()


def test_the_import_form_offers_the_choice(as_owner):
    html = as_owner.get("/import").content.decode()
    assert 'name="allow_torn"' in html and "Import the rest if the last line is torn" in html
