"""A wrong URL or an unknown id answers Minutes' own 404 page, with DEBUG on as off (where
Django would list every URL pattern): what was not found, escaped, and a way back. htmx gets
the sentence alone, and the API keeps its JSON."""

from __future__ import annotations

import pytest
from django.template.loader import get_template
from django.test import Client

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture(params=[True, False], ids=["debug", "production"])
def debug(request, settings):
    settings.DEBUG = request.param
    return request.param


def assert_our_page(response, said: str) -> str:
    page = response.content.decode()
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")
    assert "<h1>Not found</h1>" in page and said in page
    assert 'href="/">Back to the runs</a>' in page
    assert "URLconf" not in page and "Using the URLconf" not in page
    return page


def test_an_unknown_run_says_which(debug, as_owner):
    assert_our_page(as_owner.get("/runs/r-doesnotexist/"), "no run r-doesnotexist")


def test_an_unmatched_url_names_the_path(debug, as_owner):
    page = assert_our_page(as_owner.get("/dead-letters/xyz"), "no page at /dead-letters/xyz")
    assert "Runs</a>" in page  # the signed-in navigation, as on every page


def test_what_was_asked_for_is_escaped(debug, as_owner):
    # One path segment: a run id, which the run's page looks up and does not find.
    page = assert_our_page(
        as_owner.get("/runs/r-<script>alert(1)/"), "no run r-&lt;script&gt;alert(1)"
    )
    assert "<script>alert" not in page
    # Its closing tag's slash makes it a URL no pattern matches.
    page = assert_our_page(
        as_owner.get("/runs/r-<script>alert(1)</script>/"),
        "no page at /runs/r-&lt;script&gt;alert(1)&lt;/script&gt;/",
    )
    assert "<script>alert" not in page


def test_signed_out_an_unmatched_url_is_the_same_page(debug, db):
    assert_our_page(Client().get("/nowhere"), "no page at /nowhere")


def test_a_missing_slash_is_still_added_before_anything_is_not_found(debug, as_owner):
    response = as_owner.get("/runs/r-doesnotexist")
    assert response.status_code == 301 and response["Location"] == "/runs/r-doesnotexist/"


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("/metrics/", "/metrics"),
        ("/runs/new/", "/runs/new"),  # read as a run named "new" until now
        ("/runs/new/?team=solo", "/runs/new?team=solo"),
        ("/review/dead-letters/", "/review/dead-letters"),
        ("/runs/", "/"),  # the runs list
    ],
)
def test_a_trailing_slash_too_many_goes_to_the_page_meant(debug, as_owner, typed, meant):
    response = as_owner.get(typed)
    assert response.status_code == 302 and response["Location"] == meant
    assert as_owner.get(meant).status_code == 200


def test_a_trailing_slash_is_forgiven_only_where_it_means_a_page_and_for_a_read(debug, as_owner):
    assert_our_page(as_owner.get("/nowhere/"), "no page at /nowhere/")
    assert_our_page(as_owner.get("/runs/r-doesnotexist/"), "no run r-doesnotexist")
    # A form sent to the wrong path is not moved (nor started): the run page takes no POST.
    assert as_owner.post("/runs/new/", {"team": "solo"}).status_code == 405
    assert as_owner.get("/api/runs/").status_code == 404  # the API's paths are its own


def test_htmx_gets_the_sentence_alone(debug, as_owner):
    response = as_owner.get("/runs/r-nope/header", **HTMX)
    assert response.status_code == 404 and response.content == b"no run r-nope"
    response = as_owner.get("/runs/r-nope/nothing-here", **HTMX)
    assert (
        response.status_code == 404 and response.content == b"no page at /runs/r-nope/nothing-here"
    )


def test_the_api_keeps_its_json(debug, as_owner):
    response = as_owner.get("/api/runs/r-nope")
    assert response.status_code == 404 and response.json() == {"detail": "no run r-nope"}
    # A path the API has no endpoint for answers as django-ninja answers its own 404s.
    response = as_owner.get("/api/no-such-endpoint")
    assert response.status_code == 404 and response.json() == {"detail": "Not Found"}
    # And so does its root, which django-ninja answers with an Http404 of its own.
    response = as_owner.get("/api/")
    assert response.status_code == 404 and response.json() == {"detail": "Not Found"}


def test_the_500_page_renders_with_no_context():
    page = get_template("500.html").render()
    assert "Something went wrong" in page and 'href="/static/minutes.css"' in page
