"""A run's events moved to another run id name the moved run's tool calls: a fork's copied
prefix and an import under another id rename through one function (runtime/renaming.py)."""

from __future__ import annotations

import pytest

from runtime import renaming
from runtime.events import ClaimAsserted, EffectStarted, FactChanged, MutationRefused

CALLING = [
    MutationRefused(
        run_id="r-a", what="refund", actor="support", capability="refund", check="intent",
        reason="superseded",
    ),
    FactChanged(run_id="r-a", subject="order:o-1", predicate="status", value="x", based_on=1,
                by="support"),
    ClaimAsserted(run_id="r-a", claim_id="cl-1", subject="order:o-1", predicate="status",
                  value="x", based_on=1, source="model", by="support"),
    EffectStarted(run_id="r-a", key="fx-1", effect_type="refund", target="order:o-1",
                  request_hash="h"),
]  # fmt: skip


@pytest.mark.parametrize("event", CALLING, ids=lambda e: e.kind)
def test_a_moved_event_names_the_moved_runs_call(event):
    """The fork's copy named its parent's call (`run-r-a@7`): the fork's call run again asks
    for `run-r-b@7`, and found nothing, where the import's copy was renamed."""
    own = event.model_copy(update={"call": "run-r-a@7"})
    assert renaming.moved(own, "r-a", "r-b").call == "run-r-b@7"
    worker = event.model_copy(update={"call": "worker-r-a-T1-w@3"})
    assert renaming.moved(worker, "r-a", "r-b").call == "worker-r-b-T1-w@3"


@pytest.mark.parametrize("call", ["run-r-other@7", "run-r-a-b@7", "a caller's own name", None])
def test_a_call_of_no_moved_stream_is_left_as_it_was(call):
    event = CALLING[-1].model_copy(update={"call": call})
    assert renaming.moved(event, "r-a", "r-b").call == call
