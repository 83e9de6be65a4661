"""A journal whose final line is torn (the writer was killed mid-line) can be imported from the
page, as from the API and the command: the refusal said to allow a torn final line with
allow_torn=true in the API or --allow-torn on the command line, and the page had no way to."""

from __future__ import annotations

import io

import pytest

from journal_store.models import RunSummary, StoredEvent
from tests.dashboard.test_run_status_pages import journal_file

pytestmark = pytest.mark.django_db


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


@pytest.mark.parametrize("where", ["query", "form"])
def test_the_api_takes_allow_torn_beside_the_file_as_in_the_query(api, where):
    """A script posting the file as a form (curl -F journal=@...) sends allow_torn the same
    way; it was ignored, and the refusal then told it to send allow_torn=true, which it had."""
    assert api.post("/api/journals", {"journal": torn("r-70a17000002")}).status_code == 400
    url, fields = "/api/journals", {"journal": torn("r-70a17000002")}
    if where == "query":
        url += "?allow_torn=true"
    else:
        fields["allow_torn"] = "true"
    answer = api.post(url, fields)
    assert answer.status_code == 201, answer.content
    assert answer.json()["torn"].startswith("line 3: torn final line")


def test_an_allow_torn_beside_the_file_that_is_no_yes_or_no_is_named(api):
    answer = api.post("/api/journals", {"journal": torn("r-70a17000003"), "allow_torn": "maybe"})
    assert answer.status_code == 422
    assert [e["loc"][-1] for e in answer.json()["detail"]] == ["allow_torn"]
    assert StoredEvent.objects.count() == 0
