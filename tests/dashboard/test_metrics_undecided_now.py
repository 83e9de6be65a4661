"""The metrics page's "waiting for people" sums the waits a person ended; while a dead letter or
a conflict sits undecided it read 0.0 min and said nothing of them. The sums now count the dead
letters still undecided (`letters_open`, beside `conflicts_open`), the page says what is
undecided now with links to the queues, and migration 0019 fills the count for runs projected
before it."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from journal_store import projection
from journal_store.models import MetricsDay, RunSummary
from services import letters
from services.control import Control
from tests.dashboard.conftest import run_of

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("journal_store", "0018_fork_inherited")]


@pytest.fixture
def lettered(owner) -> tuple[str, str]:
    run_id = run_of("first-flight", steps=1)
    letter = Control(run_id).dead_letter("a step kept failing", 3, "Boom: no")
    projection.catch_up()
    return run_id, letter.letter_id


def test_an_undecided_dead_letter_is_counted_until_a_person_decides(as_owner, lettered):
    run_id, letter_id = lettered
    assert RunSummary.objects.get(run_id=run_id).letters_open == 1
    totals = as_owner.get("/api/metrics").json()["totals"]
    assert (totals["letters_open"], totals["dead_letters"]) == (1, 1)
    page = as_owner.get("/metrics").content.decode()
    assert '<a href="/review/dead-letters">1 dead letter</a>' in page
    assert '<a href="/review/conflicts">0 conflicts</a>' in page
    # No wait has ended, so none has a length: not "0.0 min", as if nobody waited.
    assert '<dt>Waiting for people</dt><dd><span class="muted"' in page
    assert "none ended yet</span></dd>" in page
    assert (
        as_owner.get(f"/api/runs/{run_id}/metrics").json()["conflict_resolution_latency"]["detail"][
            "open_dead_letters"
        ]
        == 1
    )

    letters.decide_letter(letter_id, "retry", "rosa", "try again")
    projection.catch_up()
    totals = as_owner.get("/api/metrics").json()["totals"]
    assert (totals["letters_open"], totals["dead_letters"]) == (0, 1)
    page = as_owner.get("/metrics").content.decode()
    assert '<dd id="undecided">none</dd>' in page
    assert "none ended yet" not in page


def test_migration_0019_counts_the_letters_still_undecided(lettered):
    run_id, _ = lettered
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())  # 0019 and any after it
    assert RunSummary.objects.get(run_id=run_id).letters_open == 1
    assert sum(MetricsDay.objects.values_list("letters_open", flat=True)) == 1
