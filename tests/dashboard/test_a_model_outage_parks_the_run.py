"""A model endpoint that stays down (5xx after the client's retries) parks the run in the
dead-letter queue instead of ending it: nothing of the run failed, so nothing of it is
journalled as failed, and a person's retry once the endpoint is back asks the model again
where it was, and the run goes on to its verdict and replays identical.

It used to be journalled as the model's failure (ModelFailed), and the harness ended the run
escalated, for good: an hour of work lost to a vendor's five-minute outage."""

from __future__ import annotations

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from runtime import flight
from services import letters, runs, steps
from services.control import Control
from tests.fakellm import Reply, completion, wire_call

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("nowhere"),  # tests/conftest.py: the test drives each step
]

KEY = "sk-live-0123456789abcdefSECRET"


def kinds(run_id: str) -> list[str]:
    return [r.event.kind for r in DjangoJournal().read(f"run-{run_id}")]


def test_an_outage_waits_for_a_person_and_a_retry_goes_on_where_the_run_was(
    server, settings, as_owner
):
    settings.MODELS = {
        "MINUTES_MODEL_BASE_URL": server.url,
        "MINUTES_MODEL": "some-model",
        "MINUTES_MODEL_API_KEY": KEY,
    }
    settings.MODEL_BASE_URL = server.url
    # Down: every request answered 503, "try again now" (no waits in the test).
    server.queue(*[Reply(f"overloaded ({KEY})".encode(), 503, {"Retry-After": "0"})] * 100)
    run_id = runs.start_run("solo", "solo-fix", by="owner", model="endpoint")

    outcomes = [steps.drive_step(run_id, "test") for _ in range(settings.MAX_STEP_ATTEMPTS + 1)]
    while outcomes[-1] == "failed-step" and len(outcomes) < 10:
        outcomes.append(steps.drive_step(run_id, "test"))

    assert outcomes[-1] == "dead-lettered", outcomes
    assert set(outcomes[:-1]) == {"failed-step"}
    assert kinds(run_id)[-1] == "ModelCalled"  # where it rests: the call that went unanswered
    assert "ModelFailed" not in kinds(run_id) and kinds(run_id).count("ModelCalled") == 1
    assert runs.status_of(run_id) == "dead-lettered"
    letter = Control(run_id).open_letter()
    assert letter.last_error.startswith("EndpointDown: gave up on POST " + server.url)
    assert "HTTP 503" in letter.reason
    assert letter.reason.endswith("retry it once the model endpoint answers again")
    projection.catch_up()
    shown = as_owner.get(f"/api/runs/{run_id}").json()
    assert shown["status"] == "dead-lettered"
    page = as_owner.get(f"/runs/{run_id}/").content.decode()
    assert "retry it once the model endpoint answers again" in page
    assert KEY not in page and KEY not in letter.reason

    # Back up: the person retries, and the run asks again from its ModelCalled.
    server.replies.clear()
    server.queue(
        Reply(completion(None, [wire_call("list_files", '{"path": "."}', "c1")])),
        Reply(completion(None, [wire_call("done", '{"summary": "looked"}', "c2")])),
    )
    letters.decide_letter(letter.letter_id, "retry", "ann", "the vendor is back")
    for _ in range(20):
        outcome = steps.drive_step(run_id, "test")
        if outcome != "stepped":
            break

    assert outcome != "escalated" and runs.status_of(run_id) == outcome, outcome
    assert kinds(run_id).count("ModelCalled") == kinds(run_id).count("ModelResponded") == 2
    assert flight.replay(DjangoJournal(), run_id).identical
