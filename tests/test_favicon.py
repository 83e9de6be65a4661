"""/favicon.ico: what a browser asks for when it shows a document with no page around it (the
API's JSON, an export, a plain-text refusal). Pages say they have no icon (`data:,`); these
said 404, logged as an error in the browser's console each time."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_the_icon_a_browser_asks_for_is_none_rather_than_a_404():
    answer = Client().get("/favicon.ico")
    assert answer.status_code == 204 and answer.content == b""
