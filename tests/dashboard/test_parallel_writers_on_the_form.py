"""The parallel writers' scenarios are chosen on the new-run form like any other, each with its
description, and a run started from it carries the scenario's own settings (parallel_writers)."""

from __future__ import annotations

import re

import pytest

from journal_store.journal import DjangoJournal
from teams import TEAMS

pytestmark = pytest.mark.django_db

WRITERS = ("parallel-writers", "lost-writer", "deadlocked-writers")


def test_the_form_offers_the_writers_scenarios_and_starts_one_with_its_settings(as_owner):
    page = as_owner.get("/runs/new?team=repo-fix").content.decode().replace("&#x27;", "'")
    select = re.search(r'<select name="scenario".*?</select>', page, re.S).group(0)
    offered = re.findall(r'<option value="([^"]+)"', select)
    for name in WRITERS:
        assert name in offered
        assert f"{name}: {TEAMS['repo-fix'].scenarios[name].description}" in page
    body = {"team": "repo-fix", "scenario": "lost-writer", "model": "scripted"}
    response = as_owner.post("/runs/new", body)
    assert response.status_code == 302, response.content.decode()[:500]
    run_id = response.url.rstrip("/").rsplit("/", 1)[-1]
    [started] = [r.event for r in DjangoJournal().read(f"run-{run_id}")][:1]
    assert started.config["scenario"] == "lost-writer"
    settings = started.config["settings"]
    assert settings["parallel_writers"] is True and settings["template"] == "parse-and-slug"
    assert settings["reply_turns"] == 4
