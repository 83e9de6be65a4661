"""The coordination metrics (docs/metrics.md) on journals built to have known values, on a
journal that lacks what defines them (null, with the reason), and on the old fixture journals."""

from __future__ import annotations

from pathlib import Path

import pytest

from runtime import events as ev
from runtime import folds, views
from runtime.journal import Recorded
from runtime.jsonl import JsonlJournal
from runtime.metrics import NAMES, Metrics, metrics

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "journals"


def recorded(events: list[ev.Event]) -> list[Recorded]:
    return [Recorded("run-r-m", i + 1, i + 1, e) for i, e in enumerate(events)]


def said(sender, recipient, task, performative, message_id, t):
    return ev.MessageSent(
        sender=sender,
        recipient=recipient,
        task_id=task,
        performative=performative,
        message_id=message_id,
        t=t,
    )


def got(recipient, task, message_id, t, duplicate=False):
    return ev.MessageDelivered(
        recipient=recipient, task_id=task, message_id=message_id, t=t, duplicate=duplicate
    )


def answered(agent, tokens, called, responded, task="T1"):
    return [
        ev.ModelCalled(agent=agent, task_id=task, t=called),
        ev.ModelResponded(
            agent=agent,
            task_id=task,
            text=None,
            tool_calls=None,
            usage=ev.Usage(total=tokens),
            t=responded,
        ),
    ]


def tool(agent, name, call_id, began, ended, task="T1", **args):
    return [
        ev.ToolDispatched(
            agent=agent, task_id=task, tool=name, call_id=call_id, args=args, t=began
        ),
        ev.ToolReturned(agent=agent, task_id=task, tool=name, call_id=call_id, result={}, t=ended),
    ]


def claim(n, t):
    return ev.ClaimAsserted(
        claim_id=f"cl-{n}",
        subject="order:1",
        predicate="status",
        value=f"v{n}",
        based_on=1,
        source="model",
        by=f"agent-{n}",
        t=t,
    )


def troubled_team() -> list[ev.Event]:
    """A repo-fix run that coordinates badly, each trouble once, with round numbers."""
    return [
        ev.TeamStarted(team="repo-fix", scenario="built", task="fix", t=90),
        *answered("orchestrator", 100, 99, 100),
        said("orchestrator", "coder", "T1", "request", "m1", 100),  # hand-off 1
        got("coder", "T1", "m1", 101),
        said("orchestrator", "coder-b", "T1", "request", "m2", 100),  # hand-off 2, later failed
        got("coder-b", "T1", "m2", 101),
        *answered("coder", 300, 101, 103),
        *tool("coder", "edit_file", "c1", 103, 104, path="a.py"),
        *tool("coder", "write_file", "c2", 104, 105, path="b.py"),
        *answered("coder-b", 100, 101, 102),
        *tool("coder-b", "write_file", "c3", 102, 103, path="a.py"),  # a.py written twice
        *tool("coder", "run_tests", "c4", 105, 107),  # the author checks itself
        ev.DeadlinePassed(awaited="coder-b", request="m2", attempt=1, reason="silent", t=110),
        *answered("reviewer", 50, 110, 111),
        said("reviewer", "orchestrator", "T1", "reject", "m3", 111),
        got("orchestrator", "T1", "m3", 112),
        ev.TaskEscalated(task_id="T1", reason="round cap", cause="reject_cap", t=113),
        said("orchestrator", "coder", "T2", "request", "m4", 114),  # hand-off 3
        said("orchestrator", "coder", "T2", "request", "m5", 115),  # hand-off 4: m4 is stale now
        got("coder", "T2", "m4", 116),  # stale
        got("coder", "T2", "m5", 116),
        got("coder", "T2", "m5", 117, duplicate=True),  # stale
        said("reviewer", "orchestrator", "T2", "accept", "m6", 118),
        got("orchestrator", "T2", "m6", 118),
        ev.WorkerHandedOff(task_id="S1", handoff={"worker_id": "w1"}, t=120),  # hand-off 5
        ev.WorkerTimedOut(worker_id="w1", deadline_seconds=1, elapsed=2, t=122),
        ev.RecoveryRouted(worker_id="w1", reason="timeout", attempt=1, action={}, t=123),
        claim(1, 130),
        claim(2, 130),
        ev.LeaseGranted(resource="order:1", holder="w1", expires=999, t=130),
        ev.LeaseGranted(resource="order:2", holder="w2", expires=999, t=130),
        ev.ConflictParked(
            conflict_id="cf-1",
            subject="order:1",
            predicate="status",
            conflict_type="value",
            claims=[],
            t=200,
        ),
        ev.ConflictResolved(conflict_id="cf-1", by="ada", reason="r", choice="v1", t=260),
        ev.StaleWorkRejected(what="refund", gate="lease", held=1, current=2, reason="r", t=270),
        ev.DeadLettered(letter_id="dl-1", reason="stuck", t=300),
        ev.DeadLetterRetried(letter_id="dl-1", by="ada", t=330),
        ev.SuiteChecked(passed=3, failed=0, ok=True, t=340),
        ev.TeamFinished(status="done", t=341),
    ]


@pytest.fixture(scope="module")
def troubled():
    return metrics(recorded(troubled_team()))


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("duplicate_work_rate", 0.5),  # a.py of {a.py, b.py} was written by two agents
        ("coordination_overhead_ratio", 0.375),  # (orchestrator 100 + reviewer 50) / 400
        ("assignment_handoff_count", 5),  # four REQUESTs and one worker hand-off
        ("ownership_conflict_rate", 0.5),  # a parked conflict and a stale write / 4 claims
        ("stale_message_rate", 0.2857),  # m4 superseded and m5's duplicate, of 7 deliveries
        ("conflict_resolution_latency", 60.0),  # parked at 200, a person resolved it at 260
        ("livelock_rate", 0.5),  # T1 escalated at the REJECT cap, of T1 and T2 reviewed
        ("verification_independence_rate", 0.75),  # the coder's own test run is not independent
        ("handoff_failure_rate", 0.4),  # m2's deadline and w1's timeout, of 5
        ("coordination_cost_per_verified_success", 150),  # coordination tokens, one success
    ],
)
def test_each_metric_has_its_known_value_on_a_journal_built_for_it(troubled, name, value):
    assert troubled[name]["value"] == value
    assert troubled[name]["reason"] is None


def test_the_metrics_say_what_they_were_computed_from(troubled):
    overhead = troubled["coordination_overhead_ratio"]
    assert (overhead["coordination_tokens"], overhead["work_tokens"]) == (150, 400)
    assert overhead["coordinating_agents"] == ["orchestrator", "reviewer"]
    # the coordinators' model time, m1..m5 in transit (m6 was delivered at once), and 90 s
    # waiting for people (the conflict's 60, the dead letter's 30)
    assert overhead["coordination_seconds"] == 1 + 1 + (1 + 1 + 1 + 2 + 1) + 90
    assert overhead["work_seconds"] == 2 + 1 + 1 + 1 + 1 + 2
    latency = troubled["conflict_resolution_latency"]
    assert (latency["resolved"], latency["open"], latency["waiting_for_people_seconds"]) == (
        1,
        0,
        90.0,
    )
    assert troubled["handoff_failure_rate"]["failed"] == 2


def test_deadlocks_and_orphans_are_read_from_requests_in_a_journal_without_their_events(troubled):
    # no wait-for or commitment events: the requests are the waits (none closed a cycle), and
    # the ones an agent took up (ran on) the commitments: here none was taken up
    assert troubled["deadlock_rate"]["value"] == 0.0 and troubled["deadlock_rate"]["waits"] > 0
    orphans = troubled["commitment_orphan_rate"]
    assert orphans["value"] is None and orphans["counted"] == "requests taken up"
    assert orphans["reason"] == (
        "not measurable: no commitment was made and no agent took up a request"
    )


def test_a_journal_lacking_the_events_gets_null_and_why_never_zero():
    lone = metrics(
        recorded(
            [
                ev.TeamStarted(team="solo", scenario="s", task="t"),
                *answered("coder", 80, 1, 2),
                *tool("coder", "read_file", "c1", 2, 3, path="a.py"),
            ]
        )
    )
    expected_null = {
        "duplicate_work_rate": "no agent wrote a file",
        "ownership_conflict_rate": "no claim or lease was journalled",
        "stale_message_rate": "no message was delivered",
        "conflict_resolution_latency": "no conflict was parked for a person",
        "deadlock_rate": "nobody waited for anybody",
        "livelock_rate": "no task was reviewed",
        "verification_independence_rate": "nothing was checked",
        "commitment_orphan_rate": "no commitment was made and no agent took up a request",
        "handoff_failure_rate": "no work was handed off",
        "coordination_cost_per_verified_success": "the run has not finished",
    }
    for name, why in expected_null.items():
        assert lone[name]["value"] is None, name
        assert lone[name]["reason"].startswith("not measurable: " + why), name
    assert lone["assignment_handoff_count"]["value"] == 0  # a count: none is a measurement
    assert lone["coordination_overhead_ratio"]["value"] == 0.0
    assert set(lone) == set(NAMES)


def test_a_failed_run_has_no_cost_per_verified_success():
    failed = metrics(recorded([*answered("coder", 10, 1, 2), ev.TeamFinished(status="failed")]))
    cost = failed["coordination_cost_per_verified_success"]
    assert cost["value"] is None
    assert (
        cost["reason"] == "not measurable: the run ended failed, no verified success to divide by"
    )


def test_duplicate_work_counts_the_files_the_diagnosis_finds():
    records = recorded(troubled_team())
    found = [f["artefact"] for f in views.all_views(records)["findings"] if "artefact" in f]
    assert metrics(records)["duplicate_work_rate"]["shared_files"] == len(found) == 1


def test_the_old_repo_fix_fixture_journal_measures_what_it_can():
    m = metrics(JsonlJournal(FIXTURES / "repo-fix.v1.jsonl").read_all())
    assert m["coordination_overhead_ratio"]["value"] == 0.701  # 340 / 485
    assert m["coordination_overhead_ratio"]["coordinating_agents"] == [
        "operator",
        "orchestrator",
        "reviewer",
        "tester",
    ]
    assert m["assignment_handoff_count"]["value"] == 5
    assert m["verification_independence_rate"]["value"] == 0.75
    assert m["stale_message_rate"]["value"] == 0.0
    assert m["duplicate_work_rate"]["value"] == 0.0
    assert m["coordination_cost_per_verified_success"]["value"] == 340
    assert m["ownership_conflict_rate"]["value"] is None


def test_the_old_triage_fixture_journal_counts_its_failed_hand_off():
    m = metrics(JsonlJournal(FIXTURES / "support-triage.v1.jsonl").read_all())
    assert m["handoff_failure_rate"]["value"] == 0.3333
    assert m["handoff_failure_rate"]["handoffs"] == 3


def test_a_reference_journal_without_times_measures_tokens_but_not_seconds(tmp_path):
    path = tmp_path / "ref.jsonl"
    path.write_text(
        '{"kind": "ModelResponded", "agent": "coder", "usage": 120}\n'
        '{"kind": "MessageSent", "sender": "orchestrator", "recipient": "coder", '
        '"performative": "request"}\n'
    )
    m = metrics(JsonlJournal(path).read("run-imported"))
    overhead = m["coordination_overhead_ratio"]
    assert (overhead["value"], overhead["work_seconds"], overhead["seconds_ratio"]) == (
        0.0,
        None,
        None,
    )


def test_the_fold_state_holds_no_delivered_message_nor_finished_call():
    fold = Metrics()
    state = fold.start()
    rows = folds.Rows()
    folds.feed(fold, state, recorded(troubled_team()), rows)
    assert state["waiting"] == {}  # every message was delivered
    assert state["called"] == {} and state["dispatched"] == {}
    assert state["parked"] == {} and state["letters"] == {}
    assert rows.rows == {}


def ruled_team(ruling: bool) -> list[ev.Event]:
    """The troubled team, its conflict decided as services/review.py decides one: the
    ConflictResolved, then the claims settled by the person's rule (ClaimsReconciled)."""
    events = troubled_team()
    at = next(i for i, e in enumerate(events) if isinstance(e, ev.ConflictResolved))
    settled = ev.ClaimsReconciled(
        subject="order:1",
        predicate="status",
        winner="cl-1",
        losers=["cl-2"],
        rule="reviewer ada: r",
        value="v1",
        t=260,
    )
    return [*events[: at + 1], settled, *events[at + 1 :]] if ruling else events


def test_a_parked_conflict_a_person_decides_is_one_contest_not_two():
    """A conflict parked for a person counted once; the person's decision settles its claims
    (ClaimsReconciled), and that counted it again: the rate of a desk run went from 0.5 to 1.0
    when a reviewer decided, with no claim more."""
    before = metrics(recorded(ruled_team(ruling=False)))["ownership_conflict_rate"]
    after = metrics(recorded(ruled_team(ruling=True)))["ownership_conflict_rate"]
    assert after == before
    assert (after["value"], after["contested"]) == (0.5, 2)  # the park and a stale write
    fold = Metrics()
    state = fold.start()
    folds.feed(fold, state, recorded(ruled_team(ruling=True)), folds.Rows())
    assert state["ruled"] == [] and state["parked_on"] == {}


def test_claims_a_rule_reconciled_without_a_person_are_still_contested():
    settled = ev.ClaimsReconciled(
        subject="order:1", predicate="status", winner="cl-2", losers=["cl-1"], rule="newest"
    )
    events = [claim(1, 1), claim(2, 1), settled]
    assert metrics(recorded(events))["ownership_conflict_rate"]["value"] == 0.5


def test_one_conflict_parked_and_not_yet_resolved_is_said_in_the_singular():
    """It read "1 conflicts parked, none resolved yet"."""
    parked = [e for e in troubled_team() if not isinstance(e, ev.ConflictResolved)]
    latency = metrics(recorded(parked))["conflict_resolution_latency"]
    assert latency["reason"] == "not measurable: 1 conflict parked, none resolved yet"
