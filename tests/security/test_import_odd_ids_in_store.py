"""Defence in depth: a run id with a slash or a control character that is in the store anyway
(written before ids were checked at import) does not break the pages that list every run and
every dead letter, and its links lead to its run."""

from __future__ import annotations

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from runtime.events import DeadLettered, TeamStarted
from tests.dashboard.conftest import client_for
from tests.security.import_helpers import an_importer

pytestmark = pytest.mark.django_db

ODD = ["r-evil/../x", "r-tab\there", "r-50%25", "r-?a=1#b"]


def store(run_id: str) -> None:
    DjangoJournal().append(
        f"run-{run_id}",
        [
            TeamStarted(run_id=run_id, team="repo-fix", scenario="first-flight", task="odd"),
            DeadLettered(run_id=run_id, letter_id=f"{run_id}:1", reason="parked"),
        ],
        0,
    )


def test_the_runs_list_and_the_dead_letter_queue_survive_odd_run_ids():
    importer = an_importer()
    for run_id in ODD:
        store(run_id)
    projection.catch_up()
    client = client_for(importer)
    assert client.get("/").status_code == 200
    assert client.get("/review/dead-letters").status_code == 200
    page = client.get("/").content.decode()
    for run_id in ODD:
        assert client.get(f"/runs/{quoted(run_id)}/").status_code == 200, run_id
        assert f'href="/runs/{quoted(run_id)}/"' in page, run_id


def quoted(run_id: str) -> str:
    """The link as the page writes it: the id as one path segment, then quoted for the URL."""
    from urllib.parse import quote

    return quote(quote(run_id, safe=""), safe="")
