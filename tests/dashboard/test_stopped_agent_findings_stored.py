"""The two findings of an agent stopped undone, out of turns or without a tool call, in the
store: projected as events arrive, shown on the run's Findings tab and counted in its summary;
and filled in by migration 0024 for runs projected before the findings existed, exactly as a
rebuild gives them."""

from __future__ import annotations

import html

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import Finding, RunState, RunSummary
from runtime.model import call, say
from tests.runtime.test_stopped_agent_findings import flown

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

NEW = ("turn_cap_reached", "no_tool_call")


def fly(run_id: str, script, max_turns: int) -> None:
    flown(script, max_turns, DjangoJournal(), run_id)


def stored() -> dict[str, object]:
    return {
        "findings": sorted(
            Finding.objects.filter(kind__in=NEW).values_list(
                "run_id", "kind", "key", "summary", "positions", "first_position", "detail"
            )
        ),
        "states": sorted(
            RunState.objects.filter(fold__in=NEW).values_list("run_id", "fold", "state")
        ),
        "counts": sorted(RunSummary.objects.values_list("run_id", "findings_count")),
    }


def migrate(to: str | None) -> None:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([("journal_store", to)] if to else executor.loader.graph.leaf_nodes())


def test_stopped_agents_are_findings_on_the_page_and_migration_0024_fills_them_in(as_owner):
    fly("r-quiet", [say("I would edit the parser.", 10), say("That should do it.", 10)], 12)
    fly("r-capped", [call("noop", 10), call("noop", 11)], 2)
    projection.catch_up()

    page = html.unescape(as_owner.get("/runs/r-quiet/?tab=findings").content.decode())
    assert 'title="no_tool_call">no tool call</span>' in page
    assert "coder stopped on T1: two replies in a row without a tool call" in page
    assert "Shown by event <a" in page  # one event: not "events"
    page = html.unescape(as_owner.get("/runs/r-capped/?tab=findings").content.decode())
    assert 'title="turn_cap_reached">turn cap reached</span>' in page
    assert "coder used all 2 turns on T1 before finishing it" in page
    made = stored()
    assert [kind for _, kind, *_ in made["findings"]] == ["turn_cap_reached", "no_tool_call"]
    assert made["counts"] == [("r-capped", 1), ("r-quiet", 1)]

    migrate("0023_shared_cache")
    try:
        # As a store projected before the two findings held it: no rows, no states, not counted.
        Finding.objects.filter(kind__in=NEW).delete()
        RunState.objects.filter(fold__in=NEW).delete()
        RunSummary.objects.update(findings_count=0)
    finally:
        migrate(None)
    assert stored() == made
    migrate("0023_shared_cache")  # and run again on a store that has them: nothing twice
    migrate(None)
    assert stored() == made
    projection.rebuild(["runs"])
    assert stored() == made
