"""A rebuild of the views writes every row of the searched tables again, and with them their
search copies (journal_store/substrings.py): on PostgreSQL the copies' GIN indexes kept the
first writing's entries beside the second's, which VACUUM does not give back, and a queue's
look-up of a letter's id read its index in 3.3 ms where 0.23 did once it was made again
(20,000 letters). `rebuild_projections` makes them again, concurrently, once it has rebuilt;
the sizes are asserted, not the time."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from io import StringIO
from urllib.parse import urlsplit

import pytest
from django.core.management import call_command
from django.db import connections

from journal_store import queues, substrings
from journal_store.models import DeadLetter
from journal_store.projection import PROJECTORS
from tests.conftest import need_postgres
from tests.services import PG_ENV
from tests.test_manage_says_what_is_wrong import manage

LETTERS = 3_000
SEARCHED = queues.DEAD_LETTERS.searched


def written(using: str) -> None:
    DeadLetter.objects.using(using).bulk_create(
        DeadLetter(
            letter_id=f"r-{n:012x}:1",
            run_id=f"r-{n:012x}",
            status="open",
            position=n + 1,
            created_at=datetime(2026, 12, 1, tzinfo=UTC) + timedelta(minutes=n),
            reason=f"no reply by turn {n % 12}",
        )
        for n in range(LETTERS)
    )


def size(using: str) -> int:
    """The bytes of the copy's index of the letters' ids."""
    with connections[using].cursor() as cursor:
        cursor.execute("SELECT pg_relation_size(%s)", [f"{SEARCHED.words}_letter_id"])
        (found,) = cursor.fetchone()
    return int(found)


def written_again(using: str) -> None:
    """What a rebuild does to the copy: every letter deleted and written back."""
    letters = list(DeadLetter.objects.using(using).all())
    DeadLetter.objects.using(using).all().delete()
    DeadLetter.objects.using(using).bulk_create(letters)


@pytest.mark.django_db(databases=["default", "postgres"], transaction=True)
def test_the_copies_indexes_made_again_give_back_what_a_second_writing_took():
    need_postgres()
    written("postgres")
    once = size("postgres")
    for _ in range(3):  # three rebuilds before a VACUUM: well above a few pages of noise
        written_again("postgres")
    with connections["postgres"].cursor() as cursor:
        cursor.execute(f"VACUUM {SEARCHED.words}")  # which gives none of it back
    grown = size("postgres")
    assert grown > once, (once, grown)
    assert substrings.compact([SEARCHED], "postgres") == [SEARCHED.words]
    # Made in one go, it is about the first writing's size (a few pages either way): most of
    # what the writings after took is given back.
    assert size("postgres") - once < (grown - once) / 2, (once, grown, size("postgres"))
    few = SEARCHED.few(["r-0000000000ff:1"], "postgresql", "postgres")
    assert few == ["r-0000000000ff:1"]  # the index made again still names the letter


@pytest.mark.django_db(transaction=True)
def test_on_sqlite_nothing_is_made_again():
    assert substrings.compact(list(queues.SEARCHED)) == []
    out, err = StringIO(), StringIO()
    call_command("rebuild_projections", stdout=out, stderr=err)
    # The rebuild's one line, and nothing of indexes: FTS5's segments are the beat's to merge.
    assert out.getvalue().splitlines() == [f"rebuilt {', '.join(PROJECTORS)} from 0 events"]
    assert err.getvalue() == ""


@pytest.mark.django_db(databases=["default", "postgres"], transaction=True)
def test_rebuild_projections_makes_the_rebuilt_copies_indexes_again(tmp_path):
    """The command as someone runs it on their PostgreSQL: the copies of the views it rebuilt,
    and only those (the dead letters', not the runs' nor the conflicts')."""
    need_postgres()
    written("postgres")
    name = connections["postgres"].settings_dict["NAME"]
    url = urlsplit(os.environ[PG_ENV])._replace(path=f"/{name}").geturl()
    home = str(tmp_path / "home")
    done = manage(
        "rebuild_projections", "--only", "dead_letters", DATABASE_URL=url, MINUTES_HOME=home
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == f"made the search indexes of {SEARCHED.words} again"


@pytest.mark.django_db(transaction=True)
def test_indexes_that_cannot_be_made_again_are_said_and_the_rebuild_stands(monkeypatch):
    """A user that does not own the tables may not REINDEX them: the rebuild, committed, stands,
    and the command says what is left and how to do it, where it ended in a traceback."""
    from django.db import DatabaseError

    def refused(tables, using="default"):
        raise DatabaseError("must be owner of table projection_run_words\n")

    monkeypatch.setattr(substrings, "compact", refused)
    out, err = StringIO(), StringIO()
    call_command("rebuild_projections", "--only", "runs", stdout=out, stderr=err)
    assert out.getvalue().startswith("rebuilt runs from ")
    assert err.getvalue() == (
        "the search indexes were not made again (must be owner of table projection_run_words): "
        "searches work, somewhat slower, until the tables' owner runs "
        f"REINDEX TABLE CONCURRENTLY {substrings.RUNS.words}\n"
    )
