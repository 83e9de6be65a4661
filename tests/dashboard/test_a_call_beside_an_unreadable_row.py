"""The trace tab's one call (?tab=trace&call=P) beside a row no event model reads (rewritten
in the table): its prompt window, its answer or the call's own row read whole, and the tab
answered a server error. The call is shown from the rows that read, and the row is said in
its place as the drawing says it (position, kind, why, escaped)."""

from __future__ import annotations

import json
from itertools import pairwise

import pytest

from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from runtime import flight
from runtime.events import ModelCalled, ModelResponded
from tests.dashboard.conftest import run_of

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("recorded_runs")]


def spoiled(run_id: str) -> tuple[int, int, int]:
    """An agent's answer rewritten so no model reads it (its text a mapping): the positions of
    the call it answers, that answer, and the agent's next call (whose prompt holds it)."""
    records = flight.run_records(DjangoJournal(), run_id)
    calls = [r for r in records if isinstance(r.event, ModelCalled)]
    for asked, then in pairwise(calls):
        if (asked.stream, asked.event.agent) != (then.stream, then.event.agent):
            continue
        answer = next(
            r
            for r in records
            if r.position > asked.position
            and isinstance(r.event, ModelResponded)
            and (r.stream, r.event.agent) == (asked.stream, asked.event.agent)
        )
        if answer.position < then.position:
            break
    else:
        raise AssertionError("no agent with two calls")
    row = StoredEvent.objects.get(position=answer.position)
    row.data = json.dumps({**json.loads(row.data), "text": {"<b>x</b>": 1}})
    row.save()
    return asked.position, answer.position, then.position


def test_the_call_is_shown_and_the_row_said(as_owner):
    run_id = run_of("first-flight")
    asked, answer, then = spoiled(run_id)
    for opened in (asked, then, answer):
        response = as_owner.get(f"/runs/{run_id}/?tab=trace&call={opened}")
        assert response.status_code == 200, opened
        page = response.content.decode()
        call = page[page.index('id="call"') :]
        said = f'the event at position {answer} (kind <span class="mono">ModelResponded</span>)'
        assert said in call, opened
        assert "could not be read" in call and "&lt;b&gt;x&lt;/b&gt;" in call
        assert "<b>x</b>" not in page
        if opened != answer:
            assert 'id="call-title"' in call and "No such call" not in call
    # The next call's prompt still holds what reads: its task.
    page = as_owner.get(f"/runs/{run_id}/?tab=trace&call={then}").content.decode()
    assert "What the model was asked" in page
