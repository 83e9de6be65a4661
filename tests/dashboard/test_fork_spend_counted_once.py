"""A fork's journal begins with its parent's events up to the fork point, their model usage too.
Its bill counts them (its budget does), but they were spent once, by the parent: the metrics
across runs summed them twice, under the parent and under each fork. The fork's summary now
says which tokens were its parent's, the rollup leaves them out of the fork's share, the bill
tab says so, and migration 0018 fills this in for forks projected before it."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import MetricsDay, RunState, RunSummary
from runtime import flight
from services import forks
from tests.dashboard.conftest import drive, run_of

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow,
    pytest.mark.usefixtures("recorded_runs"),
]

BEFORE = [("journal_store", "0017_run_baseline_of")]


def parents_tokens_upto(run_id: str, at: int) -> int:
    """The parent's model usage up to and including its event at position `at`."""
    return sum(
        r.event.usage.total
        for r in flight.run_records(DjangoJournal(), run_id)
        if r.event.kind == "ModelResponded" and r.position <= at
    )


def first_read(run_id: str) -> int:
    """The coder's first read_file result: usage before it (the plan, the coder's first turn)
    and after it, and no edit yet that a fork would have to carry uncommitted."""
    return next(
        r.position
        for r in DjangoJournal().read(f"run-{run_id}")
        if r.event.kind == "ToolReturned" and r.event.tool == "read_file"
    )


@pytest.fixture
def forked(owner) -> tuple[str, str, int]:
    parent = run_of("first-flight")
    at = first_read(parent)
    child = forks.fork_run(parent, at, forks.Changes(), "owner")
    assert drive(child) != "stepped"
    projection.catch_up()
    return parent, child, parents_tokens_upto(parent, at)


def rollup_tokens() -> int:
    return sum(MetricsDay.objects.values_list("tokens", flat=True))


def test_a_forks_copied_tokens_are_its_parents_and_are_summed_across_runs_once(forked):
    parent, child, copied = forked
    assert copied > 0
    p, c = RunSummary.objects.get(run_id=parent), RunSummary.objects.get(run_id=child)
    assert (p.inherited_tokens, c.inherited_tokens) == (0, copied)
    assert c.tokens > copied  # it went on live after the fork point and spent its own
    assert c.inherited_coord_tokens + c.inherited_work_tokens == copied
    # Across runs: the parent's tokens, and the fork's own, each once.
    assert rollup_tokens() == p.tokens + c.tokens - copied
    coord = sum(MetricsDay.objects.values_list("coord_tokens", flat=True))
    work = sum(MetricsDay.objects.values_list("work_tokens", flat=True))
    assert coord + work == p.coord_tokens + p.work_tokens + c.coord_tokens + c.work_tokens - copied
    # A rebuild gives the same: the snapshot is taken by the folds, from the events.
    projection.rebuild(["runs"])
    assert RunSummary.objects.get(run_id=child).inherited_tokens == copied
    assert rollup_tokens() == p.tokens + c.tokens - copied


def test_the_bill_tab_and_the_api_say_which_tokens_were_the_parents(forked, as_owner):
    parent, child, copied = forked
    own = RunSummary.objects.get(run_id=child).tokens - copied
    page = as_owner.get(f"/runs/{child}/?tab=bill").content.decode()
    assert f"{copied} of these" in page
    assert f"Its own: {own} tokens" in page
    assert f'href="/runs/{parent}/"' in page
    assert 'id="bill-inherited"' not in as_owner.get(f"/runs/{parent}/?tab=bill").content.decode()
    body = as_owner.get("/api/metrics").json()
    p = RunSummary.objects.get(run_id=parent)
    assert body["totals"]["tokens"] == p.tokens + own


def test_migration_0018_fills_in_the_forks_projected_before_it(forked):
    parent, child, copied = forked
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    try:
        # As a store before 0018 held it: fold states without the snapshot.
        for name in ("bill", "metrics"):
            stored = RunState.objects.get(run_id=child, fold=name)
            state = json.loads(stored.state)
            del state["inherited"]
            RunState.objects.filter(pk=stored.pk).update(state=json.dumps(state))
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())  # 0018 and any after it
    c = RunSummary.objects.get(run_id=child)
    p = RunSummary.objects.get(run_id=parent)
    assert c.inherited_tokens == copied
    assert c.inherited_coord_tokens + c.inherited_work_tokens == copied
    assert rollup_tokens() == p.tokens + c.tokens - copied
    # The stored states carry the snapshot, so the fork's next event keeps the columns.
    bill = json.loads(RunState.objects.get(run_id=child, fold="bill").state)
    assert sum(row[0] for row in bill["inherited"].values()) == copied


def test_the_bill_api_gives_a_forks_copied_tokens_and_none_for_its_parent(forked, as_owner):
    parent, child, copied = forked
    body = as_owner.get(f"/api/runs/{child}/bill").json()
    assert body["inherited"]["tokens"] == copied
    assert body["inherited"]["own"] == body["total"]["tokens"] - copied
    assert sum(a["tokens"] for a in body["inherited"]["agents"].values()) == copied
    # Each agent's calls split by the models they were asked of: the copied ones first.
    for name, row in body["agents"].items():
        assert sum(p["tokens"] for p in row["parts"]) == row["tokens"], name
        assert sum(p["tokens"] for p in row["parts"] if p["copied"]) == (
            body["inherited"]["agents"].get(name, {}).get("tokens", 0)
        )
    assert as_owner.get(f"/api/runs/{parent}/bill").json()["inherited"] is None


def test_a_fork_before_any_model_answer_says_all_its_tokens_are_its_own(owner, as_owner):
    parent = run_of("first-flight")
    first = DjangoJournal().read(f"run-{parent}")[0].position  # its TeamStarted
    child = forks.fork_run(parent, first, forks.Changes(), "owner")
    assert drive(child) != "stepped"
    projection.catch_up()
    assert RunSummary.objects.get(run_id=child).inherited_tokens == 0
    page = as_owner.get(f"/runs/{child}/?tab=bill").content.decode()
    tokens = RunSummary.objects.get(run_id=child).tokens
    assert f"before any model answer: all {tokens} tokens are its own" in page
    assert "of these" not in page


def test_the_bill_tab_names_the_parents_model_for_the_copied_calls(owner, as_owner, settings):
    """A fork that hands the coder to a model on the endpoint: the coder's row names the model
    its copied calls were asked of (the parent's), beside the one it asks now. Not driven: the
    fork's journal as written is what is billed."""
    settings.MODEL_BASE_URL = "http://127.0.0.1:9/v1"
    settings.MODELS = {"MINUTES_MODEL": "some-model"}
    parent = run_of("first-flight")
    at = first_read(parent)
    changes = forks.Changes(models={"coder": "endpoint:m-big"})
    child = forks.fork_run(parent, at, changes, "owner")
    projection.catch_up()
    copied = parents_tokens_upto(parent, at)
    body = as_owner.get(f"/api/runs/{child}/bill").json()
    coder = body["agents"]["coder"]
    assert coder["model"] == "m-big"
    assert [(p["copied"], p["model"]) for p in coder["parts"]] == [(True, "scripted")]
    assert body["money"]["agents"]["coder"]["why"].startswith("before the fork, scripted")
    page = as_owner.get(f"/runs/{child}/?tab=bill").content.decode()
    assert f"before the fork: scripted ({coder['tokens']})" in page
    assert body["inherited"]["tokens"] == copied
