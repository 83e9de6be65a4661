"""Two people supersede the same version of an intent at once: exactly one of them wins, the
other is told somebody superseded it since, and the intent's versions stay 1, 2.

The interleaving is made to happen every time: the other person's version lands right after a
read of the intent's stream (its last record, which declaring reads now). Declaring read the versions, then read the stream's version again
for its append, so a version landing between the two was never seen, and both people won
(versions 1, 2, 2)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from journal_store.journal import DjangoJournal
from runtime.coordination.gates import Intents
from runtime.journal import MemoryJournal, WrongExpectedVersion
from services import intents as service
from teams.desk.harness import open_order
from teams.desk.local import local_desk
from teams.desk.settings import DeskSettings
from tests.journal_store.conftest import on_every_backend

TICKET = "ticket-4471"


class Meanwhile:
    """A journal on which `land` runs right after the `nth` read of the intent's stream,
    however it is read: whole, a range of it, or its last record (what declaring reads now)."""

    def __init__(self, journal, land, nth: int = 1) -> None:
        self.journal, self.land, self.nth = journal, land, nth
        self.reads = 0

    def looked(self, stream: str, found):
        if stream == Intents.stream(TICKET):
            self.reads += 1
            if self.reads == self.nth:
                self.land()
        return found

    def read(self, stream: str, after: int = 0):
        return self.looked(stream, self.journal.read(stream, after))

    def __getattr__(self, name: str):
        found = getattr(self.journal, name)
        if name in ("read_range", "last"):  # where the journal has them
            return lambda stream, *args: self.looked(stream, found(stream, *args))
        return found


def bob_supersedes(journal):
    return lambda: Intents(journal).declare(TICKET, "replace it", by="bob", based_on=1)


def versions(journal) -> list[tuple[int, str]]:
    return [(e.intent_version, e.by) for e in Intents(journal).history(TICKET)]


def cat_loses_to_bob(journal, based_on: int | None) -> None:
    Intents(journal).declare(TICKET, "refund", by="ann")
    meanwhile = Meanwhile(journal, bob_supersedes(journal))
    with pytest.raises(WrongExpectedVersion) as refused:
        Intents(meanwhile).declare(TICKET, "refund half", by="cat", based_on=based_on)
    assert (refused.value.expected, refused.value.actual) == (1, 2)  # intent versions
    assert versions(journal) == [(1, "ann"), (2, "bob")]


@pytest.mark.parametrize("based_on", [1, None], ids=["on-version-1", "on-the-current"])
def test_a_version_declared_between_the_read_and_the_write_is_refused(based_on):
    cat_loses_to_bob(MemoryJournal(), based_on)


@pytest.mark.parametrize("based_on", [1, None], ids=["on-version-1", "on-the-current"])
@on_every_backend()
def test_a_version_declared_between_the_read_and_the_write_is_refused_in_the_store(alias, based_on):
    cat_loses_to_bob(DjangoJournal(alias), based_on)


@pytest.mark.parametrize("nth", [1, 2], ids=["after-the-first-look", "after-the-last-look"])
@on_every_backend()
def test_superseding_a_version_superseded_meanwhile_says_so(alias, nth, monkeypatch):
    """Wherever between the person's look and the write the other version lands, the person
    is refused with IntentMoved (the API's 409), and nothing of theirs is written."""
    journal = DjangoJournal(alias)
    Intents(journal).declare(TICKET, "refund", by="ann")
    meanwhile = Meanwhile(journal, bob_supersedes(journal), nth)
    monkeypatch.setattr(service, "DjangoJournal", lambda using="default": meanwhile)
    with pytest.raises(service.IntentMoved, match="somebody superseded it since you looked"):
        service.supersede(TICKET, "refund half", "cat", "changed my mind", based_on=1, using=alias)
    assert meanwhile.reads >= nth  # the other version did land
    assert versions(journal) == [(1, "ann"), (2, "bob")]


def test_a_desk_run_that_finds_its_ticket_declared_meanwhile_takes_that_version(tmp_path):
    """Two desk runs of one order: the second finds no ticket at its first look, and the
    first declares it before the second writes. The second takes version 1 as it is, where
    declaring would have superseded the first run's version under it."""
    journal = MemoryJournal()

    def first_run_declares() -> None:
        Intents(journal).declare(TICKET, "refund order 4471", by="desk", based_on=0)

    meanwhile = Meanwhile(journal, first_run_declares)
    session = SimpleNamespace(run_id="r-second", journal=meanwhile)
    desk = local_desk(meanwhile, tmp_path, 0)
    prepared = open_order(session, desk, DeskSettings(order_id="4471"), "refund order 4471")
    assert (prepared["intent_id"], prepared["intent_version"]) == (TICKET, 1)
    assert versions(journal) == [(1, "desk")]
