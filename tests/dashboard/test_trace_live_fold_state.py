"""A live push folds only the events since the last one: the fold's state is stored per run
(trace_fold_state) with the journal position it folded to. After every step the spans pushed
live are, span for span, the first spans of a full export of the journal as it then stands;
and a stored state that is ahead of the journal, of another journal, past the claims or
corrupt is never trusted: the journal is folded again from its start, with the same spans."""

from __future__ import annotations

import pytest

from journal_store import trace_fold
from journal_store import traces as journal_traces
from journal_store.journal import DjangoJournal
from journal_store.models import TraceFold
from runtime import flight
from runtime.otel import otlp_request
from runtime.otel.encode import folded
from runtime.otel.fold_state import FORMAT
from services import runs
from services.steps import drive_step
from tasks import traces as trace_tasks
from tests.dashboard.test_trace_live_push import live, received  # noqa: F401  (a fixture)
from tests.dashboard.test_trace_push import collector  # noqa: F401  (a fixture)

pytestmark = pytest.mark.django_db


def full_export(run_id: str) -> list[bytes]:
    """The spans a fold of the whole journal, from its start, hands out so far."""
    records = flight.run_records(DjangoJournal(), run_id)
    return [
        bytes.fromhex(s.span_id) + s.name.encode()
        for _, s in folded(records, journal_traces.options(), finish=False)
    ]


def pushed(receiver) -> list[bytes]:
    return [s.span_id + s.name.encode() for s in received(receiver)]


def serialized(receiver) -> list[bytes]:
    return [s.SerializeToString(deterministic=True) for s in received(receiver)]


def test_each_live_push_steps_the_stored_fold_and_sends_what_a_full_export_has(
    owner,
    live,  # noqa: F811
):
    run_id = runs.start_run("repo-fix", "first-flight", by="owner")
    sources = []
    positions = []
    while drive_step(run_id, "test") in ("stepped", "waiting"):
        book = journal_traces.ledger(run_id)
        # The few rows a live push reads of the ledger say what the whole stream says.
        quick = journal_traces.live_ledger(run_id)
        assert (quick.version, quick.last, quick.cursor, quick.open) == (
            book.version,
            book.last,
            book.cursor,
            book.open,
        )
        before = TraceFold.objects.filter(run_id=run_id).first()
        outcome = trace_tasks.push_live(run_id)
        assert outcome in ("pushed", "nothing")
        row = TraceFold.objects.get(run_id=run_id)
        assert row.spans == journal_traces.ledger(run_id).cursor == len(received(live))
        positions.append(row.position)
        sources.append("stored" if before is not None else "new")
        # Span for span (ids, names, then every byte), what the whole journal's fold gives.
        whole = full_export(run_id)
        assert pushed(live) == whole[: len(pushed(live))]
        assert len(whole) == len(pushed(live))  # every span final so far went
    assert positions == sorted(positions) and len(set(positions)) > 3  # it moved along
    assert sources[0] == "new" and set(sources[1:]) == {"stored"}
    records = flight.run_records(DjangoJournal(), run_id)
    request = otlp_request(records, journal_traces.options())
    whole = [
        s.SerializeToString(deterministic=True)
        for s in request.resource_spans[0].scope_spans[0].spans
    ]
    assert serialized(live) == whole[: len(serialized(live))]
    assert trace_tasks.push(run_id) == "pushed"  # the end's push
    assert not TraceFold.objects.filter(run_id=run_id).exists()  # no live push needs it now


def step_twice(run_id: str) -> None:
    for _ in range(2):
        assert drive_step(run_id, "test") == "stepped"


@pytest.mark.parametrize(
    "spoil, why",
    [
        ({"state": "{not json"}, "unreadable"),
        ({"state": f'{{"format":{FORMAT},"run_id":"r-other"}}'}, "r-other"),
        ({"position": 10**9}, "does not hold"),  # ahead of the journal
        ({"version": 1}, "does not hold"),  # another event than the one it folded last
        ({"spans": 999}, "handed out 999 spans"),  # past what live pushes claimed
    ],
    ids=["corrupt", "other-run", "ahead", "moved", "past-the-claims"],
)
def test_a_stored_fold_that_does_not_check_out_is_rebuilt_from_the_events(
    owner,
    live,  # noqa: F811
    spoil,
    why,
):
    run_id = runs.start_run("repo-fix", "first-flight", by="owner")
    step_twice(run_id)
    assert trace_tasks.push_live(run_id) == "pushed"
    step_twice(run_id)
    TraceFold.objects.filter(run_id=run_id).update(**spoil)
    cursor = journal_traces.ledger(run_id).cursor
    walked = trace_fold.advance(run_id, journal_traces.options(), cursor)
    assert walked.source.startswith("rebuilt") and why in walked.source
    assert walked.first == 0  # from the journal's start
    assert trace_tasks.push_live(run_id) == "pushed"
    # What went live is still the full export's first spans, each once.
    assert pushed(live) == full_export(run_id)
    row = TraceFold.objects.get(run_id=run_id)
    assert row.spans == len(received(live))  # stored again, sound
    step_twice(run_id)
    assert trace_fold.advance(run_id, journal_traces.options(), row.spans).source == "stored"
