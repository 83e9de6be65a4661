"""On real worker processes and a real Redis broker: a run whose model endpoint goes down and
comes back finishes by itself. Its steps fail while the endpoint answers 503 and are tried
again by the workers, past their attempts (an outage is waited out), and the run's journal is
the one an uninterrupted flight writes: one ModelCalled per answer, no ModelFailed, and replay
says identical."""

from __future__ import annotations

import pytest

from journal_store.journal import DjangoJournal
from runtime import flight
from services import runs
from services.control import Control
from tests.fakellm import Reply, completion, wire_call
from tests.tasks.conftest import settled, wait_until

pytestmark = pytest.mark.slow


def test_a_run_waits_out_its_endpoints_outage_on_the_workers(redis_workers, server, settings):
    down = [Reply(b"overloaded", 503, {"Retry-After": "0"})] * 10  # two steps of five tries
    server.queue(
        *down,
        Reply(completion(None, [wire_call("list_files", '{"path": "."}', "c1")])),
        Reply(completion(None, [wire_call("done", '{"summary": "looked"}', "c2")])),
    )
    models = {"MINUTES_MODEL_BASE_URL": server.url, "MINUTES_MODEL": "some-model"}
    settings.MODELS = models
    settings.MODEL_BASE_URL = server.url
    # One attempt: the second failed step is already past it, and is tried again all the same.
    redis_workers.start(MINUTES_MAX_STEP_ATTEMPTS="1", **models)
    run_id = runs.start_run("solo", "solo-fix", model="endpoint")

    wait_until(lambda: settled([run_id]), 90, "the run to finish", redis_workers)

    assert runs.status_of(run_id) not in ("escalated", "dead-lettered"), redis_workers.logs()
    control = [r.event for r in DjangoJournal().read(f"control-{run_id}")]
    failed = [e for e in control if e.kind == "StepFailed"]
    assert len(failed) == 2 and all(e.error.type == "EndpointDown" for e in failed)
    assert not [e for e in control if e.kind == "DeadLettered"]
    assert Control(run_id).failing() is None  # it moved on since
    kinds = [r.event.kind for r in DjangoJournal().read(f"run-{run_id}")]
    assert "ModelFailed" not in kinds
    assert kinds.count("ModelCalled") == kinds.count("ModelResponded") == 2
    assert len(server.requests) == 12
    assert flight.replay(DjangoJournal(), run_id).identical
