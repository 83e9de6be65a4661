"""An import that waits on SQLite's write lock for longer than a connection waits (another
import of a large journal holds it while it writes) ends with a sentence, not a traceback:
manage.py import_journal printed thirty lines of Django ending "database is locked". The
sentence says the database was busy, for how long the command waited, that its work was
rolled back, and to try again; nothing of the file is stored. Then the same file imports."""

from __future__ import annotations

import io
import json
import sqlite3

import pytest
from django.db import connection

from config import commandline
from journal_store.models import StoredEvent

pytestmark = pytest.mark.django_db(transaction=True)

T = 1_700_000_000.0


def journal(tmp_path) -> str:
    path = tmp_path / "waiting.jsonl"
    rows = [
        {"kind": "BudgetDebited", "id": f"{n:032x}", "t": T, "run_id": "r-waiting", "amount": 1}
        for n in range(1, 4)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


@pytest.fixture
def short_wait():
    """The default connection waits 0.2 s for the write lock, not 30 (the wait is why)."""
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's write lock")
    options = connection.settings_dict["OPTIONS"]
    was = options["timeout"]
    options["timeout"] = 0.2
    connection.close()
    yield
    options["timeout"] = was
    connection.close()


def test_an_import_kept_waiting_by_another_writer_says_so_and_stores_nothing(tmp_path, short_wait):
    path = journal(tmp_path)
    before = StoredEvent.objects.count()
    holder = sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer, holding the lock
    try:
        said = io.StringIO()
        status = commandline.run(["manage.py", "import_journal", path], said)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert status == commandline.NO_DATABASE
    text = said.getvalue()
    assert "Traceback" not in text and text.count("\n") == 1
    assert text.startswith("the database, the SQLite file ")
    assert "was busy: another writer held its write lock for longer than the 0.2 s" in text
    assert text.rstrip().endswith("rolled back; try again when that writer is done")
    assert StoredEvent.objects.count() == before
    # the writer gone, the same file imports
    assert commandline.run(["manage.py", "import_journal", path], io.StringIO()) == 0
    assert StoredEvent.objects.filter(run_id="r-waiting").count() >= 3
