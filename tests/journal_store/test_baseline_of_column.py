"""A run's summary names the team run it is the baseline of (`baseline_of`, an indexed column),
which the team run's page reads at each view and header poll; it read every run's TeamStarted
(a scan of the whole journal). The column is projected like any other (a rebuild gives it
again), and migration 0017 fills it in for the runs projected before it."""

from __future__ import annotations

import io
import json
import uuid

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from journal_store import projection
from journal_store.models import RunState, RunSummary
from journal_store.transfer import import_journal
from services import baseline as baselines

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

BEFORE = [("journal_store", "0016_run_started_nulls_last")]


def imported_baseline(fly_team, run_id: str, team_run: str) -> None:
    """A solo flight stored as `run_id`, flown as the baseline of `team_run`."""
    flown = fly_team("solo-fix", team="solo")
    text = flown.path.read_text().replace('"baseline_of":null', f'"baseline_of":"{team_run}"', 1)
    lines = [json.loads(line) for line in text.replace(flown.run_id, run_id).splitlines()]
    for line in lines:  # event ids are unique in a store: the same flight again needs new ones
        line["id"] = uuid.uuid4().hex
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    import_journal(io.BytesIO(data), name=f"{run_id}.jsonl", size=len(data))
    projection.catch_up()


def summary_state(run_id: str) -> dict:
    return json.loads(RunState.objects.get(run_id=run_id, fold="summary").state)


def test_the_summary_names_a_baselines_team_run_and_a_rebuild_gives_it_again(fly_team):
    imported_baseline(fly_team, "r-solo-1", "r-team")
    imported_baseline(fly_team, "r-solo-2", "r-team")
    imported_baseline(fly_team, "r-solo-3", "r-other")
    assert RunSummary.objects.get(run_id="r-solo-1").baseline_of == "r-team"
    assert sorted(baselines.baselines_of("r-team")) == ["r-solo-1", "r-solo-2"]
    assert baselines.baselines_of("r-solo-1") == []
    projection.rebuild(["runs"])
    assert sorted(baselines.baselines_of("r-team")) == ["r-solo-1", "r-solo-2"]
    assert baselines.baselines_of("r-other") == ["r-solo-3"]


def test_migration_0017_fills_the_column_for_runs_projected_before_it(fly_team):
    imported_baseline(fly_team, "r-solo-old", "r-team")
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    try:
        # As a store before 0017 held it: no column, and a summary state without the key.
        state = summary_state("r-solo-old")
        del state["baseline_of"]
        RunState.objects.filter(run_id="r-solo-old", fold="summary").update(state=json.dumps(state))
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())  # 0017 and any after it
    assert RunSummary.objects.get(run_id="r-solo-old").baseline_of == "r-team"
    # The stored state has the key too: the run's next event keeps the column, not blanks it.
    assert summary_state("r-solo-old")["baseline_of"] == "r-team"
    assert baselines.baselines_of("r-team") == ["r-solo-old"]
