"""limit_not_enforced in the store: projected as the run_tests answers arrive, shown once on
the run's Findings tab with what to do, and counted in its summary; and filled in by migration
0047 for runs projected before the finding existed, exactly as a rebuild gives them (and
nothing twice)."""

from __future__ import annotations

import html

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import Finding, RunState, RunSummary
from runtime.events import TeamStarted, ToolReturned
from runtime.sandbox import NO_PROCESS_LIMIT
from runtime.signatures.limits import PROCESSES
from tests.dashboard.test_stopped_agent_findings_stored import migrate

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

BEFORE = "0046_run_started_by_status"


def stored() -> dict[str, object]:
    return {
        "findings": sorted(
            Finding.objects.filter(kind="limit_not_enforced").values_list(
                "run_id", "kind", "key", "summary", "positions", "first_position", "detail"
            )
        ),
        "states": sorted(
            RunState.objects.filter(fold="limit_not_enforced").values_list(
                "run_id", "fold", "state"
            )
        ),
        "counts": sorted(RunSummary.objects.values_list("run_id", "findings_count")),
    }


def ran_tests(run_id: str, *results: dict) -> None:
    started = TeamStarted(run_id=run_id, team="repo-fix", scenario="first-flight", task="t")
    answers = [
        ToolReturned(run_id=run_id, agent="coder", tool="run_tests", call_id=f"c{i}", result=r)
        for i, r in enumerate(results)
    ]
    DjangoJournal().append(f"run-{run_id}", [started, *answers], 0)


def test_an_unenforced_limit_is_one_finding_on_the_page_and_migration_0047_fills_it_in(as_owner):
    unbounded = {"passed": 1, "failed": 0, "not_enforced": NO_PROCESS_LIMIT}
    ran_tests("r-00000unbounded", unbounded, {"passed": 1, "failed": 1}, unbounded)
    ran_tests("r-0000000bounded", {"passed": 1, "failed": 0})
    projection.catch_up()
    page = html.unescape(as_owner.get("/runs/r-00000unbounded/?tab=findings").content.decode())
    assert page.count('title="limit_not_enforced">limit not enforced</span>') == 1
    assert PROCESSES in page
    made = stored()
    # The first and the third answers (the run's 2nd and 4th events), wherever the store's
    # positions start (a flushed database keeps its sequence).
    first = DjangoJournal().read("run-r-00000unbounded")[0].position
    assert [(run, positions) for run, _, _, _, positions, *_ in made["findings"]] == [
        ("r-00000unbounded", [first + 1, first + 3])
    ]
    assert ("r-00000unbounded", 1) in made["counts"] and ("r-0000000bounded", 0) in made["counts"]

    migrate(BEFORE)
    try:
        # As a store projected before the finding held it: no row, no state, not counted.
        Finding.objects.filter(kind="limit_not_enforced").delete()
        RunState.objects.filter(fold="limit_not_enforced").delete()
        RunSummary.objects.update(findings_count=0)
    finally:
        migrate(None)
    assert stored() == made
    migrate(BEFORE)  # again on a store that has it
    migrate(None)
    assert stored() == made
    projection.rebuild(["runs"])
    assert stored() == made
