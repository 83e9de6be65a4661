"""What an open conflict's card shows the order holding now (services/review.read_fact): the
subject's last change of the predicate, at its stream's version. It read the subject's facts
whole, so each card cost the order's history; it reads back from the newest, a window at a
time, to the predicate's last change."""

from __future__ import annotations

import random

import pytest

from journal_store.journal import DjangoJournal
from runtime.coordination.facts import Facts
from runtime.events import FactChanged
from services import review
from services.commit_targets import Current
from tests.coordination.counting import counting_rows

pytestmark = pytest.mark.django_db
SUBJECT = "order:A1"
PREDICATES = ("status", "amount_cents", "note")


def changed(predicate: str, value: object, n: int) -> FactChanged:
    return FactChanged(
        subject=SUBJECT, predicate=predicate, value=value, based_on=n, by=f"agent-{n % 3}"
    )


def whole(predicate: str) -> Current:
    """As it was read: every fact of the subject, the predicate's last change kept."""
    records = DjangoJournal().read(Facts.stream(SUBJECT))
    found = Current(None, records[-1].version if records else 0, "", False)
    for rec in records:
        if rec.event.predicate == predicate:
            found = Current(rec.event.value, found.version, rec.event.by, True)
    return found


def write(events: list[FactChanged]) -> None:
    journal, stream = DjangoJournal(), Facts.stream(SUBJECT)
    for start in range(0, len(events), 100):
        journal.append(stream, events[start : start + 100], journal.version(stream))


@pytest.mark.parametrize("seed", range(8))
def test_it_is_the_predicates_last_change_at_the_streams_version(seed):
    rng = random.Random(seed)
    write(
        [
            changed(rng.choice(PREDICATES[:2]), rng.randint(0, 9), n)
            for n in range(rng.choice([0, 1, 63, 64, 65, 200]))
        ]
    )
    for predicate in PREDICATES:  # "note" never changes: not known, at the version
        assert review.read_fact({}, SUBJECT, predicate) == whole(predicate)


def test_it_reads_the_changes_since_the_predicates_last_not_the_history(monkeypatch):
    write([changed("status", f"s{n}", n) for n in range(1_000)])
    read = counting_rows(monkeypatch)
    assert review.read_fact({}, SUBJECT, "status") == Current("s999", 1_000, "agent-0", True)
    assert read[0] <= review.FACT_WINDOW  # it read all 1,000
