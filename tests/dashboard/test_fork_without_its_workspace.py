"""A fork of a run whose workspace is not on this server (a journal imported without it) is
refused saying so, by page and API, without the server's path: the refusal named the
directory (`/…/workspaces/r-x.workspace`), which no page or API answer may show."""

from __future__ import annotations

import shutil

import pytest
from django.conf import settings

from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from runtime.team import workspace_name
from tests.dashboard.conftest import run_of

pytestmark = pytest.mark.django_db

SAYS = "run {}'s workspace is not on this server"


@pytest.fixture
def without_workspace(owner):
    run_id = run_of("first-flight")
    shutil.rmtree(settings.WORKSPACES / workspace_name(run_id))
    at = next(
        r.position for r in DjangoJournal().read(f"run-{run_id}") if r.event.kind == "ToolReturned"
    )
    return run_id, at


def test_the_api_says_the_workspace_is_not_here_without_its_path(as_owner, without_workspace):
    run_id, at = without_workspace
    before = StoredEvent.objects.count()
    response = as_owner.post(
        f"/api/runs/{run_id}/fork", {"at": at}, content_type="application/json"
    )
    assert response.status_code == 400
    detail = response.json()["detail"]
    assert SAYS.format(run_id) in detail
    assert str(settings.WORKSPACES) not in detail and "/" not in detail
    assert StoredEvent.objects.count() == before


def test_the_page_says_the_workspace_is_not_here_without_its_path(as_owner, without_workspace):
    run_id, at = without_workspace
    response = as_owner.post(f"/runs/{run_id}/fork", {"at": at})
    assert response.status_code == 400
    page = response.content.decode()
    assert SAYS.format(run_id).replace("'", "&#x27;") in page
    assert str(settings.WORKSPACES) not in page and workspace_name(run_id) not in page
