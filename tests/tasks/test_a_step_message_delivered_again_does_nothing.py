"""A message asking for a run's step, delivered after another step has taken the run, does
nothing: the step that took it goes on with the run.

Redis gives a message out again when the worker that took it dies before acknowledging it
(after the visibility timeout, 900 s). By then the reconciler has queued the run again and its
steps are under way; the old message, arriving between two of them, found the lease free,
drove a step and sent its own next one, so two chains of next-step messages drove the run
(the README, whose text on workers is docs/workers.md's now, said such a delivery does
nothing). A message now carries the run's lease stream's version as it was sent, and a step
granted after that makes it "moved".

The test delivers each message itself, in this process."""

from __future__ import annotations

import pytest

from services import queue, runs, steps
from services.control import Control

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("nowhere"),  # tests/conftest.py: the test drives each step
]


@pytest.fixture
def sent(monkeypatch) -> list[tuple[str, int | None]]:
    """The step messages the services send, each (run id, lease version), undelivered."""
    messages: list[tuple[str, int | None]] = []

    def publish(name, ids, countdown, node):
        assert name == queue.ADVANCE
        messages.append(ids)

    monkeypatch.setattr(queue, "_publish", publish)
    return messages


def take(sent: list) -> list:
    taken, sent[:] = list(sent), []
    return taken


def deliver(message: tuple[str, int | None], worker: str) -> str:
    run_id, version = message
    return steps.drive_step(run_id, worker, sent=version)


def test_a_message_delivered_again_after_its_worker_died_drives_nothing(sent):
    run_id = runs.start_run("repo-fix", "first-flight")
    [first] = take(sent)
    assert deliver(first, "w1") == "stepped"
    [second] = take(sent)
    # Worker A takes the second message and dies mid-step: its lease runs out, unreleased.
    control = Control(run_id)
    at = control.journal.version(f"run-{run_id}")
    assert control.acquire("worker-a", -1, at, second[1]) is not None
    # The reconciler queues the run again, and that step takes it on.
    assert steps.revive_stalled() == [run_id]
    [revived] = take(sent)
    assert deliver(revived, "w2") == "stepped"
    [following] = take(sent)

    # Redis gives A's message out again, between two steps: it drives nothing, sends nothing.
    assert deliver(second, "w3") == "moved"
    assert sent == []

    # One chain of messages drives the run to its end.
    message = following
    while (outcome := deliver(message, "w4")) == "stepped":
        [message] = take(sent)
    assert outcome == "done"
    assert sent == []


def test_a_message_sent_while_a_step_holds_the_run_drives_once_it_lets_go(sent):
    """Sent while a step held the lease (a person's resume as the step stopped at their
    stop): no step took the run after it was sent, so it drives the next one."""
    run_id = runs.start_run("repo-fix", "first-flight")
    take(sent)
    control = Control(run_id)
    holding = control.acquire("w-live", 30, control.journal.version(f"run-{run_id}"))
    assert holding is not None
    queue.advance(run_id)
    [message] = take(sent)
    control.release(holding, "interrupted")
    assert deliver(message, "w2") == "stepped"
    assert len(sent) == 1


def test_a_message_queued_before_messages_carried_a_version_drives_as_before(sent):
    run_id = runs.start_run("repo-fix", "first-flight")
    take(sent)
    assert steps.drive_step(run_id, "w1") == "stepped"
    assert len(sent) == 1
