"""The dashboard's OTLP trace (the download and the push to a collector) carries a run's waits
for a person, as the run page's trace tab draws them: a conflict the run parked, from its
parking to the reviewer's decision; a dead letter of the control stream, to its discard. They
are on streams of their own (conflict-<id>, control-<run>), which the trace did not read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.urls import reverse

from journal_store import traces as journal_traces
from journal_store.journal import DjangoJournal
from journal_store.models import Conflict
from journal_store.transfer import export_lines
from runtime import flight, streams
from runtime.events import (
    ConflictParked,
    ConflictResolved,
    DeadLetterDiscarded,
    DeadLettered,
    DeadLetterRetried,
    TaskEscalated,
)
from runtime.otel import nanos
from services import letters, review, runs
from tasks import traces as trace_tasks
from tests.dashboard.conftest import drive, run_of
from tests.dashboard.test_trace_push import collector  # noqa: F401  (a fixture)

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[2]


def attrs(span: dict) -> dict:
    return {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}


def test_the_download_has_the_wait_for_the_reviewer_s_decision_on_a_parked_conflict(
    as_owner, tmp_path
):
    run_id = runs.start_run("support-desk", "lost-update", by="owner", desk={"order_id": "T-1"})
    assert drive(run_id) == "escalated"
    [conflict] = Conflict.objects.filter(run_id=run_id)
    review.resolve(conflict.conflict_id, review.NONE, "rosa", "ask the customer")
    parked, decided = [r.event for r in DjangoJournal().read(f"conflict-{conflict.conflict_id}")]
    assert isinstance(parked, ConflictParked) and isinstance(decided, ConflictResolved)

    body = b"".join(as_owner.get(reverse("export_otlp", args=[run_id])).streaming_content)
    spans = json.loads(body)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    [root] = [s for s in spans if "parentSpanId" not in s]
    [wait] = [s for s in spans if s["name"] == "wait for a person: claim conflict"]
    assert wait["parentSpanId"] == root["spanId"]
    assert (int(wait["startTimeUnixNano"]), int(wait["endTimeUnixNano"])) == (
        nanos(parked.t),
        nanos(decided.t),
    )
    a = attrs(wait)
    assert a["minutes.conflict.id"] == conflict.conflict_id
    assert a["minutes.conflict.subject"] == "order:T-1"
    assert (a["minutes.decision"], a["minutes.decided_by"]) == ("none", "rosa")
    assert a["minutes.decision.reason"] == "ask the customer"
    assert int(root["endTimeUnixNano"]) >= nanos(decided.t)  # the run's span holds its wait
    # The page's trace tab reads the same wait.
    assert [r.event for r in journal_traces.waits_for_people(run_id)] == [parked, decided]

    # The run's JSONL export holds the conflict's stream: the command line's trace of the file
    # is the download, byte for byte.
    path = tmp_path / f"{run_id}.jsonl"
    path.write_text("".join(export_lines(run_id)))
    printed = subprocess.run(
        [sys.executable, "-m", "runtime", "otlp", str(path), "--run", run_id],
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == body + b"\n"


def test_the_push_of_a_run_ended_by_a_discarded_dead_letter_has_its_wait(
    owner,
    settings,
    monkeypatch,
    collector,  # noqa: F811
):
    from services import steps
    from services.control import Control

    run_id = runs.start_run("repo-fix", "first-flight", by="owner")

    def broken(*args, **kwargs):
        raise RuntimeError("the harness hit a bug")

    monkeypatch.setattr(flight, "drive", broken)
    for _ in range(settings.MAX_STEP_ATTEMPTS):
        assert steps.drive_step(run_id, "test") == "failed-step"
    assert steps.drive_step(run_id, "test") == "dead-lettered"
    letter = Control(run_id).open_letter()
    assert letter is not None
    letters.decide_letter(letter.letter_id, "discard", "owner", "not worth another try")
    control = [r.event for r in DjangoJournal().read(streams.control(run_id))]
    [lettered] = [e for e in control if isinstance(e, DeadLettered)]
    [discarded] = [e for e in control if isinstance(e, DeadLetterDiscarded)]

    assert trace_tasks.push(run_id) == "pushed"
    [(_path, _headers, parsed)] = collector.got
    pushed = list(parsed.resource_spans[0].scope_spans[0].spans)
    [wait] = [s for s in pushed if s.name == "wait for a person: dead letter"]
    [root] = [s for s in pushed if not s.parent_span_id]
    assert wait.parent_span_id == root.span_id
    assert (wait.start_time_unix_nano, wait.end_time_unix_nano) == (
        nanos(lettered.t),
        nanos(discarded.t),
    )
    a = {kv.key: kv.value for kv in wait.attributes}
    assert a["minutes.dead_letter.id"].string_value == letter.letter_id
    assert a["minutes.dead_letter.stream"].string_value == "control"
    assert a["minutes.decision"].string_value == "discard"
    assert a["minutes.decided_by"].string_value == "owner"
    assert a["minutes.decision.reason"].string_value == "not worth another try"


def test_a_harness_dead_letter_waits_from_its_escalation_to_the_retry(as_owner):
    """The reviewer stays silent: the task is escalated and parked; retried, it is parked
    again, and that second wait is still open where the journal ends."""
    run_id = run_of("silent-dropout")
    assert runs.status_of(run_id) == "dead-lettered"
    own = [r.event for r in DjangoJournal().read(streams.journal(run_id))]
    [escalated] = [e for e in own if isinstance(e, TaskEscalated)]
    [lettered] = [e for e in own if isinstance(e, DeadLettered)]
    letters.decide_letter(lettered.letter_id, "retry", "rosa", "try once more")
    drive(run_id)
    own = [r.event for r in DjangoJournal().read(streams.journal(run_id))]
    [retried] = [e for e in own if isinstance(e, DeadLetterRetried)]
    again = [e for e in own if isinstance(e, TaskEscalated)][1]

    body = b"".join(as_owner.get(reverse("export_otlp", args=[run_id])).streaming_content)
    spans = json.loads(body)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    waits = {
        attrs(s)["minutes.dead_letter.id"]: s
        for s in spans
        if s["name"] == "wait for a person: dead letter"
    }
    first = waits.pop(lettered.letter_id)
    assert (int(first["startTimeUnixNano"]), int(first["endTimeUnixNano"])) == (
        nanos(escalated.t),
        nanos(retried.t),
    )
    a = attrs(first)
    assert (a["minutes.dead_letter.stream"], a["minutes.task_id"]) == ("run", lettered.task_id)
    assert (a["minutes.decision"], a["minutes.decided_by"]) == ("retry", "rosa")
    assert a["minutes.wait.decided"] is True
    [second] = waits.values()
    assert attrs(second)["minutes.wait.decided"] is False
    assert (int(second["startTimeUnixNano"]), int(second["endTimeUnixNano"])) == (
        nanos(again.t),
        max(nanos(e.t) for e in own),  # the journal's last event: nobody has decided yet
    )
