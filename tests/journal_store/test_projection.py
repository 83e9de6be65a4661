"""Projections: incremental catch-up equals a rebuild from position 0, every event applied
exactly once, and the read models say what the runtime's views say."""

from __future__ import annotations

import threading

import pytest
from django.db import connections

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import (
    AuditEntry,
    BillLine,
    Conflict,
    DeadLetter,
    Finding,
    FoldNote,
    OpenEffect,
    PendingPush,
    RunState,
    RunSummary,
    RunTag,
    ThreadMessage,
)
from runtime import events as ev
from runtime import views
from runtime.diagnose import diagnose
from runtime.jsonl import JsonlJournal
from tests.journal_store.conftest import on_every_backend

pytestmark = pytest.mark.slow
SCENARIOS = [
    "first-flight",
    "silent-dropout",
    "premature-done",
    "flaky-tool",
    "vague-subtask",
    "budget-starved",
    "reject-loop",
]


def extras() -> list[ev.Event]:
    """A small run with the kinds no scripted scenario produces, some of its agents' text
    holding NUL characters (journal_store/nul.py)."""
    r = {"run_id": "r-extras"}
    return [
        ev.TeamStarted(**r, team="solo", scenario="solo-fix", task="t", config={"allowance": 100}),
        ev.RunStarted(**r, agent="coder", task="t"),
        ev.ModelCalled(**r, agent="coder", turn=0),
        ev.ModelFailed(
            **r, agent="coder", turn=0, error={"type": "ModelHTTPError", "message": "503"}
        ),
        # an answer that could not be used, paid for all the same: billed and debited
        ev.ModelFailed(
            **r,
            agent="coder",
            turn=0,
            error={"type": "ModelProtocolError", "message": "the reply was cut off\x00"},
            usage={"total": 120, "prompt": 100, "completion": 20, "estimated": "missing"},
        ),
        ev.BudgetDebited(**r, agent="coder", turn=0, amount=120),
        ev.AgentNudged(**r, agent="coder", turn=1, text="use a\x00 tool"),
        ev.RunInconclusive(**r, agent="coder", turn=2, reason="drift"),
        ev.TurnCapReached(**r, agent="coder", max_turns=3),
        ev.RunInterrupted(**r, by="ann", reason="lunch"),
        ev.RunResumed(**r, by="bob"),
        ev.MessageInjected(**r, agent="coder", by="ana", text="mind the empty line"),
        ev.VoteTaken(
            **r,
            agent="reviewer",
            samples=3,
            verdicts=["accept", "reject", "accept"],
            winner="accept",
        ),
        ev.DraftCritiqued(
            **r, agent="critic", task_id="T1", commit="c", verdict="revise", reasons="r"
        ),
        ev.DraftRevised(**r, agent="coder", task_id="T1", draft="c", commit="d"),
        ev.CeilingReached(**r, ceiling="turns", limit=3, value=3),
        ev.RunStalled(**r, since=1.0, why="lease expired", holder="w1"),
        ev.DeadLettered(
            **r, task_id="T1", letter_id="dl-1", reason="poison", attempts=3, last_error="bo\x00om"
        ),
        ev.DeadLetterRetried(**r, letter_id="dl-1", by="ann", reason="fixed the runner"),
        ev.DeadLettered(**r, task_id="T1", letter_id="dl-2", reason="deadline", attempts=1),
        ev.DeadLetterDiscarded(**r, letter_id="dl-2", by="bob", reason="obsolete"),
        ev.ConflictParked(
            **r,
            conflict_id="c-1",
            subject="order:1",
            predicate="status",
            conflict_type="state",
            claims=[{"value": "paid"}, {"value": "refunded\x00", "\x00": "\\u0000"}],
        ),
        ev.ConflictResolved(
            **r, conflict_id="c-1", by="ann", reason="the bank says so", choice="0", value="paid"
        ),
        *obligations(r),
        # a parallel writer's leases as repo-fix records them in its run
        ev.LeaseTaken(
            **r,
            resource="r-extras:fix:T1",
            holder="coder-a",
            epoch=1,
            expires=1.0,
            stream_version=1,
        ),
        ev.LeaseGivenBack(
            **r, resource="r-extras:fix:T1", holder="coder-a", epoch=1, outcome="merged T1"
        ),
    ]


def obligations(r: dict[str, str]) -> list[ev.Event]:
    """The coordination primitives' kinds, from the test agents that make them (their
    verdicts left out: the run has its own)."""
    from tests.coordination.drills import flown

    names = ("stalled-owner", "lease-pair", "delegation-cycle", "flip-flop")
    return [
        e.model_copy(update=r)
        for name in names
        for e in flown(name).events
        if e.kind != "TeamFinished"
    ]


def every_kind_journal(fly_team) -> list[tuple[str, list[ev.Event]]]:
    batches = []
    for scenario in SCENARIOS:
        flown = fly_team(scenario)
        batches.append((f"run-{flown.run_id}", flown.events))
    batches.append(("run-r-extras", extras()))
    r = {"run_id": "r-extras"}
    batches.append(
        (
            "lease-r-extras",
            [
                ev.DriverLeased(**r, holder="w1", expires=1.0, at_version=3),
                ev.DriverReleased(**r, holder="w1", outcome="stepped"),
            ],
        )
    )
    batches.append(
        (
            "control-r-extras",
            [
                ev.StopRequested(**r, by="ann", reason="lunch"),
                ev.ResumeRequested(**r, by="bob"),
                ev.StepFailed(
                    **r, at_version=3, error={"type": "OperationalError", "message": "locked"}
                ),
                ev.RunForked(**r, parent="r-first", at=12, number=12, by="ana", changes={}),
                ev.RunTagged(**r, by="ana", added=["slow", "parser"]),
                ev.RunTagged(**r, by="bob", added=["flaky"], removed=["slow"]),
            ],
        )
    )
    for scenario in ("double-refund", "lost-update"):
        flown = fly_team(scenario, team="support-desk")
        streams: dict[str, list[ev.Event]] = {}
        for rec in JsonlJournal(flown.path).read_all():
            streams.setdefault(rec.stream, []).append(rec.event)
        batches.extend(streams.items())  # the run, its order, claims, effects, intent, conflict
    batches.append(
        (
            "coordination-r-extras",
            [
                ev.EffectResumed(
                    **r, key="fx-9", lease="lease-r-extras", epoch=2, after_lease="lease-r-extras"
                ),
                ev.EffectFailed(**r, key="fx-9", error={"type": "Declined", "message": "no"}),
                ev.LeaseGranted(**r, resource="order:1", holder="w1", expires=1.0),
                ev.LeaseRenewed(**r, resource="order:1", holder="w1", expires=2.0, epoch=1),
                ev.LeaseReleased(**r, resource="order:1", holder="w1"),
                ev.LeaseClosed(**r, resource="order:1", by="r-extras", reason="given up"),
                ev.StaleWorkRejected(
                    **r, what="refund", gate="lease", held=1, current=2, reason="moved"
                ),
                ev.ClaimsReconciled(
                    **r, subject="order:1", predicate="status", winner="a", losers=["b"], rule="x"
                ),
                ev.LiveClaimsNoted(
                    **r, subject="order:1", predicate="status", live=["a"], at=[3], through=4
                ),
            ],
        )
    )
    # effects left in flight (the open effects' read model): one started, one failed and sent
    # again, one taken over by another performer
    fx = {"effect_type": "refund", "target": "order:1", "request_hash": "h"}
    batches.append(("effect-fx-open", [ev.EffectStarted(**r, key="fx-open", **fx)]))
    batches.append(
        (
            "effect-fx-again",
            [
                ev.EffectStarted(**r, key="fx-again", **fx),
                ev.EffectFailed(**r, key="fx-again", error={"type": "Declined", "message": "no"}),
                ev.EffectResumed(**r, key="fx-again", lease="lease-r-extras", epoch=3),
            ],
        )
    )
    batches.append(
        (
            "effect-fx-taken",
            [
                ev.EffectStarted(**r, key="fx-taken", **fx),
                ev.EffectResumed(**r, key="fx-taken", lease="lease-r-extras", epoch=4),
            ],
        )
    )
    flown = fly_team("refund-saga", team="support-triage")
    streams = {}
    for rec in JsonlJournal(flown.path).read_all():
        streams.setdefault(rec.stream, []).append(rec.event)
    batches.extend(streams.items())  # the run and its specialists' streams
    batches.append(
        (
            "saga-r-extras",
            [
                ev.SagaStepCompleted(**r, saga_id="s-1", step="hold", key="fx-1", result={}),
                ev.SagaAborted(**r, saga_id="s-1", reason="refund declined", failed_step="pay"),
                ev.SagaCompensating(**r, saga_id="s-1", step="hold", key="fx-2"),
                ev.SagaCompensated(**r, saga_id="s-1", step="hold", key="fx-2", result={}),
                ev.SagaUndoFailed(
                    **r, saga_id="s-1", step="hold", key="fx-3", error="ServerUnreachable: gone"
                ),
                ev.BreakerReset(**r, breaker="tools:policy", reason="probe succeeded"),
                ev.WorkerTimedOut(**r, worker_id="kb-worker", deadline_seconds=1.0, elapsed=1.2),
                ev.SubtaskDegraded(**r, worker_id="kb-worker", objective="o", why="timed out"),
                ev.ToolRetryScheduled(**r, tool="run_tests", call_id="c1", attempt=2, delay=0.1),
                ev.ReplyOverdue(
                    **r, awaited="reviewer", request="m-1", turns=3, elapsed=0.5, reason="slow"
                ),
                ev.StatusNormalised(**r, agent="coder", said="meh", status="COMPLETED", reason="?"),
                ev.WorktreeAdded(
                    **r, writer="coder-a", branch="writer/coder-a", base="b", path="p"
                ),
                ev.WorktreeRemoved(**r, writer="tester-T3", path="p", discarded=["tests/t.py"]),
            ],
        )
    )
    endpoint = "http://127.0.0.1:4318"
    batches.append(
        (
            "traces-r-extras",
            [
                ev.TracePushQueued(**r, endpoint=endpoint),
                ev.TracePushFailed(**r, endpoint=endpoint, error="HTTP 503", attempts=4),
                ev.TracePushQueued(**r, endpoint=endpoint, by="alice"),
                ev.TraceBatchPushed(
                    **r, endpoint=endpoint, first=0, count=3, spans=3, bytes=300, attempts=1, upto=9
                ),
                ev.TracePushed(**r, endpoint=endpoint, spans=3, bytes=300, attempts=1),
                ev.TraceSpansClaimed(**r, endpoint=endpoint, first=0, count=2),
                ev.TraceSpansPushFailed(
                    **r, endpoint=endpoint, first=0, count=2, error="HTTP 503", attempts=1
                ),
                ev.TraceSpansClaimed(**r, endpoint=endpoint, first=0, count=2),
                ev.TraceSpansPushed(
                    **r, endpoint=endpoint, first=0, count=2, bytes=200, attempts=1, live=2
                ),
            ],
        )
    )
    batches.append(("import-r-extras", [ev.JournalImported(**r, file="extras.jsonl", by="ann")]))
    kinds = {e.kind for _, events in batches for e in events}
    assert kinds == set(ev.BY_KIND), set(ev.BY_KIND) - kinds
    return batches


def snapshot(alias: str) -> dict[str, list]:
    def rows(model, *order):
        fields = [f.name for f in model._meta.fields if f.name != "id"]
        return list(model.objects.using(alias).order_by(*order).values_list(*fields))

    return {
        "summary": rows(RunSummary, "run_id"),
        "state": rows(RunState, "run_id", "fold"),
        "notes": rows(FoldNote, "run_id", "fold", "key", "position"),
        "bill": rows(BillLine, "run_id", "agent", "task_id"),
        "threads": rows(ThreadMessage, "run_id", "position"),
        "audit": rows(AuditEntry, "run_id", "position"),
        "findings": rows(Finding, "run_id", "first_position", "kind"),
        "dead_letters": rows(DeadLetter, "letter_id"),
        "conflicts": rows(Conflict, "conflict_id"),
        "search": search_rows(alias),
        "tags": rows(RunTag, "run_id", "tag"),
        "pending_pushes": rows(PendingPush, "stream"),
        "open_effects": rows(OpenEffect, "stream"),
    }


def search_rows(alias: str) -> list:
    with connections[alias].cursor() as cursor:
        key = "rowid" if connections[alias].vendor == "sqlite" else "position"
        cursor.execute(f"SELECT {key}, run_id, kind, body FROM search_event ORDER BY {key}")
        return [tuple(row) for row in cursor.fetchall()]


@on_every_backend(transaction=True)
def test_rebuild_equals_the_incremental_path_on_a_journal_with_every_kind(fly_team, alias):
    journal = DjangoJournal(alias)
    for stream, events in every_kind_journal(fly_team):
        for i in range(0, len(events), 7):  # appended in small batches, caught up as it goes
            journal.append(stream, events[i : i + 7], i)
            projection.catch_up(using=alias, batch=5)
    incremental = snapshot(alias)
    assert len(incremental["summary"]) == len(SCENARIOS) + 4  # r-extras, two desk runs, triage
    in_flight = [stream for stream, *_ in incremental["open_effects"]]
    assert in_flight == ["effect-fx-again", "effect-fx-open", "effect-fx-taken"]
    shown = repr(incremental)  # the extras' NULs: U+FFFD on both databases
    assert "\x00" not in shown and "bo\ufffdom" in shown and "'\ufffd': '\\\\u0000'" in shown
    projection.rebuild(using=alias)
    assert snapshot(alias) == incremental
    projection.rebuild(["conflicts"], using=alias)
    assert snapshot(alias) == incremental
    # A name said twice (`--only runs --only runs`) is one projector, applied once.
    projection.rebuild(["runs", "search", "runs"], using=alias)
    assert snapshot(alias) == incremental


@on_every_backend(transaction=True)
def test_the_read_models_say_what_the_views_say(fly_team, alias):
    flown = fly_team("premature-done")
    journal = DjangoJournal(alias)
    journal.append(f"run-{flown.run_id}", flown.events, 0)
    stored = journal.read(f"run-{flown.run_id}")  # the same events, at the store's positions
    projection.catch_up(using=alias)
    summary = RunSummary.objects.using(alias).get(run_id=flown.run_id)
    bill = views.bill(flown.records)
    assert (summary.status, summary.stage) == ("done", "complete")
    assert (summary.tokens, summary.spent, summary.allowance) == (
        bill["total"]["tokens"],
        bill["spent"],
        5000,
    )
    assert summary.event_count == len(flown.events)
    lines = BillLine.objects.using(alias).filter(run_id=flown.run_id)
    assert sum(line.tokens for line in lines) == bill["total"]["tokens"]
    findings = Finding.objects.using(alias).filter(run_id=flown.run_id)
    assert [(f.kind, f.positions) for f in findings] == [
        (f["kind"], f["positions"]) for f in diagnose(stored)
    ]
    assert ThreadMessage.objects.using(alias).filter(run_id=flown.run_id).count() == sum(
        len(t) for t in views.threads(flown.records).values()
    )
    assert projection.behind(alias) == {name: 0 for name in projection.PROJECTORS}


@on_every_backend(transaction=True)
def test_two_catch_ups_at_once_apply_each_event_exactly_once(fly_team, alias):
    flown = fly_team("first-flight")
    DjangoJournal(alias).append(f"run-{flown.run_id}", flown.events, 0)
    barrier = threading.Barrier(3)
    errors = []

    def catch_up() -> None:
        try:
            barrier.wait()
            projection.catch_up(using=alias, batch=3)
        except Exception as exc:  # surfaced below: a thread's failure must fail the test
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=catch_up) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    summary = RunSummary.objects.using(alias).get(run_id=flown.run_id)
    assert summary.event_count == len(flown.events)  # not 2x or 3x
    assert summary.tokens == views.bill(flown.records)["total"]["tokens"]


@on_every_backend()
def test_the_queues_follow_their_decisions(alias):
    DjangoJournal(alias).append("run-r-extras", extras(), 0)
    projection.catch_up(using=alias)
    letters = dict(DeadLetter.objects.using(alias).values_list("letter_id", "status"))
    assert letters == {"dl-1": "retried", "dl-2": "discarded"}
    conflict = Conflict.objects.using(alias).get()
    assert conflict.status == "resolved"
    assert conflict.resolution == {"choice": "0", "value": "paid", "committed": None}
    assert conflict.decided_by == "ann"
    human = AuditEntry.objects.using(alias).filter(run_id="r-extras", human=True)
    assert [a.what for a in human] == [
        "RunInterrupted",
        "RunResumed",
        "DeadLetterRetried",
        "DeadLetterDiscarded",
        "ConflictResolved",
    ]
