"""With debug off (gunicorn, docker-compose), the pages' stylesheet and htmx are served: without
them the dashboard has no style and no live parts."""

from __future__ import annotations

import re

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_in_production_every_asset_a_page_names_is_served(settings):
    settings.DEBUG = False
    page = Client().get("/login").content.decode()
    assets = re.findall(r'(?:src|href)="(/static/[^"]+)"', page)
    assert any("htmx" in a for a in assets) and any(a.endswith(".css") for a in assets), assets
    for asset in assets:
        response = Client().get(asset)
        assert response.status_code == 200, asset
        assert b"".join(response.streaming_content if response.streaming else [response.content])


def test_a_file_outside_the_static_folders_is_not_served(settings):
    settings.DEBUG = False
    assert Client().get("/static/../config/settings.py").status_code == 404
    assert Client().get("/static/%2e%2e/config/settings.py").status_code == 404
