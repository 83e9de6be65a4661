"""A reason box holds no more than is kept of a reason (2,000 characters): a longer stop reason
was cut without a word when it was recorded, and a longer decision reason refused only after
it was sent. Now the boxes stop it as it is typed."""

from __future__ import annotations

import re

import pytest

from dashboard.actions import REASON_MAX
from journal_store import projection
from journal_store.journal import DjangoJournal
from runtime.events import DeadLettered
from tests.dashboard.conftest import run_of

pytestmark = pytest.mark.django_db


def reason_boxes(html: str) -> list[str]:
    return re.findall(r'<input[^>]*name="reason"[^>]*>', html)


def test_every_reason_box_holds_what_is_kept_of_a_reason(as_owner, as_reviewer):
    run_id = run_of("first-flight", steps=1)  # running: its header offers a stop
    header = as_owner.get(f"/runs/{run_id}/header", HTTP_HX_REQUEST="true").content.decode()
    run = "r-0ea5011a0001"
    DjangoJournal().append(
        f"run-{run}", [DeadLettered(run_id=run, letter_id=f"{run}:1", reason="no reply")], 0
    )
    projection.catch_up()
    letters = as_reviewer.get("/review/dead-letters").content.decode()
    boxes = reason_boxes(header) + reason_boxes(letters)
    assert len(boxes) == 3  # stop, retry, discard
    assert all(f'maxlength="{REASON_MAX}"' in box for box in boxes), boxes
