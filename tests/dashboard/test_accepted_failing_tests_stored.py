"""accepted_failing_tests in the store: projected as the ACCEPT and the merge's outcome arrive
(in separate batches too), shown on the run's Findings tab and counted in its summary; and
filled in by migration 0030 for runs projected before the finding existed, exactly as a rebuild
gives them (and nothing twice)."""

from __future__ import annotations

import html

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import Finding, RunState, RunSummary
from runtime.events import (
    Event,
    Integrated,
    IntegrationRefused,
    MessageSent,
    TeamStarted,
)
from tests.dashboard.test_stopped_agent_findings_stored import migrate

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

COMMIT = "c0ffee1234567890c0ffee1234567890c0ffee12"
RED = {"passed": 1, "failed": 1, "trace": "tests.test_parser::test_fields_are_trimmed"}


def stored() -> dict[str, object]:
    return {
        "findings": sorted(
            Finding.objects.filter(kind="accepted_failing_tests").values_list(
                "run_id", "kind", "key", "summary", "positions", "first_position", "detail"
            )
        ),
        "states": sorted(
            RunState.objects.filter(fold="accepted_failing_tests").values_list(
                "run_id", "fold", "state"
            )
        ),
        "counts": sorted(RunSummary.objects.values_list("run_id", "findings_count")),
    }


def reviewed(run_id: str, tests: dict | None, outcome: type[Event] | None) -> None:
    """A run whose reviewer accepts commit COMMIT on `tests`, then the merge's `outcome` (none:
    the run stops between the two), each appended and caught up on its own."""
    r = {"run_id": run_id, "task_id": "T1"}
    events: list[Event] = [
        TeamStarted(run_id=run_id, team="repo-fix", scenario="rubber-stamp", task="t"),
        MessageSent(
            **r,
            agent="reviewer",
            message_id="m-005",
            performative="accept",
            sender="reviewer",
            recipient="orchestrator",
            payload={"commit": COMMIT, "reasons": "looks right", "tests": tests},
        ),
    ]
    if outcome is Integrated:
        events.append(
            Integrated(
                **r,
                branch="candidate/T1",
                commit="f" * 40,
                approval="m-005",
                approved_by="reviewer",
            )
        )
    elif outcome is IntegrationRefused:
        events.append(IntegrationRefused(**r, branch="candidate/T1", reason="tests fail"))
    journal = DjangoJournal()
    for version, event in enumerate(events):
        journal.append(f"run-{run_id}", [event], version)
        projection.catch_up()


def test_an_accept_of_failing_tests_is_a_finding_and_migration_0030_fills_it_in(as_owner):
    reviewed("r-000000refused", RED, IntegrationRefused)
    reviewed("r-0000000merged", RED, Integrated)
    reviewed("r-000000pending", RED, None)
    reviewed("r-00000000green", {"passed": 2, "failed": 0}, Integrated)
    reviewed("r-0000000untest", None, Integrated)
    page = html.unescape(as_owner.get("/runs/r-000000refused/?tab=findings").content.decode())
    assert 'title="accepted_failing_tests">accepted failing tests</span>' in page
    assert (
        "reviewer accepted T1's commit c0ffee123456 though its tests fail (1 failed, 1 passed); "
        "the merge was refused"
    ) in page
    made = stored()
    assert [run for run, *_ in made["findings"]] == [
        "r-0000000merged",
        "r-000000pending",
        "r-000000refused",
    ]
    merged = next(f for f in made["findings"] if f[0] == "r-0000000merged")
    assert merged[3].endswith("; it was merged all the same") and merged[6]["outcome"] == "merged"
    assert merged[6]["agents"] == ["reviewer"] and merged[6]["commit"] == COMMIT
    # A state is kept only while an ACCEPT awaits its merge's outcome.
    assert [run for run, *_ in made["states"]] == ["r-000000pending"]
    assert ("r-000000refused", 1) in made["counts"] and ("r-00000000green", 0) in made["counts"]

    migrate("0029_suite_not_run_findings")
    try:
        # As a store projected before the finding held it: no row, no state, not counted.
        Finding.objects.filter(kind="accepted_failing_tests").delete()
        RunState.objects.filter(fold="accepted_failing_tests").delete()
        RunSummary.objects.update(findings_count=0)
    finally:
        migrate(None)
    assert stored() == made
    migrate("0029_suite_not_run_findings")  # again on a store that has it
    migrate(None)
    assert stored() == made
    projection.rebuild(["runs"])
    assert stored() == made
    # The pending ACCEPT's outcome, arriving after the migration, is folded by the projector.
    refused = IntegrationRefused(
        run_id="r-000000pending", task_id="T1", branch="candidate/T1", reason="tests fail"
    )
    DjangoJournal().append("run-r-000000pending", [refused], 2)
    projection.catch_up()
    [pending] = Finding.objects.filter(run_id="r-000000pending", kind="accepted_failing_tests")
    assert pending.detail["outcome"] == "refused" and len(pending.positions) == 2
    assert not RunState.objects.filter(fold="accepted_failing_tests").exists()
