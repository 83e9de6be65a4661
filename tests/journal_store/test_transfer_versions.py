"""A run moved between two stores by its export, with the event versions and kinds added since
the last review of import (usage marked estimated, a budget's ledger, a refusal's call, a
trace's batches): the read models come back the same, and a file that carries what only this
store may say (pushes of a trace, but where an older export put the run's own) or figures no
run records is refused whole."""

from __future__ import annotations

import io
import json

import pytest
from django.apps import apps
from django.db import connection

from journal_store import pending_pushes, projection, traces
from journal_store.journal import DjangoJournal
from journal_store.transfer import ImportRefused, export, import_journal
from runtime import events as ev
from runtime.otel.encode import build

pytestmark = pytest.mark.django_db

RUN = "r-moved"
ENDPOINT = "http://collector:4318"


def run_events(run_id: str = RUN) -> list[ev.Event]:
    r = {"run_id": run_id, "t": 1_700_000_000.0}
    calls = {"agent": "coder", "task_id": "T1", "turn": 0}
    return [
        ev.TeamStarted(**r, team="solo", scenario="solo-fix", task="t", config={"allowance": 1000}),
        ev.RunStarted(**r, agent="coder", task="t"),
        ev.ModelCalled(**r, **calls),
        ev.ModelResponded(
            **r,
            **calls,
            text="",
            tool_calls=[{"id": "c1", "name": "apply", "args": {}}],
            usage={"total": 120, "prompt": 100, "completion": 20, "estimated": "missing"},
            served={"model": "m", "asked": "m"},
        ),
        ev.BudgetDebited(**r, **calls, amount=120),
        ev.MutationRefused(
            **r,
            **calls,
            what="merge",
            actor="coder",
            capability="merge",
            check="intent",
            reason="superseded",
            call=f"run-{run_id}@4",
        ),
        ev.ModelCalled(**r, **calls),
        ev.ModelFailed(
            **r,
            **calls,
            error={"type": "ModelProtocolError", "message": "cut off"},
            usage={"total": 900, "prompt": 800, "completion": 100},
        ),
        ev.BudgetDebited(**r, **calls, amount=900),
        ev.BudgetExhausted(**r, agent="coder", spent=1020, allowance=1000, ledger="run", held=50),
        ev.TeamFinished(**r, status="halted", reason="budget"),
    ]


def trace_pushes(run_id: str = RUN) -> list[ev.Event]:
    r = {"run_id": run_id}
    return [
        ev.TracePushQueued(**r, endpoint=ENDPOINT),
        ev.TraceBatchPushed(
            **r, endpoint=ENDPOINT, first=0, count=5, spans=5, bytes=10, attempts=1, upto=11
        ),
    ]


def tables() -> list[str]:
    names = {m._meta.db_table for m in apps.get_app_config("journal_store").get_models()}
    return sorted(names | {"search_event"})


def counts() -> dict[str, int]:
    with connection.cursor() as cursor:
        found = {}
        for table in tables():
            cursor.execute(f"SELECT COUNT(*) FROM {table}")
            found[table] = cursor.fetchone()[0]
        return found


def read_models() -> dict[str, list]:
    """Every read model's rows but the journal's own, without their surrogate keys."""
    skip = {"journal_event", "projection_checkpoint", "minutes_cache", "search_event"}
    found = {}
    for model in apps.get_app_config("journal_store").get_models():
        if model._meta.db_table in skip:
            continue
        fields = [f.attname for f in model._meta.fields if f.attname != "id"]
        found[model._meta.db_table] = sorted(
            map(repr, map(unmarked, model.objects.values_list(*fields)))
        )
    return found


def unmarked(row: tuple) -> tuple:
    """A row without the new store's note of the import (the summary's fold says "imported")."""
    if row[1:2] != ("summary",):
        return row
    state = json.loads(row[2])
    assert state.pop("imported", None) is None or state["events"]
    return (*row[:2], state, *row[3:])


def emptied() -> None:
    """The store as a fresh install has it."""
    with connection.cursor() as cursor:
        for table in tables():
            cursor.execute(f"DELETE FROM {table}")
        # positions count from 1 again, as in a new database
        if connection.vendor == "sqlite":
            cursor.execute("DELETE FROM sqlite_sequence")
        else:
            cursor.execute(
                "SELECT setval(pg_get_serial_sequence('journal_event', 'position'), 1, false)"
            )


def test_a_run_moved_by_its_export_reads_the_same_in_the_new_store():
    emptied()  # (positions from 1 in both stores: an earlier test's may have moved them)
    journal = DjangoJournal()
    journal.append(f"run-{RUN}", run_events(), 0)
    journal.append(f"traces-{RUN}", trace_pushes(), 0)
    projection.catch_up()
    before, spans = read_models(), trace_spans()
    assert spans  # (a trace of the run's calls, its refusal and its halt)
    out = io.StringIO()
    export(RUN, out)
    emptied()

    import_journal(io.BytesIO(out.getvalue().encode()))
    projection.catch_up()
    after = read_models()
    summary = before.pop("projection_run"), after.pop("projection_run")
    # (the pushes are the source's: the new store has none, nor waits for any)
    assert before.pop("projection_pending_push") and not after.pop("projection_pending_push")
    assert after == before
    assert summary[0] == summary[1]
    assert trace_spans() == spans
    assert traces.state(RUN) is None
    assert pending_pushes.count(0) == 0


def trace_spans() -> list[tuple]:
    """The run's trace as the run page and a push read it, span by span."""
    trace = build(traces.records(RUN), traces.options())
    assert trace is not None
    return [
        (s.span_id, s.parent_id, s.name, s.start, s.end, s.attributes, s.error, s.events)
        for s in trace.spans
    ]


def line(event: ev.Event, stream: str, version: int, **changes) -> str:
    data = json.loads(ev.payload_json(event))
    flat = {"kind": event.kind, "v": event.v, "id": event.id, "run_id": event.run_id}
    flat |= {k: getattr(event, k) for k in ("agent", "turn", "task_id") if getattr(event, k)}
    flat |= data | {"stream": stream, "version": version}
    for key, value in changes.items():
        if value is None:
            flat.pop(key, None)
        else:
            flat[key] = value
    return json.dumps(flat)


def file_with(bad: str) -> bytes:
    """The run's own lines, then `bad` as the last of its journal."""
    events = run_events()
    lines = [line(e, f"run-{RUN}", i) for i, e in enumerate(events[:-1], 1)]
    return ("\n".join([*lines, bad]) + "\n").encode()


def refused(data: bytes) -> str:
    before = counts()
    with pytest.raises(ImportRefused) as info:
        import_journal(io.BytesIO(data))
    assert counts() == before  # nothing written, in any table
    return str(info.value)


LAST = run_events()[-2]  # the BudgetExhausted, as line 11 of file_with's file
RESPONDED = run_events()[3]
FAILED = run_events()[7]
REFUSAL = run_events()[5]
J = f"run-{RUN}"
USAGE = {"total": 120, "prompt": 100, "completion": 20}


@pytest.mark.parametrize(
    "bad, said",
    [
        (line(RESPONDED, J, 11, v=4), "line 11: ModelResponded v4 was written by a newer Minutes"),
        (line(RESPONDED, J, 11, mood="happy"), "line 11: ModelResponded: unexpected field 'mood'"),
        (
            line(RESPONDED, J, 11, usage={**USAGE, "total": -1}),
            "line 11: ModelResponded: field 'usage.total'",
        ),
        (
            line(RESPONDED, J, 11, usage={**USAGE, "total": 2**50}),
            "line 11: field 'usage.total': 1125899906842624 is more than a run can count",
        ),
        (
            line(RESPONDED, J, 11, usage={**USAGE, "prompt": 1.5}),
            "line 11: ModelResponded: field 'usage.prompt'",
        ),
        (
            line(RESPONDED, J, 11, usage={**USAGE, "estimated": "yes"}),
            "line 11: ModelResponded: field 'usage.estimated'",
        ),
        (line(RESPONDED, J, 11, text="x" * 3000), "line 11: longer than the limit of 2,000 bytes"),
        (
            line(RESPONDED, J, 11, text="DEEP").replace('"DEEP"', "[" * 70 + "]" * 70),
            "line 11: nested deeper than the limit",
        ),
        (line(LAST, J, 10), "line 11: broken version sequence in stream 'run-r-moved'"),
    ],
)
def test_a_hostile_line_is_refused_naming_it_and_writes_nothing(settings, bad, said):
    settings.IMPORT_MAX_LINE_BYTES = 2000
    assert said in refused(file_with(bad))


ELSEWHERE = "holds no pushes of a trace, and {} records one, to the collector of the store"
PLACE = "a push of a run's trace stands only on that run's own traces-<run> stream"
NOT_ITS_OWN = "is not the traces stream of the line's run 'r-moved' (traces-r-moved)"
ONLY_PUSHES = "which holds only the pushes of a run's trace (TraceBatchPushed, TracePushFailed"


@pytest.mark.parametrize(
    "bad, said",
    [
        (
            line(trace_pushes()[0], J, 11),
            f"line 11: field 'stream': 'run-r-moved' {ELSEWHERE.format('TracePushQueued')}",
        ),
        (line(trace_pushes()[1], J, 11), ELSEWHERE.format("TraceBatchPushed")),
        (line(trace_pushes()[1], J, 11), PLACE),
        # on a traces stream, but another run's than the line's
        (line(trace_pushes()[0], "traces-r-other", 1), f"'traces-r-other' {NOT_ITS_OWN}"),
        (line(trace_pushes()[0], f"traces-{RUN}-2", 1), f"'traces-r-moved-2' {NOT_ITS_OWN}"),
        # another kind on the run's own traces stream: the stream is the pushes'
        (
            line(ev.BudgetDebited(run_id=RUN, amount=1), f"traces-{RUN}", 1),
            f"field 'kind': BudgetDebited on stream 'traces-r-moved', {ONLY_PUSHES}",
        ),
        # a run no import may make, on its own traces stream
        (
            line(trace_pushes("compare")[0], "traces-compare", 1),
            "field 'run_id': 'compare' is not a run id",
        ),
    ],
)
def test_a_line_of_trace_pushes_no_export_wrote_is_refused(bad, said):
    """A push is the exporting store's, to its collector. An export from before 2026-12-03
    carried the run's own, on its traces stream, which an import leaves out
    (test_importing_an_old_export.py); a line anywhere else is none an export wrote: imported,
    the page said "Trace pushed" of a store that never pushed it, a queued one counted among
    this store's waiting pushes, and the spans another collector took were left out of this
    store's push."""
    assert "line 11: " in (problem := refused(file_with(bad))) and said in problem


def test_the_pushes_of_another_run_on_its_own_traces_stream_are_left_out():
    """As an export of two runs before 2026-12-03 carried them: the other run's pushes are
    no more this store's than the run's own, and that run is not made by them."""
    before = counts()
    data = file_with(line(trace_pushes("r-other")[1], "traces-r-other", 1))
    report = import_journal(io.BytesIO(data))
    assert report.run_ids == [RUN] and report.added == report.events == 10
    assert report.left_out == {"traces-r-other": 1}
    assert report.left_out_said == [
        "left out 1 line of the run's trace pushes to the exporting store's collector "
        "(traces-r-other): this store pushes the run's trace itself"
    ]
    after = counts()
    assert after["journal_event"] == before["journal_event"] + 11  # and the import's note
    assert not DjangoJournal().read_prefix("traces-") and traces.state("r-other") is None


def test_a_file_valid_to_its_torn_last_line_writes_nothing_unless_asked():
    data = file_with(line(LAST, J, 11))
    torn = data[: -len(b"held: 50}\n")]
    assert "line 11: torn final line" in refused(torn)
    report = import_journal(io.BytesIO(torn), allow_torn=True)
    assert report.added == 10 and report.torn


@pytest.mark.parametrize(
    "bad, said",
    [
        (
            line(FAILED, J, 11, usage={**USAGE, "total": 5}),
            "line 11: field 'usage.total': 5 is less than its prompt and completion together (120)",
        ),
        (
            line(RESPONDED, J, 11, usage={**USAGE, "total": 119, "estimated": "missing"}),
            "line 11: field 'usage.total': 119 is less than its prompt and completion together",
        ),
        (line(LAST, J, 11, held=-50), "line 11: field 'held': -50 tokens, less than none"),
        (line(LAST, J, 11, spent=-1), "line 11: field 'spent': -1 tokens, less than none"),
        (line(LAST, J, 11, allowance=-1, held=0), "line 11: field 'allowance': -1 tokens"),
        (
            line(LAST, J, 11, held=2000),
            "line 11: field 'held': 2000 is more than its allowance (1000)",
        ),
    ],
)
def test_figures_no_run_records_are_refused(bad, said):
    """The bill and the run page showed them as they stood: a call of 5 tokens whose prompt
    was 100, a run's allowance "less -50 kept for verification"."""
    assert said in refused(file_with(bad))


def test_a_usage_above_its_parts_is_taken_as_recorded():
    """A vendor may count tokens its parts do not name (Usage): such a total stands."""
    data = file_with(line(RESPONDED, J, 11, usage={**USAGE, "total": 130}))
    assert import_journal(io.BytesIO(data)).added == 11


@pytest.mark.parametrize("call", ["run-r-other@4", "run-r-moved", "run-r-moved@x", "@4"])
def test_a_refusal_naming_another_runs_call_is_refused(call):
    said = f"line 11: field 'call': {call!r} is no call of run 'r-moved'"
    assert said in refused(file_with(line(REFUSAL, J, 11, call=call)))


def test_a_renamed_runs_refusal_names_its_own_call():
    data = file_with(line(LAST, J, 11))
    import_journal(io.BytesIO(data), run_id="r-copy")
    [refusal] = [
        r.event
        for r in DjangoJournal().read("run-r-copy")
        if isinstance(r.event, ev.MutationRefused)
    ]
    assert refusal.call == "run-r-copy@4"
