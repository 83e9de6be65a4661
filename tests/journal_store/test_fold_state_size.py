"""A run's stored fold states hold what later events need, not the run's history: they are no
bigger after forty rounds than after ten, and a batch loads only the folds its kinds concern."""

from __future__ import annotations

import json

from django.db import connections
from django.test.utils import CaptureQueriesContext

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import RunState, ThreadMessage
from runtime import events as ev
from tests.journal_store.conftest import on_every_backend
from tests.journal_store.rounds import Rounds


def size(value: object) -> int:
    """How many values a JSON document holds, containers and scalars alike."""
    if isinstance(value, dict):
        return 1 + sum(size(v) for v in value.values()) + len(value)
    if isinstance(value, list):
        return 1 + sum(size(v) for v in value)
    return 1


def sizes(alias: str, run_id: str) -> dict[str, int]:
    found = RunState.objects.using(alias).filter(run_id=run_id).values_list("fold", "state")
    return {fold: size(json.loads(state)) for fold, state in found}


@on_every_backend()
def test_the_fold_states_are_no_bigger_after_forty_rounds_than_after_ten(alias):
    run, journal = Rounds("r-size"), DjangoJournal(alias)
    written = 0

    def rounds(n: int) -> None:
        nonlocal written
        for i in range(n):
            events = run.round_events(late_delivery=i % 2 == 0)
            if written == 0:
                events = [*run.start(), *events]
            journal.append(run.stream, events, written)
            written += len(events)
            projection.catch_up(using=alias)

    rounds(10)
    after_ten = sizes(alias, run.run_id)
    rounds(30)
    assert sizes(alias, run.run_id) == after_ten
    assert ThreadMessage.objects.using(alias).filter(run_id=run.run_id).count() == 40 * 3


@on_every_backend()
def test_a_batch_loads_and_writes_only_the_folds_its_kinds_concern(alias):
    run, journal = Rounds("r-concern"), DjangoJournal(alias)
    events = [*run.start(), *run.round_events()]
    journal.append(run.stream, events, 0)
    projection.catch_up(using=alias)
    states = dict(RunState.objects.using(alias).values_list("fold", "state"))

    called = ev.ModelCalled(run_id=run.run_id, agent="coder", task_id="T1", turn=99)
    journal.append(run.stream, [called], len(events))
    with CaptureQueriesContext(connections[alias]) as captured:
        projection.catch_up(using=alias)

    state_reads = [
        q["sql"] for q in captured.captured_queries if "projection_fold_state" in q["sql"]
    ]
    assert state_reads
    for sql in state_reads:  # neither bill's, threads', nor any signature's state
        for untouched in ("'bill'", "'threads'", "'duplicate_work'", "'unanswered_request'"):
            assert untouched not in sql
    now = dict(RunState.objects.using(alias).values_list("fold", "state"))
    moved = {fold for fold in now if now[fold] != states.get(fold)}
    assert moved == {"summary", "resume_point", "metrics"}  # the metrics time a model call
