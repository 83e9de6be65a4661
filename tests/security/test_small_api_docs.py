"""The API docs are behind sign-in and load nothing from another host: Swagger UI comes from
django-ninja's own static files, under the site's unchanged Content-Security-Policy."""

from __future__ import annotations

import re
import urllib.request

import pytest
from django.conf import settings
from django.test import Client

from dashboard.models import ApiToken
from tests.security.signin_helpers import person

ASSET = re.compile(r'<(?:script|link|img)\b[^>]*?\b(?:src|href)="([^"]+)"')


def test_signed_out_the_docs_send_you_to_sign_in_and_the_schema_is_refused(db):
    page = Client().get("/api/docs")
    assert page.status_code == 302 and page["Location"] == "/login?next=/api/docs"
    schema = Client().get("/api/openapi.json")
    assert schema.status_code == 401 and "paths" not in schema.content.decode()
    _, token = ApiToken.issue(person("script"), "ci")
    keyed = Client().get("/api/openapi.json", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert keyed.status_code == 200 and "/api/runs" in keyed.json()["paths"]


@pytest.mark.django_db(transaction=True)
def test_signed_in_the_docs_load_only_local_assets_that_are_served(live_server):
    client = Client()
    client.force_login(person("rosa"))
    page = client.get("/api/docs")
    assert page.status_code == 200
    html = page.content.decode()
    assert "cdn." not in html and "https://" not in html and "http://" not in html
    assets = ASSET.findall(html)
    assert any(a.endswith("swagger-ui-bundle.js") for a in assets), assets
    for asset in assets:
        assert asset.startswith("/static/"), asset
        with urllib.request.urlopen(live_server.url + asset, timeout=30) as served:
            assert served.status == 200, asset
    # The page's policy is the site's own, not loosened for it.
    assert page["Content-Security-Policy"] == settings.CONTENT_SECURITY_POLICY
    assert '"validatorUrl": null' in html  # no badge fetched from a public validator
