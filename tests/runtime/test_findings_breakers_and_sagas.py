"""Findings name a breaker that tripped and a saga that was turned back: a run that refunded
nothing after undoing its steps does not read "no failure signature"."""

from __future__ import annotations

from runtime.diagnose import diagnose
from runtime.events import (
    BreakerReset,
    BreakerTripped,
    SagaAborted,
    SagaCompensated,
    SagaCompensating,
)
from runtime.journal import Recorded

R = {"run_id": "r-1"}


def records(*placed):
    return [Recorded(stream, i + 1, i + 1, e) for i, (stream, e) in enumerate(placed)]


def test_a_breaker_that_tripped_twice_is_one_finding_citing_both_trips():
    first = BreakerTripped(**R, breaker="tools:policy", reason="failure rate", t=10.0)
    again = BreakerTripped(**R, breaker="tools:policy", reason="failure rate", t=20.0)
    found = diagnose(
        records(
            ("breakers-r-1", first),
            ("run-r-1", first),  # the same trip, copied into the run's stream: not a second
            ("breakers-r-1", BreakerReset(**R, breaker="tools:policy", reason="probe ok")),
            ("breakers-r-1", again),
        )
    )
    assert [(f["kind"], f["summary"], f["positions"]) for f in found] == [
        ("breaker_tripped", "breaker tools:policy tripped (2 times): failure rate", [1, 4])
    ]


def test_a_saga_turned_back_is_a_finding_naming_the_failed_step_and_what_was_undone():
    saga = "refund-r-1"
    found = diagnose(
        records(
            (
                "saga-refund-r-1",
                SagaAborted(**R, saga_id=saga, reason="db down", failed_step="record"),
            ),
            ("saga-refund-r-1", SagaCompensated(**R, saga_id=saga, step="credit", key="k2")),
            ("saga-refund-r-1", SagaCompensated(**R, saga_id=saga, step="label", key="k1")),
        )
    )
    assert [(f["kind"], f["summary"], f["positions"], f["undone"]) for f in found] == [
        (
            "saga_compensated",
            "saga refund-r-1: record failed (db down); undone: credit, label",
            [1, 2, 3],
            ["credit", "label"],
        )
    ]


def test_an_undo_begun_and_not_finished_is_named_until_it_is_finished():
    """A driver that died inside an undo's call left the step being undone: the finding says
    so (the money may still be moved) until its SagaCompensated, and then no more."""
    saga = "refund-r-1"
    placed = [
        ("saga-refund-r-1", SagaAborted(**R, saga_id=saga, reason="db down", failed_step="record")),
        ("saga-refund-r-1", SagaCompensating(**R, saga_id=saga, step="credit", key="k2")),
    ]
    (found,) = diagnose(records(*placed))
    assert found["summary"] == (
        "saga refund-r-1: record failed (db down); undone: nothing yet; begun and not finished:"
        " credit (money may still be moved)"
    )
    assert (found["positions"], found["undoing"]) == ([1, 2], ["credit"])
    placed.append(("saga-refund-r-1", SagaCompensated(**R, saga_id=saga, step="credit", key="k2")))
    (found,) = diagnose(records(*placed))
    assert found["summary"] == "saga refund-r-1: record failed (db down); undone: credit"
    assert (found["positions"], found["undoing"]) == ([1, 2, 3], [])
