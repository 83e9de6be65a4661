"""suite_not_run in the store: projected as the suite check arrives, shown on the run's
Findings tab and counted in its summary; and filled in by migration 0029 for runs projected
before the finding existed, exactly as a rebuild gives them (and nothing twice)."""

from __future__ import annotations

import html

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import Finding, RunState, RunSummary
from runtime.events import SuiteChecked, TeamStarted
from tests.dashboard.test_stopped_agent_findings_stored import migrate

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

WHY = "SandboxUnavailable: bubblewrap (/bin/false) cannot start a sandbox here"


def stored() -> dict[str, object]:
    return {
        "findings": sorted(
            Finding.objects.filter(kind="suite_not_run").values_list(
                "run_id", "kind", "key", "summary", "positions", "first_position", "detail"
            )
        ),
        "states": sorted(
            RunState.objects.filter(fold="suite_not_run").values_list("run_id", "fold", "state")
        ),
        "counts": sorted(RunSummary.objects.values_list("run_id", "findings_count")),
    }


def checked(run_id: str, **suite) -> None:
    started = TeamStarted(run_id=run_id, team="repo-fix", scenario="first-flight", task="t")
    DjangoJournal().append(f"run-{run_id}", [started, SuiteChecked(run_id=run_id, **suite)], 0)


def test_a_suite_that_did_not_run_is_a_finding_and_migration_0029_fills_it_in(as_owner):
    checked("r-00000000norun", passed=0, failed=0, ok=False, trace=WHY)
    checked("r-0000000000ran", passed=4, failed=1, ok=False, trace="1 failed")
    projection.catch_up()
    page = html.unescape(as_owner.get("/runs/r-00000000norun/?tab=findings").content.decode())
    assert 'title="suite_not_run">suite not run</span>' in page
    assert f"the harness could not run the suite, so no test passed or failed: {WHY}" in page
    made = stored()
    assert [run for run, *_ in made["findings"]] == ["r-00000000norun"]
    assert ("r-00000000norun", 1) in made["counts"] and ("r-0000000000ran", 0) in made["counts"]

    migrate("0028_a_saga_failed_at_its_first_step")
    try:
        # As a store projected before the finding held it: no row, no state, not counted.
        Finding.objects.filter(kind="suite_not_run").delete()
        RunState.objects.filter(fold="suite_not_run").delete()
        RunSummary.objects.update(findings_count=0)
    finally:
        migrate(None)
    assert stored() == made
    migrate("0028_a_saga_failed_at_its_first_step")  # again on a store that has it
    migrate(None)
    assert stored() == made
    projection.rebuild(["runs"])
    assert stored() == made
