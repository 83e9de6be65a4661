"""A live fold stored between pushes and stepped with the new records only hands out, span for
span, what a fold of the whole journal hands out: at every prefix, through a dump and a load
after every record; and a stored text that is not such a state is refused, never trusted."""

from __future__ import annotations

import json

import pytest

from runtime import flight
from runtime.journal import Recorded
from runtime.jsonl import JsonlJournal
from runtime.otel import TraceOptions
from runtime.otel.encode import folded
from runtime.otel.fold_state import FORMAT, FoldStateError, LiveFold, dump, load
from runtime.otel.protobuf import span_serialized
from runtime.otel.text import span_text

SCENARIOS = [
    ("repo-fix", "flaky-tool"),
    ("repo-fix", "first-flight"),
    ("support-triage", "broken-policy"),  # specialists on streams of their own
]


@pytest.fixture(params=SCENARIOS, ids=[s for _, s in SCENARIOS])
def records(request, fly_team):
    team, scenario = request.param
    flown = fly_team(scenario, team=team)
    return flight.run_records(JsonlJournal(flown.path), flown.run_id)


def run_of(records) -> str:
    return records[0].stream.removeprefix("run-")


def test_a_fold_stored_after_every_record_hands_out_the_whole_trace_s_spans_in_order(records):
    options = TraceOptions()
    whole = [(trace.trace_id, span) for trace, span in folded(records, options)]
    texts = [span_text(span, trace_id) for trace_id, span in whole]
    run_id = run_of(records)
    fold = LiveFold.start(run_id, options)
    pushed: list[str] = []
    for end, rec in enumerate(records, 1):
        new = fold.step([rec])
        pushed.extend(span_text(span, fold.trace.trace_id) for span in new)
        # What a full fold of this prefix hands out: the same, span for span.
        assert pushed == [
            span_text(s, t.trace_id) for t, s in folded(records[:end], options, finish=False)
        ], f"after {end} records"
        state = dump(fold.trace)
        fold = LiveFold(load(state, run_id, options), fold.spans)
        assert dump(fold.trace) == state  # a load gives back what was dumped
    assert fold.spans == len(pushed)
    assert pushed == texts[: len(pushed)]
    assert len(pushed) == len(texts) - 1  # all but the run's own span, which waits for the end
    trace_id = bytes.fromhex(whole[0][0])
    # The protobuf of the same spans is the same bytes.
    again = LiveFold.start(run_id, options)
    spans = again.step(records)
    assert [span_serialized(s, trace_id) for s in spans] == [
        span_serialized(s, trace_id) for _, s in whole[: len(spans)]
    ]


def test_a_fold_stepped_in_uneven_batches_with_records_of_other_streams_gives_the_same(records):
    options = TraceOptions(content_chars=50)
    run_id = run_of(records)
    whole = [span_text(s, t.trace_id) for t, s in folded(records, options, finish=False)]
    # Records of the run's other streams (a read by run id holds them) are skipped: here, the
    # run's last event (it would end the agents' spans) as if on its traces stream.
    noise = [Recorded(f"traces-{run_id}", 1, 0, records[-1].event)]
    fold = LiveFold.start(run_id, options)
    pushed = []
    at = 0
    for size in [1, 7, 2, 30, 3, 500]:
        batch = records[at : at + size] + noise
        at += size
        pushed += [span_text(s, fold.trace.trace_id) for s in fold.step(batch)]
        fold = LiveFold(load(dump(fold.trace), run_id, options), fold.spans)
    assert pushed == whole


def test_a_live_fold_keeps_no_message_events_and_cannot_be_finished(fly_team):
    flown = fly_team("broken-policy", team="support-triage")
    records = flight.run_records(JsonlJournal(flown.path), flown.run_id)
    fold = LiveFold.start(flown.run_id, TraceOptions())
    fold.step(records)
    assert fold.trace.root is not None and fold.trace.root.events == []
    with pytest.raises(RuntimeError, match="never finished"):
        fold.trace.finish()


@pytest.mark.parametrize(
    "spoil",
    [
        lambda s: s[:-5],  # cut short
        lambda s: "[]",
        lambda s: s.replace(f'"format":{FORMAT}', '"format":99'),
        lambda s: json.dumps({**json.loads(s), "agents": [["x", {"span": [1, 2]}]]}),
        lambda s: json.dumps({**json.loads(s), "now": "soon"}),
    ],
    ids=["cut", "not-an-object", "other-format", "bad-agent", "bad-clock"],
)
def test_a_corrupt_state_is_refused(fly_team, spoil):
    flown = fly_team("flaky-tool")
    records = flight.run_records(JsonlJournal(flown.path), flown.run_id)
    fold = LiveFold.start(flown.run_id, TraceOptions())
    fold.step(records[: len(records) // 2])
    state = dump(fold.trace)
    with pytest.raises(FoldStateError):
        load(spoil(state), flown.run_id, TraceOptions())


def test_a_state_of_another_run_or_other_options_is_refused(fly_team):
    flown = fly_team("flaky-tool")
    records = flight.run_records(JsonlJournal(flown.path), flown.run_id)
    fold = LiveFold.start(flown.run_id, TraceOptions())
    fold.step(records[:10])
    state = dump(fold.trace)
    with pytest.raises(FoldStateError, match="not 'r-other'"):
        load(state, "r-other", TraceOptions())
    with pytest.raises(FoldStateError, match="other trace options"):
        load(state, flown.run_id, TraceOptions(content=False))
