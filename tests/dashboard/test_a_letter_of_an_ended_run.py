"""A run that has ended has no dead letter left to decide.

A run with two letters open (its harness parked a task, its driver gave up on a step: older
stores hold such runs, tests/dashboard/test_a_run_with_two_open_dead_letters.py) was ended by a
discard of the step's letter, and the harness's letter stayed open: the queue offered it, and a
retry was taken, appending a decision after the run's verdict. Its next steps replayed the run
into that decision, failed three times with ReplayDivergence and dead-lettered the finished run
anew. Now the discard that ends the run discards the run's other open letters with it, saying
why, and a decision on a letter of a run that has ended is refused (409), naming the verdict
and how to try the work again."""

from __future__ import annotations

import pytest
from django.urls import reverse

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import DeadLetter
from runtime import flight
from runtime.events import DeadLetterDiscarded, TeamFinished
from services import letters, runs
from services.control import Control
from tests.dashboard.conftest import drive

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_letters(owner) -> tuple[str, str, str]:
    """A run with the harness's letter and the driver's letter open: its id and theirs."""
    run_id = runs.start_run("repo-fix", "reject-loop", by="owner")
    assert drive(run_id) == "dead-lettered"
    control = Control(run_id).dead_letter("the step kept dying", 3, "").letter_id
    return run_id, f"{run_id}:1", control


def kinds(stream: str) -> list[str]:
    return [r.event.kind for r in DjangoJournal().read(stream)]


def test_the_discard_that_ends_a_run_discards_its_other_letter_saying_why(
    as_reviewer, api, two_letters
):
    run_id, harness, control = two_letters
    letters.decide_letter(control, "discard", "rosa", "give up")
    assert kinds(f"run-{run_id}")[-3:] == ["DeadLettered", "DeadLetterDiscarded", "TeamFinished"]
    assert kinds(f"control-{run_id}")[-1] == "DeadLetterDiscarded"
    projection.catch_up()
    settled = DeadLetter.objects.get(letter_id=harness)
    assert (settled.status, settled.decided_by) == ("discarded", "rosa")
    assert settled.decision_reason == f"its run ended when rosa discarded {control}: give up"
    assert runs.status_of(run_id) == "discarded"

    # Neither is offered on the queue any more, and a retry of either says who decided it.
    queue = as_reviewer.get(f"/review/dead-letters?run={run_id}").content.decode()
    for letter in (harness, control):
        assert reverse("decide_letter", args=[letter, "retry"]) not in queue
    listed = api.get(f"/api/review/dead-letters?status=open&run={run_id}").json()["items"]
    assert listed == []
    refused = api.post(
        f"/api/review/dead-letters/{harness}/retry",
        {"reason": "one more round"},
        content_type="application/json",
    )
    assert refused.status_code == 409
    assert "discarded by rosa" in refused.json()["detail"]

    # Nothing drives it again, and it replays as a run a person ended.
    assert drive(run_id) == "escalated"
    assert kinds(f"control-{run_id}").count("DeadLettered") == 1
    replayed = flight.replay(DjangoJournal(), run_id)
    assert replayed.identical and replayed.ended_by == "discarded by rosa: give up"


def test_a_letter_left_open_on_an_ended_run_is_refused_and_nothing_is_written(
    as_reviewer, api, two_letters
):
    """As an older store holds it: the step's letter discarded and the run ended, the harness's
    letter still open."""
    run_id, harness, control = two_letters
    journal = DjangoJournal()
    discard = DeadLetterDiscarded(run_id=run_id, letter_id=control, by="rosa", reason="give up")
    journal.append(f"control-{run_id}", [discard], journal.version(f"control-{run_id}"))
    verdict = TeamFinished(run_id=run_id, status="escalated", reason="discarded by rosa: give up")
    journal.append(f"run-{run_id}", [verdict], journal.version(f"run-{run_id}"))
    before = journal.last_position()

    with pytest.raises(letters.LetterOfAnEndedRun) as refused:
        letters.decide_letter(harness, "retry", "ann", "one more round")
    assert str(refused.value) == (
        f"dead letter {harness} cannot be decided: its run {run_id} has ended (escalated: "
        "discarded by rosa: give up) and nothing drives it any more; to try the work again, "
        f"fork the run (the Fork form on its page, or POST /api/runs/{run_id}/fork)"
    )
    answer = api.post(
        f"/api/review/dead-letters/{harness}/retry",
        {"reason": "one more round"},
        content_type="application/json",
    )
    assert answer.status_code == 409 and answer.json()["detail"] == str(refused.value)
    page = as_reviewer.post(
        reverse("decide_letter", args=[harness, "discard"]), {"reason": "tidy up"}
    )
    assert page.status_code == 409 and "has ended" in page.content.decode()
    several = api.post(
        "/api/review/dead-letters/decide",
        {"letters": [harness], "decision": "retry", "reason": "again"},
        content_type="application/json",
    ).json()
    assert several["decided"] == []
    assert several["refused"] == [{"letter_id": harness, "detail": str(refused.value)}]
    assert journal.last_position() == before

    # The run stays as it ended: no step replays it into a decision nobody could take.
    assert drive(run_id) == "escalated"
    assert journal.last_position() == before
    assert runs.status_of(run_id) == "discarded"
