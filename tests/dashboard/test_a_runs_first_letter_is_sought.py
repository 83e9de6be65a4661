"""services/forks.first_letter: the first dead letter of a run's own journal, or decision on
one, past which the timeline offers no fork and the fork page refuses one. Every timeline page
and poll and the fork page ask it; asked by the stream, SQLite read the run's stream to its end
for the letters a run seldom has (5 ms of a 4 ms poll at 20,000 events). It is a seek by the
run's (run, kind, position) index."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from journal_store.journal import DjangoJournal
from runtime import streams
from runtime.events import DeadLettered, DeadLetterRetried, TeamStarted, ToolDispatched
from services import forks

RUN = "r-0123456789ab"


def letter(run: str, number: int) -> DeadLettered:
    return DeadLettered(run_id=run, letter_id=f"{run}:{number}", reason="retries spent")


def calls(run: str, count: int) -> list[ToolDispatched]:
    return [ToolDispatched(run_id=run, tool="read_file", args={"n": n}) for n in range(count)]


@pytest.fixture
def journal() -> DjangoJournal:
    journal = DjangoJournal()
    own, other = streams.journal(RUN), streams.journal("r-ba9876543210")
    # A letter of the run's control stream and one of another run come first; neither is the
    # run's own journal's.
    journal.append(streams.control(RUN), [letter(RUN, 9)], 0)
    journal.append(other, [letter("r-ba9876543210", 1)], 0)
    journal.append(own, [TeamStarted(run_id=RUN, team="solo", scenario="s", task="t")], 0)
    journal.append(own, calls(RUN, 200), 1)
    journal.append(own, [letter(RUN, 1)], 201)
    journal.append(
        own,
        [
            *calls(RUN, 50),
            DeadLetterRetried(run_id=RUN, letter_id=f"{RUN}:1", by="ann", reason="again"),
        ],
        202,
    )
    return journal


@pytest.mark.django_db
def test_the_first_letter_of_the_runs_own_journal_is_found(journal):
    found = forks.first_letter(RUN)
    assert found is not None
    assert (found.stream, found.version, found.event.kind) == (
        streams.journal(RUN),
        202,
        "DeadLettered",
    )
    assert forks.first_letter("r-ffffffffffff") is None


@pytest.mark.django_db
def test_none_where_the_runs_own_journal_holds_no_letter():
    journal = DjangoJournal()
    journal.append(streams.control(RUN), [letter(RUN, 9)], 0)
    journal.append(streams.journal(RUN), calls(RUN, 20), 0)
    assert forks.first_letter(RUN) is None


@pytest.mark.django_db
def test_it_is_a_seek_by_the_runs_kinds_not_a_read_of_its_stream(journal):
    if connection.vendor != "sqlite":
        pytest.skip("the plan is read on SQLite, whose planner has no statistics to go by")
    with CaptureQueriesContext(connection) as queries:
        forks.first_letter(RUN)
    [query] = queries.captured_queries
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN QUERY PLAN " + query["sql"])
        plan = " / ".join(row[-1] for row in cursor.fetchall())
    # Asked by the stream, it was `SEARCH journal_event USING INDEX
    # sqlite_autoindex_journal_event_2 (stream=?)`: every event of the run's journal.
    assert "USING INDEX journal_run_kind (run_id=? AND kind=?)" in plan, plan
