"""An intent's current version, a declaration over it and a page of its history read the
records they answer with (the stream's last, the page's), not every version people declared:
each read the intent's stream whole, so superseding an intent or looking at it cost what its
history had grown to (bench/whole_reads.py has the figures). Each answer is compared with the
whole read's."""

from __future__ import annotations

import pytest

from journal_store.journal import DjangoJournal
from runtime.coordination.gates import Intents
from runtime.events import IntentCarried, IntentDeclared, ToolDispatched
from runtime.journal import MemoryJournal
from tests.conftest import on_every_backend
from tests.coordination.test_checks_read_only_what_they_need import Counting

EARLIER = 300  # versions declared before


def declared(intent_id: str, version: int) -> IntentDeclared:
    return IntentDeclared(
        intent_id=intent_id, intent_version=version, statement=f"v{version}", by="p", reason="r"
    )


def shown(found: list[IntentDeclared]) -> list[tuple[int, str]]:
    return [(e.intent_version, e.statement) for e in found]


@on_every_backend()
def test_the_current_version_and_a_declaration_read_the_last_record_alone(alias):
    journal = DjangoJournal(alias)
    stream = Intents.stream("ticket-long")
    journal.append(stream, [declared("ticket-long", n) for n in range(1, EARLIER + 1)], 0)
    counting = Counting(journal)
    intents = Intents(counting)

    assert intents.current("ticket-long").version == EARLIER
    assert counting.handed[stream] == 1
    counting.handed.clear()
    made = intents.declare("ticket-long", "now this", "ana", "changed", based_on=EARLIER)
    assert made.version == EARLIER + 1
    assert counting.handed[stream] == 1
    assert shown(Intents(journal).history("ticket-long"))[-1] == (EARLIER + 1, "now this")
    with pytest.raises(KeyError, match="no intent ticket-none"):
        intents.current("ticket-none")


@on_every_backend()
def test_a_page_of_the_history_reads_that_page(alias):
    journal = DjangoJournal(alias)
    run, task = "run-r-paged", "task-r-paged"
    noise = [ToolDispatched(run_id="r-paged", tool="t", args={}) for _ in range(EARLIER)]
    carried = IntentCarried(run_id="r-paged", intent_id=task, intent_version=1, statement="v1")
    journal.append(run, [carried, *noise], 0)
    journal.append(Intents.stream(task), [declared(task, n) for n in range(2, EARLIER + 1)], 0)
    journal.append(
        Intents.stream("ticket-p"), [declared("ticket-p", n) for n in range(1, EARLIER + 1)], 0
    )
    for intent_id in (task, "ticket-p"):
        whole = Intents(journal).history(intent_id)
        for after, limit in [(0, 10), (0, 1), (1, 5), (150, 20), (295, 10), (299, 5), (300, 5)]:
            counting = Counting(journal)
            latest, found = Intents(counting).page(intent_id, after, limit)
            assert latest is not None and latest.intent_version == EARLIER
            expected = [e for e in whole if e.intent_version > after][:limit]
            assert shown(found) == shown(expected), (intent_id, after, limit)
            # The page and the stream's last record; the run's IntentCarried when it is shown.
            assert sum(counting.handed.values()) <= limit + 2, (intent_id, after, limit)
            assert counting.handed[run] <= 1


def test_a_stream_not_written_by_declare_is_paged_from_its_whole_read():
    journal = MemoryJournal()
    stream = Intents.stream("ticket-odd")
    journal.append(stream, [declared("ticket-odd", 1), declared("ticket-odd", 3)], 0)
    latest, found = Intents(journal).page("ticket-odd", 0, 1)
    assert latest is not None and latest.intent_version == 3
    assert shown(found) == [(1, "v1")]
    assert shown(Intents(journal).page("ticket-odd", 1, 5)[1]) == [(3, "v3")]
    assert Intents(journal).page("ticket-none", 0, 5) == (None, [])
    with pytest.raises(ValueError, match="limit 1 or more"):
        Intents(journal).page("ticket-odd", 0, 0)
