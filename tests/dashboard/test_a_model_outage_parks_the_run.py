"""A model endpoint that stays down (5xx after the client's retries) does not end the run:
nothing of the run failed, so nothing of it is journalled as failed. Its step is tried again,
at most min(60, 0.75 x MINUTES_STALL_SECONDS) seconds apart, for MINUTES_OUTAGE_SECONDS, while
the run's header and the API say the endpoint is down; the run goes on by itself when the
endpoint answers. An outage that outlasts
that waits in the dead-letter queue, and a person's retry asks the model again where the run
was. Either way the run reaches its verdict and replays identical.

It used to be journalled as the model's failure (ModelFailed), and the harness ended the run
escalated, for good: an hour of work lost to a vendor's five-minute outage."""

from __future__ import annotations

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from runtime import flight
from services import letters, runs, steps
from services.control import Control
from tests.dashboard.conftest import drive
from tests.fakellm import Reply, completion, wire_call

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("nowhere"),  # tests/conftest.py: the test drives each step
]

KEY = "sk-live-0123456789abcdefSECRET"


@pytest.fixture
def down(server, settings):
    """A model endpoint that answers every request 503, "try again now" (no waits here)."""
    settings.MODELS = {
        "MINUTES_MODEL_BASE_URL": server.url,
        "MINUTES_MODEL": "some-model",
        "MINUTES_MODEL_API_KEY": KEY,
    }
    settings.MODEL_BASE_URL = server.url
    server.queue(*[Reply(f"overloaded ({KEY})".encode(), 503, {"Retry-After": "0"})] * 200)
    return server


def back_up(server):
    server.replies.clear()
    server.queue(
        Reply(completion(None, [wire_call("list_files", '{"path": "."}', "c1")])),
        Reply(completion(None, [wire_call("done", '{"summary": "looked"}', "c2")])),
    )


def kinds(run_id: str) -> list[str]:
    return [r.event.kind for r in DjangoJournal().read(f"run-{run_id}")]


def row_of(client, run_id: str) -> str:
    """The run's row in the runs list, as the list page shows it."""
    projection.catch_up()
    page = client.get("/").content.decode()
    start = page.index(f'id="row-{run_id}"')
    return page[start : page.index("</tr>", start)]


def test_an_outage_is_waited_out_and_the_run_goes_on_by_itself(down, settings, as_owner):
    run_id = runs.start_run("solo", "solo-fix", by="owner", model="endpoint")

    outcomes = [steps.drive_step(run_id, "test") for _ in range(settings.MAX_STEP_ATTEMPTS + 3)]

    assert set(outcomes) == {"failed-step"}  # past its attempts, and still not dead-lettered
    assert Control(run_id).open_letter() is None
    assert kinds(run_id)[-1] == "ModelCalled" and "ModelFailed" not in kinds(run_id)
    projection.catch_up()
    api = as_owner.get(f"/api/runs/{run_id}").json()
    assert api["status"] == "running"
    failing = api["failing"]
    assert failing["outage"] and failing["tries"] == len(outcomes) and failing["until"]
    assert failing["last_error"].startswith(f"EndpointDown: gave up on POST {down.url}")
    assert KEY not in failing["last_error"]
    header = as_owner.get(f"/runs/{run_id}/header").content.decode()
    assert "The model endpoint has not answered since" in header
    assert f"({len(outcomes)} failed steps)" in header and "HTTP 503" in header
    # min(60, 0.75 x MINUTES_STALL_SECONDS), as services/steps.py waits: 45 s by default.
    assert "Its step is tried again, at most 45 s apart, until" in header
    assert KEY not in header
    assert "model down</span>" in row_of(as_owner, run_id)  # the runs list says so too
    # A request written to the control stream since (a stop not yet acted on) hides neither.
    Control(run_id).request_stop("ann", "looking")
    assert "model down</span>" in row_of(as_owner, run_id)
    assert "has not answered since" in as_owner.get(f"/runs/{run_id}/header").content.decode()
    Control(run_id).request_resume("ann")
    calm = runs.start_run("repo-fix", "first-flight", by="owner")  # running, failing nothing
    assert "running</span>" in row_of(as_owner, calm)
    assert "model down" not in row_of(as_owner, calm) and "step failing" not in row_of(
        as_owner, calm
    )

    back_up(down)
    outcome = drive(run_id)

    assert outcome != "escalated" and runs.status_of(run_id) == outcome, outcome
    assert Control(run_id).failing() is None and Control(run_id).open_letter() is None
    assert "model down" not in row_of(as_owner, run_id)
    assert kinds(run_id).count("ModelCalled") == kinds(run_id).count("ModelResponded") == 2
    assert flight.replay(DjangoJournal(), run_id).identical


def test_an_outage_that_lasts_waits_for_a_person_whose_retry_goes_on(down, settings, as_owner):
    settings.OUTAGE_SECONDS = 0  # not waited out: dead-lettered after its attempts
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
    assert letter.last_error.startswith(f"EndpointDown: gave up on POST {down.url}")
    assert letter.reason.startswith("the model endpoint has not answered since ")
    assert f"({len(outcomes) - 1} failed steps)" in letter.reason and "HTTP 503" in letter.reason
    assert letter.reason.endswith("retry it once the model endpoint answers again")
    projection.catch_up()
    page = as_owner.get(f"/runs/{run_id}/").content.decode()
    assert "retry it once the model endpoint answers again" in page
    assert KEY not in page and KEY not in letter.reason

    back_up(down)
    letters.decide_letter(letter.letter_id, "retry", "ann", "the vendor is back")
    outcome = drive(run_id)

    assert outcome != "escalated" and runs.status_of(run_id) == outcome, outcome
    assert kinds(run_id).count("ModelCalled") == kinds(run_id).count("ModelResponded") == 2
    assert flight.replay(DjangoJournal(), run_id).identical


def test_a_step_that_fails_otherwise_is_shown_and_dead_lettered_after_its_attempts(
    settings, monkeypatch, as_owner
):
    # Only the model endpoint's outage is waited out: a bug is dead-lettered as before.
    run_id = runs.start_run("repo-fix", "first-flight", by="owner")

    def broken(*args, **kwargs):
        raise RuntimeError("the harness hit a <bug>")

    monkeypatch.setattr(flight, "drive", broken)
    assert steps.drive_step(run_id, "test") == "failed-step"
    header = as_owner.get(f"/runs/{run_id}/header").content.decode()
    assert "Its steps have failed since" in header and "(1 failed step)" in header
    assert "RuntimeError: the harness hit a &lt;bug&gt;" in header
    assert f"after {settings.MAX_STEP_ATTEMPTS} failed steps" in header
    row = row_of(as_owner, run_id)
    assert "step failing</span>" in row and "the harness hit a &lt;bug&gt;" in row
    projection.catch_up()
    timeline = as_owner.get(f"/runs/{run_id}/?tab=timeline").content.decode()
    assert "failed: RuntimeError: the harness hit a &lt;bug&gt;" in timeline  # its own row
    for _ in range(settings.MAX_STEP_ATTEMPTS - 1):
        assert steps.drive_step(run_id, "test") == "failed-step"
    assert steps.drive_step(run_id, "test") == "dead-lettered"
    assert Control(run_id).open_letter().reason.startswith("the step at version ")
