"""A decision on a step's dead letter while somebody writes something else to the run's control
stream (a tag). The decision was appended at the stream's version read before the letter was
looked up, and the tag's moving the stream was taken for a decision: "already decided", of a
letter nobody had decided, which stayed open. Now the decider reads again, and only a decision
found there refuses it.

The other write lands right after the decider has read the stream's version, every time."""

from __future__ import annotations

import pytest

from journal_store import projection
from journal_store.models import DeadLetter
from services import letters, tags
from services.control import Control
from tests.dashboard.conftest import run_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def letter(owner, nowhere) -> str:
    """An open dead letter in a run's control stream (a step that kept dying)."""
    run_id = run_of("first-flight", steps=1)
    found = Control(run_id).dead_letter("a step kept failing", 4, "Boom").letter_id
    projection.catch_up()
    return found


def meanwhile(monkeypatch, write, times: int = 1) -> list[int]:
    """Run `write` right after each of the first `times` looks at the letter's stream."""
    looked_up, done = letters.events_of, []

    def events_of(journal, run_id, stream, cls):
        found = looked_up(journal, run_id, stream, cls)
        if cls is letters.DeadLettered and len(done) < times:
            done.append(len(done) + 1)
            write(len(done))
        return found

    monkeypatch.setattr(letters, "events_of", events_of)
    return done


def kinds(run_id: str) -> list[str]:
    return [e.kind for e in Control(run_id).events()]


def test_a_letter_is_retried_though_its_run_was_tagged_meanwhile(letter, monkeypatch):
    run_id = letter.split(":")[0]
    done = meanwhile(monkeypatch, lambda n: tags.tag(run_id, ["nightly"], [], "bob"))
    letters.decide_letter(letter, "retry", "ann", "the endpoint is back")
    assert done == [1]
    assert kinds(run_id)[-2:] == ["RunTagged", "DeadLetterRetried"]
    assert DeadLetter.objects.get(letter_id=letter).status == "retried"
    assert tags.of(run_id) == ["nightly"]


def test_a_letter_decided_meanwhile_is_refused_naming_who_decided_it(letter, monkeypatch):
    def bob_discards(n: int) -> None:
        letters.decide_letter(letter, "discard", "bob", "nobody needs it")

    meanwhile(monkeypatch, bob_discards)
    with pytest.raises(letters.LetterAlreadyDecided, match=r"discarded by bob"):
        letters.decide_letter(letter, "retry", "ann", "the endpoint is back")
    assert kinds(letter.split(":")[0]).count("DeadLetterDiscarded") == 1
    assert "DeadLetterRetried" not in kinds(letter.split(":")[0])


def test_a_stream_that_moves_before_every_write_is_said_so_and_nothing_is_decided(
    letter, monkeypatch
):
    run_id = letter.split(":")[0]
    meanwhile(monkeypatch, lambda n: tags.tag(run_id, [f"tag-{n}"], [], "bob"), times=99)
    with pytest.raises(letters.LetterMoved, match="still undecided") as refused:
        letters.decide_letter(letter, "retry", "ann", "the endpoint is back")
    assert f"each of {letters.ATTEMPTS} tries" in str(refused.value)
    assert kinds(run_id).count("RunTagged") == letters.ATTEMPTS
    assert "DeadLetterRetried" not in kinds(run_id)
    projection.catch_up()
    assert DeadLetter.objects.get(letter_id=letter).status == "open"
