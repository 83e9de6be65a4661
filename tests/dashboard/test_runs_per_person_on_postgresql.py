"""MINUTES_RUNS_PER_PERSON on PostgreSQL, where the person's lock is an advisory lock
(services/run_cap.py) and not SQLite's one writer: two new runs (a start and a fork, two forks,
a baseline and a start) racing from threads of their own, each on its own connection, for a
person's last place begin one; the other is refused and leaves no run, no event and no
workspace. (A fork and a baseline refused at the cap, on each database:
test_runs_per_person_beyond_starts.py.)

The services read and write the "default" database; here that name is given, in each thread,
a connection to the suite's PostgreSQL database (tests/settings.py: the postgresql fixture and
on_postgresql of tests/dashboard/conftest.py), so the same code runs on it as on a PostgreSQL
deployment."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

import pytest
from django.db import connections

from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary, StoredEvent
from services import baseline as baselines
from services import forks, run_cap, runs
from tests.conftest import ALIASES
from tests.dashboard.conftest import make_user, on_postgresql, run_of
from tests.dashboard.test_runs_per_person import fill, live
from tests.dashboard.test_runs_per_person_beyond_starts import read_file_at

pytestmark = [
    pytest.mark.django_db(databases=ALIASES, transaction=True),
    pytest.mark.usefixtures("recorded_runs"),
]
# How long a racer that has counted waits for the other to count too. With the lock the other
# cannot (it waits on the lock), so the first goes on when this runs out; without it, both
# count before either writes.
BOTH_COUNTED = 2.0


@pytest.fixture
def owner(postgresql):
    return make_user("owner")


@pytest.fixture
def counted_together(monkeypatch):
    """Racers that reach the person's lock at once, each waiting, once it has counted under
    the lock, for the other to count too (BOTH_COUNTED at most): where the lock holds, the
    other cannot and the second counts the first's run; where it did not, both would count
    the same live runs and both begin one."""
    real_lock, real_full = run_cap.one_start_at_a_time, run_cap.full
    at_the_lock, after_counting = threading.Barrier(2), threading.Barrier(2)
    held = threading.local()

    @contextlib.contextmanager
    def lock(person: str, using: str = "default") -> Iterator[None]:
        at_the_lock.wait(60)
        with real_lock(person, using):
            held.now = True
            try:
                yield
            finally:
                held.now = False

    def full(person: str, cap: int, places: int = 1) -> run_cap.Live | None:
        found = real_full(person, cap, places)
        if getattr(held, "now", False):  # a fork counts once before, outside the lock
            with contextlib.suppress(threading.BrokenBarrierError):
                after_counting.wait(BOTH_COUNTED)
        return found

    monkeypatch.setattr(run_cap, "one_start_at_a_time", lock)
    monkeypatch.setattr(run_cap, "full", full)


def race(*asks: Callable[[], str]) -> tuple[list[str], list[str]]:
    """Run each ask in a thread of its own on a connection of its own to PostgreSQL: the runs
    begun and the refusals."""
    began: list[str] = []
    refused: list[str] = []

    def go(ask: Callable[[], str]) -> None:
        on_postgresql()
        try:
            began.append(ask())
        except runs.AtCapacity as exc:
            refused.append(str(exc))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=go, args=(ask,)) for ask in asks]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads)
    return began, refused


@pytest.mark.usefixtures("counted_together")
@pytest.mark.parametrize(
    "racers",
    [("start", "fork"), ("fork", "start"), ("fork", "fork"), ("baseline", "start")],
    ids="-".join,
)
def test_two_new_runs_race_for_the_last_place_and_one_begins(settings, owner, racers):
    parent = run_of("first-flight")  # finished: holds no place
    at = read_file_at(parent)
    settings.RUNS_PER_PERSON = 2
    fill("owner", 1)
    top, workspaces = DjangoJournal().last_position(), set(settings.WORKSPACES.iterdir())
    summaries = RunSummary.objects.count()
    asks: dict[str, Callable[[], str]] = {
        "start": lambda: runs.start_run("repo-fix", "first-flight", by="owner", cap=2),
        "fork": lambda: forks.begin_fork(parent, at, forks.Changes(), "owner", cap=2).run_id,
        "baseline": lambda: baselines.start_baseline(parent, "owner", cap=2).run_id,
    }

    began, refused = race(*(asks[name] for name in racers))

    assert (len(began), len(refused)) == (1, 1), (began, refused)
    [winner] = began
    assert "owner has 2 live runs" in refused[0]
    assert len(live("owner")) == 2 and winner in live("owner")
    # The loser wrote nothing: every event since is the winner's, and one summary is new.
    written = StoredEvent.objects.filter(position__gt=top)
    assert set(written.values_list("run_id", flat=True)) == {winner}
    assert RunSummary.objects.count() == summaries + 1
    # At most the winner's workspace is new: none restored for a refused fork is left.
    new = {p.name for p in set(settings.WORKSPACES.iterdir()) - workspaces}
    assert new <= {f"{winner}.workspace"}, new
