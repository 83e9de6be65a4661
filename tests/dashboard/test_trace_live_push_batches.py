"""A live push sends what a step made final in bodies within the same bounds as the end's
batches (MINUTES_OTLP_BATCH_SPANS, MINUTES_OTLP_BATCH_BYTES), a body refused as too large
again in halves: one body of a long step's spans (some 200 at 100 turns a step, 1.4 MB) was
refused by a 1 MiB proxy every step. The loopback collector of the batch tests decodes every
body with the official definitions and answers 413 above its limit."""

from __future__ import annotations

import time
from itertools import pairwise

import pytest

from journal_store import traces as journal_traces
from journal_store.journal import DjangoJournal
from runtime.events import TraceSpansClaimed, TraceSpansPushed, TraceSpansPushFailed
from services import runs, traces
from services.steps import drive_step
from tasks import traces as trace_tasks
from tests.dashboard.test_trace_push_batches import (  # noqa: F401  (a fixture)
    WorkerDied,
    as_sent,
    collector,
    dies_after,
    ids,
    whole,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def live(settings, collector):  # noqa: F811
    settings.OTLP_LIVE = True
    settings.STEP_TURNS = 8  # a repo-fix first flight: 16 of its 21 spans final in one step
    settings.OTLP_BATCH_SPANS = 512
    return collector


def one_long_step() -> str:
    """A run whose first step makes 16 spans final and goes on."""
    run_id = runs.start_run("repo-fix", "first-flight", by="owner")
    assert drive_step(run_id, "test") == "stepped"
    return run_id


def journalled(run_id: str) -> list:
    return [r.event for r in DjangoJournal().read(f"traces-{run_id}")]


def finish(run_id: str) -> None:
    while drive_step(run_id, "test") in ("stepped", "waiting"):
        pass


def test_a_long_step_goes_live_in_bodies_within_the_bound_each_span_once(settings, owner, live):
    settings.OTLP_BATCH_BYTES = 6_000
    live.limit = 6_000  # a proxy refusing any body over the bound
    run_id = one_long_step()
    assert trace_tasks.push_live(run_id) == "pushed"
    assert live.refused == []  # no body over the bound was sent
    sizes = [size for size, _ in live.took]
    assert len(sizes) > 1 and max(sizes) <= 6_000
    events = journalled(run_id)
    [claim] = [e for e in events if isinstance(e, TraceSpansClaimed)]
    assert (claim.first, claim.count) == (0, 16)  # one claim, however many bodies
    pushed = [e for e in events if isinstance(e, TraceSpansPushed)]
    bodies = zip(live.bodies(), live.took, strict=True)
    assert [(p.count, p.bytes) for p in pushed] == [(len(b), size) for b, (size, _) in bodies]
    assert pushed[0].first == 0 and sum(p.count for p in pushed) == 16
    assert all(a.first + a.count == b.first for a, b in pairwise(pushed))
    assert journal_traces.ledger(run_id).open is None  # the last body settled the claim
    went = live.spans()
    assert len(went) == 16 and len(set(ids(went))) == 16

    finish(run_id)
    assert trace_tasks.push(run_id) == "pushed"  # not "later": nothing is in flight
    sent = live.spans()
    assert len(ids(sent)) == len(set(ids(sent))) and as_sent(sent) == whole(run_id)
    assert max(size for size, _ in live.took) <= 6_000
    state = journal_traces.state(run_id)
    assert (state["spans"], state["live"]) == (len(whole(run_id)), 16)


def test_a_collector_whose_limit_is_below_the_bound_gets_a_live_body_in_halves(
    settings, owner, live
):
    settings.OTLP_BATCH_BYTES = 1_048_576
    live.limit = 6_000
    run_id = one_long_step()
    assert trace_tasks.push_live(run_id) == "pushed"
    assert live.refused and live.refused[0] > 6_000  # the step's 16 spans in one body
    sizes = [size for size, _ in live.took]
    assert len(sizes) > 1 and max(sizes) <= 6_000
    went = live.spans()
    assert len(went) == 16 and len(set(ids(went))) == 16
    assert sum(e.count for e in journalled(run_id) if isinstance(e, TraceSpansPushed)) == 16
    finish(run_id)
    assert trace_tasks.push(run_id) == "pushed"
    sent = live.spans()
    assert len(ids(sent)) == len(set(ids(sent))) and as_sent(sent) == whole(run_id)


def test_a_live_body_refused_leaves_the_claim_s_rest_to_the_end_push(settings, owner, live):
    settings.OTLP_BATCH_BYTES = 6_000
    live.answers = [200, 401]  # the first body taken, the second refused
    run_id = one_long_step()
    assert trace_tasks.push_live(run_id) == "failed"
    first = live.spans()
    events = journalled(run_id)
    [pushed] = [e for e in events if isinstance(e, TraceSpansPushed)]
    [failed] = [e for e in events if isinstance(e, TraceSpansPushFailed)]
    assert (pushed.first, pushed.count) == (0, len(first))
    assert (failed.first, failed.count) == (len(first), 16 - len(first))
    assert failed.attempts == 1 and failed.error.startswith("HTTP 401")
    assert len(live.took) == 1  # the push stopped at the refusal
    book = journal_traces.ledger(run_id)
    assert book.open is None and book.live_failed
    finish(run_id)
    assert trace_tasks.push(run_id) == "pushed"
    sent = live.spans()
    assert not set(ids(first)) & set(ids(sent[len(first) :]))  # the first body's not again
    assert len(ids(sent)) == len(set(ids(sent))) and as_sent(sent) == whole(run_id)


def test_no_live_body_starts_after_one_timeout_so_the_claim_settles_before_it_goes_stale(
    settings, owner, monkeypatch, live
):
    settings.OTLP_BATCH_BYTES = 6_000
    settings.OTLP_TIMEOUT_SECONDS = 1
    post = traces.send

    def slow(body: bytes, attempts: int | None = None):
        time.sleep(1.1)  # a collector that takes a whole timeout over each body
        return post(body, attempts)

    monkeypatch.setattr(traces, "send", slow)
    run_id = one_long_step()
    assert trace_tasks.push_live(run_id) == "failed"
    monkeypatch.undo()
    assert len(live.took) == 1  # the first body always goes; the next would start too late
    [failed] = [e for e in journalled(run_id) if isinstance(e, TraceSpansPushFailed)]
    assert failed.attempts == 0 and failed.status is None
    assert failed.error == "not sent: the live push had been sending for " + (
        "MINUTES_OTLP_TIMEOUT_SECONDS (1 s)"
    )
    assert failed.first + failed.count == 16
    finish(run_id)
    assert trace_tasks.push(run_id) == "pushed"
    sent = live.spans()
    assert len(ids(sent)) == len(set(ids(sent))) and as_sent(sent) == whole(run_id)


def test_a_live_push_whose_worker_died_between_bodies_leaves_only_the_rest_to_the_end(
    settings, owner, monkeypatch, live
):
    settings.OTLP_BATCH_BYTES = 6_000
    run_id = one_long_step()
    dies_after(monkeypatch, TraceSpansPushed.kind, 1)
    with pytest.raises(WorkerDied):
        trace_tasks.push_live(run_id)
    monkeypatch.undo()
    first = live.spans()
    assert 0 < len(first) < 16
    assert journal_traces.ledger(run_id).open is not None  # its claim is not settled
    finish(run_id)
    assert trace_tasks.push(run_id) == "later"  # it may still be sending
    monkeypatch.setattr(traces, "stale_after", lambda: -1.0)  # until the claim goes stale
    assert trace_tasks.push(run_id) == "pushed"
    sent = live.spans()
    assert len(ids(sent)) == len(set(ids(sent))) and as_sent(sent) == whole(run_id)
