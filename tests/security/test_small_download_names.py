"""A run's download is named by Django's `content_disposition_header` from a sanitized id: an id
with quotes, `filename*=` or line breaks cannot add parameters to the header or split it."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from django.test import Client

from journal_store.models import RunSummary
from tests.security.signin_helpers import person

pytestmark = pytest.mark.django_db

HOSTILE = [
    "r-a\";filename*=UTF-8''evil.html;x=\"",
    "r-a\r\nSet-Cookie: sessionid=stolen",
    "r-../../etc/passwd",  # never in a URL (a slash), but the name must not carry it either
    "r-ünïcode\u202egnp.exe",
]
SAFE_NAME = re.compile(r'^attachment; filename="[A-Za-z0-9._-]+(\.jsonl|\.otlp\.json|\.otlp\.pb)"$')


@pytest.fixture
def client():
    client = Client()
    client.force_login(person("outsider"))
    return client


def downloads(run_id: str) -> list[str]:
    quoted = quote(run_id, safe="")
    return [
        f"/runs/{quoted}/export.jsonl",
        f"/runs/{quoted}/trace.otlp.json",
        f"/runs/{quoted}/trace.otlp.pb",
        f"/api/runs/{quoted}/export",
    ]


@pytest.mark.parametrize("run_id", [i for i in HOSTILE if "/" not in i])
def test_a_hostile_run_id_cannot_shape_the_download_header(client, run_id):
    RunSummary.objects.create(run_id=run_id, status="done", stage="complete")
    for url in downloads(run_id):
        response = client.get(url)
        assert response.status_code == 200, (url, response.content[:200])
        header = response["Content-Disposition"]
        assert SAFE_NAME.match(header), (url, header)
        assert "filename*" not in header and "\n" not in header and "\r" not in header
        assert b"\r\nSet-Cookie" not in response.serialize_headers()  # no header of its own


def test_the_name_keeps_what_is_safe_of_the_id():
    from dashboard.downloads import attachment

    assert attachment("r-0123456789ab", ".jsonl") == 'attachment; filename="r-0123456789ab.jsonl"'
    assert attachment("r-../../etc/passwd", ".jsonl") == (
        'attachment; filename="r-.._.._etc_passwd.jsonl"'
    )
    assert attachment("...", ".jsonl") == 'attachment; filename="run.jsonl"'
