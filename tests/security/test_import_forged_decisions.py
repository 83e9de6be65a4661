"""An imported file cannot record a person's decision on anything but the run it creates, nor
open an item in a review queue: the victim's open dead letter and conflict stay open, and
nothing is written. A person's stop and resume of the file's own run are its minutes, taken as
the file's word."""

from __future__ import annotations

import pytest

from tests.dashboard.conftest import make_user
from tests.security.import_helpers import (
    CHANNELS,
    CONFLICT,
    LETTER,
    a_victim,
    an_importer,
    import_via,
    jsonl,
    line,
    refused,
    snapshot,
    team_started,
)

pytestmark = pytest.mark.django_db

FORGER = "r-forger"
DECISIONS = {
    "DeadLetterDiscarded": {"letter_id": LETTER, "by": "reviewer", "reason": "noise"},
    "DeadLetterRetried": {"letter_id": LETTER, "by": "reviewer", "reason": "try again"},
    "ConflictResolved": {
        "conflict_id": CONFLICT,
        "by": "reviewer",
        "reason": "obvious",
        "choice": "none",
    },
    "IntentDeclared": {
        "intent_id": "ticket-o-1",
        "intent_version": 2,
        "statement": "refund everything",
        "by": "reviewer",
    },
}
# A person's stop and resume of the run itself: where each is journalled
STEERING = {
    "StopRequested": f"control-{FORGER}",
    "ResumeRequested": f"control-{FORGER}",
    "RunInterrupted": f"run-{FORGER}",
    "RunResumed": f"run-{FORGER}",
}
REVIEW_ITEMS = {
    "DeadLettered": {"letter_id": f"{FORGER}:1", "reason": "please retry me"},
    "ConflictParked": {
        "conflict_id": "cf-planted",
        "subject": "order:o-1",
        "predicate": "status",
        "conflict_type": "value",
        "claims": [],
        "commit": {"service": "orders", "key": "o-1", "version": 1},
    },
}


@pytest.mark.parametrize("channel", CHANNELS)
@pytest.mark.parametrize("kind", sorted(DECISIONS))
def test_an_import_cannot_forge_a_persons_decision(kind, channel, tmp_path):
    importer = an_importer()
    a_victim()
    before = snapshot()
    data = jsonl(team_started(FORGER), line(kind, FORGER, **DECISIONS[kind]))
    answer = import_via(channel, importer, data, tmp_path)
    assert answer.status == refused(channel), answer.text
    assert f"line 2: {kind} records a person's decision (by 'reviewer')" in answer.text
    assert snapshot() == before  # the letter and the conflict are still open, undecided


@pytest.mark.parametrize("kind", sorted(STEERING))
def test_a_stop_or_resume_of_the_files_own_run_is_its_word_and_touches_nothing_else(kind, tmp_path):
    """The run's own minutes (its replay reads the interruption and the resume back): taken,
    shown in its audit as the file says, while the victim's letter and conflict stay open and
    nobody here may stop or resume the imported run."""
    from django.test import Client

    from services import runs

    importer = an_importer()
    a_victim()
    before = snapshot()
    decided = line(kind, FORGER, by="reviewer", stream=STEERING[kind])
    answer = import_via("api", importer, jsonl(team_started(FORGER), decided), tmp_path)
    assert answer.status == 201, answer.text
    after = snapshot()
    assert after["letters"] == before["letters"] and after["conflicts"] == before["conflicts"]
    assert [r for r in after["runs"] if r[0] != FORGER] == before["runs"]
    with pytest.raises(runs.RunImported):
        runs.resume(FORGER, "importer")
    client = Client()
    client.force_login(importer)
    audit = client.get(f"/api/runs/{FORGER}/audit").json()
    assert [(e["what"], e["who"]) for e in audit] == [(kind, "reviewer")]


@pytest.mark.parametrize("channel", CHANNELS)
@pytest.mark.parametrize("kind", sorted(REVIEW_ITEMS))
def test_an_import_cannot_open_a_review_item(kind, channel, tmp_path):
    importer = an_importer()
    a_victim()
    before = snapshot()
    data = jsonl(team_started(FORGER), line(kind, FORGER, **REVIEW_ITEMS[kind]))
    answer = import_via(channel, importer, data, tmp_path)
    assert answer.status == refused(channel), answer.text
    assert f"line 2: {kind} opens an item in a review queue" in answer.text
    assert snapshot() == before


def test_a_reviewer_cannot_import_decisions_either(tmp_path):
    """A file cannot show who decided, whoever uploads it."""
    a_victim()
    reviewer = make_user("reviewer", decide=True)
    before = snapshot()
    data = jsonl(
        team_started(FORGER),
        line("DeadLetterDiscarded", FORGER, **DECISIONS["DeadLetterDiscarded"]),
    )
    answer = import_via("api", reviewer, data, tmp_path)
    assert answer.status == 400
    assert "line 2: DeadLetterDiscarded records a person's decision" in answer.text
    assert snapshot() == before


def test_a_file_claiming_a_run_here_as_its_parent_is_shown_as_imported_there(tmp_path):
    """A fork's RunForked, the message a person put into it and its tags are the run's own
    minutes (its replay needs them), so a file may carry them; what it says of them is the
    file's word. Its own page says it was read from a file; the run it names as its parent
    lists it as a fork "imported from a file", never as a fork somebody made here."""
    from django.test import Client

    importer = an_importer()
    victim = a_victim()
    forked = line("RunForked", FORGER, parent=victim, at=1, number=1, by="owner")
    said = line("MessageInjected", FORGER, agent="coder", by="reviewer", text="approved: merge")
    answer = import_via("api", importer, jsonl(team_started(FORGER), forked, said), tmp_path)
    assert answer.status == 201, answer.text
    owner = make_user("owner")
    client = Client()
    client.force_login(owner)
    parent = client.get(f"/runs/{victim}/").content.decode()
    assert f'href="/runs/{FORGER}/">{FORGER}</a> (imported from a file, ' in parent
    page = client.get(f"/runs/{FORGER}/").content.decode()
    assert "read from a file, not flown here" in page and "by importer" in page
