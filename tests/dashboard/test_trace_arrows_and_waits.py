"""The trace shows how agents talked and waited: messages as arrows from the sender's lane to
the recipient's, specialists' hand-offs and reports, deadlines that passed with the wait they
ended, and a run stopped for a person."""

from __future__ import annotations

import io

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import Conflict
from journal_store.transfer import import_journal
from runtime import flat, streams
from runtime.events import TaskEscalated, TeamFinished, TeamStarted
from services import forks, letters, review, runs
from services.control import Control
from tests.dashboard.conftest import drive, run_of

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("recorded_runs")]


def trace_tab(client, run_id: str):
    page = client.get(f"/runs/{run_id}/?tab=trace")
    assert page.status_code == 200
    return page


def test_a_first_flights_messages_are_arrows_between_lanes(as_owner):
    run_id = run_of("first-flight")
    page = trace_tab(as_owner, run_id)
    arrows = page.context["drawing"]["arrows"]
    assert [a["label"].split(" at ")[0] for a in arrows] == [
        "REQUEST operator → orchestrator (m-001)",
        "REQUEST orchestrator → coder (m-002)",
        "DONE coder → orchestrator (m-003)",
        "REQUEST orchestrator → reviewer (m-004)",
        "ACCEPT reviewer → orchestrator (m-005)",
        "REQUEST orchestrator → tester (m-006)",
        "DONE tester → orchestrator (m-007)",
    ]
    lanes = {lane["name"]: lane["y"] for lane in page.context["drawing"]["lanes"]}
    first = arrows[0]
    assert first["y1"] == lanes["operator"] + 22 and first["y2"] == lanes["orchestrator"] + 22
    assert all(a["x2"] >= a["x1"] for a in arrows)  # delivered after it was sent
    html = page.content.decode()
    assert html.count('class="trace-arrow" marker-end="url(#trace-arrowhead)"') == 7


def test_a_deadline_that_passed_is_drawn_with_the_wait_it_ended(as_owner):
    run_id = run_of("silent-dropout")
    page = trace_tab(as_owner, run_id)
    marks = page.context["drawing"]["marks"]
    deadlines = [m for m in marks if m["kind"] == "deadline"]
    assert len(deadlines) == 2  # the first REQUEST's deadline, and the one asked again
    assert deadlines[0]["label"].startswith("deadline passed: no reply from reviewer to m-004")
    assert deadlines[0]["width"] > 0  # the wait, from the REQUEST to the deadline
    lanes = {lane["name"]: lane["y"] for lane in page.context["drawing"]["lanes"]}
    assert deadlines[0]["y"] == lanes["reviewer"] + 2
    escalated = [m for m in marks if m["kind"] == "person"]
    assert len(escalated) == 1 and escalated[0]["label"].startswith(
        "escalated, waiting for a person"
    )
    assert 'class="trace-mark deadline"' in page.content.decode()


def test_a_run_stopped_by_a_person_shows_it_waits_for_one(as_owner):
    run_id = runs.start_run("support-triage", None, by="owner")
    runs.interrupt(run_id, "owner", "wrong ticket")
    assert drive(run_id) == "interrupted"
    marks = trace_tab(as_owner, run_id).context["drawing"]["marks"]
    assert [m["kind"] for m in marks] == ["person"]
    assert marks[0]["label"].startswith("stopped by owner, waiting for a person to resume it")


def test_a_triage_run_has_a_lane_per_specialist_with_hand_offs_and_reports(as_owner, fly_team):
    flown = fly_team("broken-policy", team="support-triage")
    own = [raw for raw in flown.path.read_text().splitlines() if '"stream":"effect-' not in raw]
    data = ("\n".join(own) + "\n").encode()
    import_journal(io.BytesIO(data), name=flown.path.name, size=len(data))
    projection.catch_up()
    page = trace_tab(as_owner, flown.run_id)
    drawing = page.context["drawing"]
    lanes = [lane["name"] for lane in drawing["lanes"]]
    assert {"kb-worker", "orders-worker", "policy-worker"} <= set(lanes)
    labels = [a["label"].split(" at ")[0] for a in drawing["arrows"]]
    for worker in ("orders-worker", "kb-worker", "policy-worker"):
        assert f"HAND-OFF run → {worker}" in labels
    assert sum(label.startswith("REPORT ") for label in labels) == 3
    bars = {(b["label"].split(",")[0]) for b in drawing["bars"]}
    assert "kb-worker model call" in bars and "orders-worker model call" in bars


def test_a_reply_overdue_is_drawn_in_the_silent_agents_lane(as_owner):
    run_id = run_of("silent-reviewer")
    drawing = trace_tab(as_owner, run_id).context["drawing"]
    overdue = [m for m in drawing["marks"] if m["label"].startswith("reply overdue")]
    assert overdue, [m["label"] for m in drawing["marks"]]
    assert overdue[0]["label"].startswith("reply overdue: reviewer owed a reply to m-004 after")
    lanes = {lane["name"]: lane["y"] for lane in drawing["lanes"]}
    assert overdue[0]["y"] == lanes["reviewer"] + 2 and overdue[0]["width"] > 0


def test_an_escalation_nobody_is_asked_to_decide_is_drawn_as_such(as_owner):
    """A run that does not park ends escalated with no dead letter: no person is asked, so the
    tab draws no wait (the OTLP trace has none either), only the escalation, at its time."""
    run_id, t = "r-escalated-alone", 1_796_000_000.0
    events = [
        TeamStarted(t=t, run_id=run_id, team="solo", scenario="s", task="fix it"),
        TaskEscalated(t=t + 1, run_id=run_id, task_id="T1", reason="the model failed"),
        TeamFinished(t=t + 1, run_id=run_id, status="escalated", reason="escalated"),
    ]
    data = "".join(
        flat.dumps(e, streams.journal(run_id), n) + "\n" for n, e in enumerate(events, 1)
    ).encode()
    import_journal(io.BytesIO(data), name="escalated.jsonl", size=len(data))
    projection.catch_up()
    page = trace_tab(as_owner, run_id)
    [escalated] = page.context["drawing"]["marks"]
    assert escalated["kind"] == "escalated" and escalated["width"] == 0
    assert escalated["label"].startswith(
        "escalated, nobody is asked to decide (no dead letter follows): the model failed"
    )
    html = page.content.decode()
    assert '<g class="trace-mark escalated">' in html
    assert "escalated, nobody asked to decide" in html  # the legend says what the mark is


def test_a_conflict_parked_for_a_person_is_drawn_until_its_decision(as_owner):
    """The conflict and its decision are on the conflict's own stream, which the trace did not
    read: a desk run that waited for a reviewer showed no wait at all."""
    run_id = runs.start_run("support-desk", "lost-update", by="owner", desk={"order_id": "T-1"})
    assert drive(run_id) == "escalated"
    [conflict] = Conflict.objects.filter(run_id=run_id)
    [waiting] = trace_tab(as_owner, run_id).context["drawing"]["marks"]
    assert waiting["kind"] == "person"
    assert waiting["label"].startswith(
        f"waiting for a person: conflict {conflict.conflict_id} on order:T-1"
    )
    assert "(no decision in the journal)" in waiting["label"]

    review.resolve(conflict.conflict_id, review.NONE, "rosa", "ask the customer")
    [decided] = trace_tab(as_owner, run_id).context["drawing"]["marks"]
    assert decided["label"].startswith(f"waiting for a person: conflict {conflict.conflict_id}")
    assert "no decision" not in decided["label"] and decided["width"] > 0


def test_a_dead_letter_of_the_control_stream_is_drawn_as_a_wait_for_a_person(as_owner):
    run_id = run_of("first-flight", steps=1)
    letter = Control(run_id).dead_letter("a step kept dying", 3, "Boom: no")
    marks = trace_tab(as_owner, run_id).context["drawing"]["marks"]
    [waiting] = [m for m in marks if m["kind"] == "person"]
    assert waiting["label"].startswith("waiting for a person: dead letter (a step kept dying)")
    letters.decide_letter(letter.letter_id, "discard", "rosa", "not worth it")
    marks = trace_tab(as_owner, run_id).context["drawing"]["marks"]
    [decided] = [m for m in marks if m["kind"] == "person"]
    assert "no decision" not in decided["label"]


def test_a_forks_trace_marks_the_gap_before_it_went_on(as_owner):
    """A fork's copied events keep its parent's times, so its agents' bands ran across the
    time between the parent's event and the fork, as if they had worked through it."""
    parent = run_of("first-flight")
    records = DjangoJournal().read(f"run-{parent}")
    at = next(r for r in records if r.event.kind == "ToolReturned")
    child = forks.fork_run(parent, at.position, forks.Changes(), "owner")
    assert drive(child) != "stepped"
    page = trace_tab(as_owner, child)
    [fork] = [m for m in page.context["drawing"]["marks"] if m["kind"] == "fork"]
    assert fork["label"].startswith(
        f"forked from {parent} after its event #{at.version}: what comes before is the parent's"
    )
    # The gap runs from the last copied event to the fork: the run's lane, left of the mark.
    copied = next(r for r in DjangoJournal().read(f"run-{child}") if r.version == at.version)
    assert copied.event.t == at.event.t
    assert fork["since"] <= fork["x"]
    html = page.content.decode()
    assert '<g class="trace-mark fork">' in html
    assert "before the fork: the parent's events, at the parent's times" in html
    # A run that is no fork has neither.
    html = trace_tab(as_owner, parent).content.decode()
    assert "trace-mark fork" not in html and "before the fork" not in html
