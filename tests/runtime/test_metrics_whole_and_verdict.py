"""Two metrics a run's journal defines, and the figures the sums across runs add up from them.

livelock_rate divides the livelocked by the tasks looked at, which hold every livelocked one:
a desk's flip-flop livelocks with nothing reviewed, and its per-run detail and its sums said
"livelocked 1, reviewed 0" beside a rate of 1.0, so that the rate across runs (livelocked over
reviewed) counted a task its denominator did not hold.

A run whose verdict was done and whose saga's steps were undone is listed "undone
(compensated)" (runtime/status.py); it is no verified success, where the metrics counted one.
"""

from __future__ import annotations

from runtime import events as ev
from runtime import folds, views
from runtime.coordination import livelock
from runtime.metric_sums import summed
from runtime.metrics import metrics
from runtime.status import COMPENSATED
from tests.runtime.test_metrics import recorded, said, troubled_team

ORDER = "oscillating:order:1.status"


def flip_flop() -> list[ev.Event]:
    """A desk run the livelock watch stopped: an order's status flipped back and forth, nothing
    reviewed (the desk has no reviewer)."""
    signal = {"signal": "oscillating", "key": ORDER, "count": 2, "detail": "went back"}
    return [
        ev.TeamStarted(team="support-desk", scenario="flip-flop", task="t", t=1),
        ev.LivelockDetected(signals=[signal], limit=2, reason="order:1.status went back", t=2),
        ev.TaskEscalated(task_id="T1", reason="LIVELOCK: order:1.status went back", t=3),
        ev.TeamFinished(status="escalated", t=4),
    ]


def test_a_livelock_with_no_review_is_among_the_tasks_looked_at():
    m = metrics(recorded(flip_flop()))
    rate = m["livelock_rate"]
    assert (rate["value"], rate["livelocked"], rate["looked_at"]) == (1.0, 1, 1)
    assert rate["reviewed_tasks"] == 0  # said, but not what the rate divides by
    sums = summed(m)
    assert (sums["livelocked_tasks"], sums["looked_at_tasks"]) == (1, 1)


def test_the_whole_of_the_rate_holds_its_part_and_is_what_it_divides_by():
    for events in (flip_flop(), troubled_team()):
        rate = metrics(recorded(events))["livelock_rate"]
        assert rate["livelocked"] <= rate["looked_at"]
        assert rate["value"] == round(rate["livelocked"] / rate["looked_at"], 4)
    # T1 escalated at the REJECT cap and T2 accepted: both reviewed, one livelocked
    troubled = metrics(recorded(troubled_team()))["livelock_rate"]
    assert (troubled["livelocked"], troubled["looked_at"], troubled["reviewed_tasks"]) == (1, 2, 2)


def test_a_task_reviewed_and_livelocked_is_looked_at_once():
    events = [
        said("reviewer", "orchestrator", "T1", "reject", "m1", 1),
        ev.TaskEscalated(task_id="T1", reason="round cap", cause="reject_cap", t=2),
        ev.TeamFinished(status="escalated", t=3),
    ]
    rate = metrics(recorded(events))["livelock_rate"]
    assert (rate["value"], rate["livelocked"], rate["looked_at"]) == (1.0, 1, 1)


def reopened(escalated_too: bool) -> list[ev.Event]:
    """T1 reviewed, accepted and merged, then asked for again twice (the livelock signal
    `reopened:T1`), and escalated at the REJECT round cap too if `escalated_too`; T2 reviewed
    once and left alone."""

    def merged() -> list[ev.Event]:
        return [
            said("reviewer", "orchestrator", "T1", "accept", "a", 0),
            ev.Integrated(task_id="T1", branch="b", commit="c", approval="a", approved_by="r", t=0),
        ]

    events = [
        ev.TeamStarted(team="repo-fix", scenario="built", task="fix", t=0),
        said("reviewer", "orchestrator", "T2", "accept", "m0", 1),
        *merged(),
        said("orchestrator", "coder", "T1", "request", "m1", 2),
        *merged(),
        said("orchestrator", "coder", "T1", "request", "m2", 3),
    ]
    if escalated_too:
        events.append(ev.TaskEscalated(task_id="T1", reason="round cap", cause="reject_cap", t=4))
    return [*events, ev.TeamFinished(status="escalated", t=5)]


def test_a_task_reopened_is_one_task_of_the_part_and_of_the_whole():
    for escalated_too in (False, True):
        m = metrics(recorded(reopened(escalated_too)))
        rate = m["livelock_rate"]
        # T1 once (reviewed, reopened, perhaps escalated as well), T2 once: 1 of 2
        assert (rate["livelocked"], rate["looked_at"], rate["reviewed_tasks"]) == (1, 2, 2)
        assert rate["value"] == 0.5
        sums = summed(m)
        assert (sums["livelocked_tasks"], sums["looked_at_tasks"]) == (1, 2)


def test_things_other_than_tasks_keep_their_signal_key():
    found = ["reopened:T1", "oscillating:order:1.status", "conflict:parked:order:1.status"]
    assert livelock.things(["T1", "T2"], found) == {
        "T1",
        "T2",
        "signal:oscillating:order:1.status",
        "signal:conflict:parked:order:1.status",
    }


def refund(
    compensated: list[str], status: str = "done", failed: str | None = None
) -> list[ev.Event]:
    """A triage run whose refund saga settled, undone (`compensated`, the steps before the
    `failed` one: record, unless told) or not."""
    failed = failed or ("record" if compensated else None)
    return [
        ev.TeamStarted(team="support-triage", scenario="refund-saga", task="t", t=1),
        ev.SagaSettled(
            saga_id="refund-r",
            completed=compensated[::-1] if failed else ["label", "credit", "record"],
            compensated=compensated,
            failed_step=failed,
            error="BreakerOpen" if failed else None,
            t=2,
        ),
        ev.TeamFinished(status=status, reason="answered", t=3),
    ]


def test_a_done_run_whose_saga_was_undone_is_no_verified_success():
    records = recorded(refund(["credit", "label"]))
    assert folds.run(views.Summary(), records)["status"] == COMPENSATED  # as the runs list says
    cost = metrics(records)["coordination_cost_per_verified_success"]
    assert cost["value"] is None and cost["verified_successes"] == 0
    assert cost["reason"] == (
        "not measurable: the run ended undone (compensated), no verified success to divide by"
    )


def test_a_done_run_whose_saga_went_through_is_a_verified_success():
    records = recorded(refund([]))
    assert folds.run(views.Summary(), records)["status"] == "done"
    cost = metrics(records)["coordination_cost_per_verified_success"]
    assert (cost["value"], cost["verified_successes"]) == (0, 1)


def test_a_saga_undone_in_a_run_that_failed_says_failed():
    cost = metrics(recorded(refund(["credit"], status="failed")))
    assert cost["coordination_cost_per_verified_success"]["reason"].startswith(
        "not measurable: the run ended failed,"
    )


def test_a_saga_whose_first_step_failed_is_undone_too():
    """Nothing was done, so nothing was undone: no money moved, as when steps were undone."""
    records = recorded(refund([], failed="label"))
    assert folds.run(views.Summary(), records)["status"] == COMPENSATED
    cost = metrics(records)["coordination_cost_per_verified_success"]
    assert cost["value"] is None and cost["verified_successes"] == 0
