"""A right-to-left override (and the other embeddings, overrides and isolates) in what agents
and people write is shown on the pages as its name, "[U+202E]", where it made "\u202eexe.live"
read "evil.exe"; the API's JSON and the export keep the character as it was written."""

from __future__ import annotations

import pytest

from dashboard.bidi import shown
from services import runs

pytestmark = pytest.mark.django_db

SPOOF = "report\u202eexe.txt \u2067isolated\u2069"


@pytest.fixture
def spoofed(owner):
    """A run whose task holds an override and an isolate (as an agent or a person wrote it)."""
    return runs.start_run("repo-fix", "first-flight", by="owner", task=SPOOF)


def test_the_pages_name_them_where_they_stand(as_owner, spoofed):
    for address in (f"/runs/{spoofed}/", "/", f"/search?q=report&run={spoofed}"):
        page = as_owner.get(address)
        assert page.status_code == 200, address
        body = page.content.decode()
        assert "\u202e" not in body and "\u2067" not in body and "\u2069" not in body, address
    run_page = as_owner.get(f"/runs/{spoofed}/")
    assert "report[U+202E]exe.txt [U+2067]isolated[U+2069]" in run_page.content.decode()
    assert int(run_page["Content-Length"]) == len(run_page.content)  # the page as sent


def test_the_api_and_the_export_keep_what_was_written(as_owner, spoofed):
    assert as_owner.get(f"/api/runs/{spoofed}").json()["task"] == SPOOF
    exported = b"".join(as_owner.get(f"/api/runs/{spoofed}/export").streaming_content)
    assert SPOOF.encode() in exported or b"\\u202e" in exported


def test_every_such_character_is_named_and_nothing_else_changes():
    page = "a\u202ab\u202bc\u202cd\u202de\u202ef\u2066g\u2067h\u2068i\u2069j … — ←".encode()
    assert shown(page).decode() == (
        "a[U+202A]b[U+202B]c[U+202C]d[U+202D]e[U+202E]f[U+2066]g[U+2067]h[U+2068]i[U+2069]j … — ←"
    )
    assert shown(b"plain ascii") == b"plain ascii"
