"""A request for a host name the server does not answer for (MINUTES_ALLOWED_HOSTS) says so,
naming the setting: it got templates/400.html, drawn without the context it expects ("Mend the
address, or open  without its query" over an empty list), and the API got that HTML."""

from __future__ import annotations

import pytest
from django.core.exceptions import SuspiciousOperation
from django.template.loader import render_to_string
from django.test import Client, RequestFactory

from dashboard.refused import bad_request

pytestmark = pytest.mark.django_db


@pytest.fixture
def served(settings):
    settings.DEBUG = False  # Django calls handler400 only with debug off, as in production
    settings.ALLOWED_HOSTS = ["minutes.example.com"]


def test_a_page_asked_by_another_host_name_says_which_setting_lists_them(served):
    answer = Client(HTTP_HOST="10.0.0.7:8000").get("/login")
    assert answer.status_code == 400
    page = answer.content.decode()
    assert "not configured to answer for the host name &#x27;10.0.0.7:8000&#x27;" in page
    assert "MINUTES_ALLOWED_HOSTS" in page
    assert "without its query" not in page and 'href=""' not in page and "<ul" not in page


def test_the_api_asked_by_another_host_name_answers_json(served):
    answer = Client(HTTP_HOST="10.0.0.7").get("/api/runs")
    assert answer.status_code == 400 and answer["Content-Type"] == "application/json"
    detail = answer.json()["detail"]
    assert detail.startswith("this server is not configured to answer for the host name '10.0")
    assert detail.endswith("lists the names it answers for in MINUTES_ALLOWED_HOSTS")


def test_any_other_unreadable_request_gets_a_sentence_not_an_empty_list():
    request = RequestFactory().get("/runs")
    page = bad_request(request, SuspiciousOperation("a malformed header")).content.decode()
    assert "cannot read the request as it was sent" in page
    assert "<ul" not in page and 'href=""' not in page and "without its query" not in page
    api = bad_request(RequestFactory().get("/api/runs"), SuspiciousOperation("x"))
    assert api.status_code == 400 and b'"detail"' in api.content


def test_the_400_page_drawn_with_nothing_lists_nothing():
    # Django's own handler400 draws 400.html with no context at all.
    page = render_to_string("400.html")
    assert "<ul" not in page and 'href=""' not in page and "without its query" not in page
