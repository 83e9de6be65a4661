"""An unknown tab name is a plain-text 404 that does not repeat the name: markup asked for in
the URL never comes back as a page."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from django.test import Client

from journal_store.models import RunSummary
from tests.security.signin_helpers import person

pytestmark = pytest.mark.django_db

HOSTILE = '<form action="https:evil.example"><input name=password>'  # no slash: one path segment


@pytest.mark.parametrize("htmx", [True, False])
def test_an_unknown_tab_is_a_plain_text_404_that_does_not_echo_its_name(htmx):
    RunSummary.objects.create(run_id="r-0123456789ab", status="done", stage="complete")
    client = Client()
    client.force_login(person("outsider"))
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    response = client.get(f"/runs/r-0123456789ab/tabs/{quote(HOSTILE, safe='')}", **headers)
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/plain")
    body = response.content.decode()
    assert "<form" not in body and "evil.example" not in body
    assert "timeline" in body  # it says which tabs there are
