"""Whoever imports a file starts the runs it introduces, whatever its TeamStarted says: a file
cannot make a run someone else's (and so hand them, or take, the right to resume it)."""

from __future__ import annotations

import pytest

from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary
from tests.security.import_helpers import (
    CHANNELS,
    an_importer,
    import_via,
    jsonl,
    team_started,
)

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("claimed", ["reviewer", None, ""])
@pytest.mark.parametrize("channel", CHANNELS)
def test_the_importer_is_the_runs_starter_whatever_the_file_says(channel, claimed, tmp_path):
    importer = an_importer()
    data = jsonl(team_started("r-claimed", started_by=claimed))
    answer = import_via(channel, importer, data, tmp_path)
    assert answer.status in (0, 201), answer.text
    assert RunSummary.objects.get(run_id="r-claimed").started_by == "importer"
    [stored] = DjangoJournal().read("run-r-claimed")
    assert stored.event.config["started_by"] == "importer"
