"""A PostgreSQL backup restored over the store it was taken from, by the commands docs/journal.md
gives (run as written, only the database's name and the file's path put in): the store is the
backup's moment again. Runs written after the backup are gone, every earlier run exports the
same bytes, a person and a decision made since are gone, a new append takes the next position
(the sequence came back with the tables), and `migrate --check` has nothing to do; also over a
store migrated further than the backup, as when Minutes was upgraded since, where pg_restore
--clean left the newer migrations' tables and `migrate` then stopped at "already exists".

Each store is a database of its own on the suite's cluster, owned by a role of its own that is
no superuser, as a deployment's is; Minutes runs on it in processes of its own (DATABASE_URL).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
from django.conf import settings

from tests.conftest import need_postgres

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "journal.md"

# Run in the store's own process: runs `a` and `b` with a dead letter each, and a person with
# a token; then the backup, and run `a` exported as it stands in it.
BEFORE = """
from django.contrib.auth.models import User
from django.core.management import call_command
from dashboard.models import ApiToken
from journal_store.journal import DjangoJournal
from journal_store.projection import catch_up
from runtime.events import BudgetDebited, DeadLettered

call_command("migrate", verbosity=0)
journal = DjangoJournal("default")
for run in ("a", "b"):
    letter = DeadLettered(run_id=run, letter_id=f"{run}:1", reason="stuck", t=1.0)
    journal.append(f"run-{run}", [BudgetDebited(run_id=run, amount=2), letter], 0)
ApiToken.issue(User.objects.create_user("ann", password="x"), "ann's script")
catch_up()
if OLDER:
    # The store as the older Minutes left it: projected by today's code (whose read models
    # may have columns the older lacked), then migrated back to the older's tables.
    call_command("migrate", "journal_store", OLDER, verbosity=0)
call_command("backup", DUMP, verbosity=0)
call_command("export_journal", "a", output=EXPORTED + ".before")
seen = facts()
if OLDER:
    call_command("migrate", verbosity=0)  # Minutes upgraded after the backup
print(json.dumps(seen))
"""

# After the backup: runs `c` and `d`, an event more in run `a`, ann's decision on a's dead
# letter, and another person with a token.
AFTER = """
from django.contrib.auth.models import User
from dashboard.models import ApiToken
from journal_store.journal import DjangoJournal
from journal_store.projection import catch_up
from runtime.events import BudgetDebited, DeadLetterDiscarded

journal = DjangoJournal("default")
for run in ("c", "d"):
    journal.append(f"run-{run}", [BudgetDebited(run_id=run, amount=3)], 0)
journal.append("run-a", [DeadLetterDiscarded(run_id="a", letter_id="a:1", by="ann", reason="no")], 2)
ApiToken.issue(User.objects.create_user("bob", password="x"), "bob's script")
catch_up()
print(json.dumps(facts()))
"""

# After the restore: run `a` exported again; the store's facts; whether the read models had
# anything left to apply; migrate --check; then an append to run `a` and a new run.
RESTORED = """
from django.core.management import call_command
from journal_store.journal import DjangoJournal
from journal_store.projection import catch_up
from runtime.events import BudgetDebited

call_command("export_journal", "a", output=EXPORTED + ".after")
seen = facts()
applied = catch_up()
try:
    call_command("migrate", check=True, verbosity=0)
    unapplied = False
except SystemExit:
    unapplied = True
journal = DjangoJournal("default")
more = journal.append("run-a", [BudgetDebited(run_id="a", amount=5)], 2)
new = journal.append("run-e", [BudgetDebited(run_id="e", amount=7)], 0)
positions = [r.position for r in more + new]
print(json.dumps({"facts": seen, "applied": applied, "unapplied": unapplied, "next": positions}))
"""

FACTS = """
import json, sys
import django
django.setup()
from django.db import connection

def facts():
    with connection.cursor() as cursor:
        def rows(sql):
            cursor.execute(sql)
            return [list(row) for row in cursor.fetchall()]
        return {
            "events": rows("SELECT position, stream, version, kind, data FROM journal_event "
                           "ORDER BY position"),
            "runs": rows("SELECT run_id, status FROM projection_run ORDER BY run_id"),
            "letters": rows("SELECT letter_id, decided_by FROM projection_dead_letter "
                            "ORDER BY letter_id"),
            "people": rows("SELECT u.username, t.name FROM auth_user u "
                           "LEFT JOIN dashboard_apitoken t ON t.user_id = u.id ORDER BY 1"),
            "tables": rows("SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
                           "ORDER BY 1"),
        }
"""


@pytest.fixture
def store(tmp_path):
    """A database of its own, owned by a role of its own (no superuser), dropped afterwards;
    the environment Minutes and PostgreSQL's tools reach it with."""
    need_postgres()
    suite = settings.DATABASES["postgres"]
    server = {"host": suite["HOST"], "port": suite["PORT"], "user": suite["USER"]}
    tag = uuid.uuid4().hex[:10]
    name, role, password = f"store_{tag}", f"minutes_{tag}", f"pw-{tag}"
    with psycopg.connect(dbname="postgres", autocommit=True, **server) as admin:
        admin.execute(f"CREATE ROLE \"{role}\" LOGIN PASSWORD '{password}'")
        admin.execute(f'CREATE DATABASE "{name}" OWNER "{role}"')
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "MINUTES_DEBUG": "1",
        "MINUTES_HOME": str(tmp_path / "home"),
        "DATABASE_URL": f"postgres://{role}:{password}@{server['host']}:{server['port']}/{name}",
        # What the docs' commands are told to connect with: the connection of DATABASE_URL.
        "PGHOST": str(server["host"]),
        "PGPORT": str(server["port"]),
        "PGUSER": role,
        "PGPASSWORD": password,
    }
    yield name, env
    with psycopg.connect(dbname="postgres", autocommit=True, **server) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'DROP ROLE IF EXISTS "{role}"')


def in_minutes(env, code: str, **names) -> dict:
    """Run `code` in a process of Minutes' own on the store; what it printed, as JSON."""
    given = "".join(f"{key} = {value!r}\n" for key, value in names.items())
    done = subprocess.run(
        [sys.executable, "-c", FACTS + given + code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def documented_restore() -> str:
    """The commands docs/journal.md gives for restoring over the store: its sh block that
    runs pg_restore --clean."""
    blocks = re.findall(r"```sh\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S)
    [block] = [b for b in blocks if "pg_restore --clean" in b]
    return block


def restore(name: str, env, dump: Path) -> subprocess.CompletedProcess[str]:
    block = documented_restore()
    assert "--dbname minutes " in block and "/srv/backups/minutes-2026-12-07.dump" in block
    commands = block.replace("--dbname minutes ", f"--dbname {name} ").replace(
        "/srv/backups/minutes-2026-12-07.dump", str(dump)
    )
    return subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", commands],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def restored_over(store, tmp_path, older: str = "") -> tuple[dict, dict, dict]:
    """Back up the store, write more to it, restore the backup over it as the docs say:
    the facts at the backup, after the writes, and after the restore."""
    name, env = store
    dump, exported = tmp_path / "minutes.dump", str(tmp_path / "a.jsonl")
    at_backup = in_minutes(env, BEFORE, DUMP=str(dump), EXPORTED=exported, OLDER=older)
    written = in_minutes(env, AFTER)
    done = restore(name, env, dump)
    assert (done.returncode, done.stderr) == (0, "")
    after = in_minutes(env, RESTORED, EXPORTED=exported)
    before_bytes = Path(exported + ".before").read_bytes()
    assert before_bytes and Path(exported + ".after").read_bytes() == before_bytes
    return at_backup, written, after


def test_a_backup_restored_over_the_store_is_the_store_at_the_backup(store, tmp_path):
    at_backup, written, after = restored_over(store, tmp_path)
    assert [e[1] for e in written["events"]] == ["run-a"] * 2 + ["run-b"] * 2 + [
        "run-c",
        "run-d",
        "run-a",
    ]
    assert written["letters"] == [["a:1", "ann"], ["b:1", ""]]
    assert [p[0] for p in written["people"]] == ["ann", "bob"]

    assert after["facts"] == at_backup
    assert [e[:3] for e in at_backup["events"]] == [
        [1, "run-a", 1],
        [2, "run-a", 2],
        [3, "run-b", 1],
        [4, "run-b", 2],
    ]
    assert at_backup["letters"] == [["a:1", ""], ["b:1", ""]]  # ann's decision undone
    assert at_backup["people"] == [["ann", "ann's script"]]  # bob and his token gone
    assert [r[0] for r in at_backup["runs"]] == ["a", "b"]
    # The read models are the backup's too: nothing in the journal was left to apply.
    assert after["applied"] == 0
    assert after["unapplied"] is False
    # The next position follows the backup's last (the restored sequence), not the last the
    # store had reached (7), nor 1 (a sequence left at its start: a duplicate key).
    assert after["next"] == [5, 6]


def test_an_older_backup_restored_over_an_upgraded_store_migrates(store, tmp_path):
    """The backup taken at journal_store 0048, the store migrated to the newest since (0049
    made projection_open_effect): the docs' commands leave no table the backup did not hold,
    so the same `migrate` that brings any older backup up to date goes through."""
    _, env = store
    at_backup, written, after = restored_over(store, tmp_path, older="0048")
    assert "projection_open_effect" in [t[0] for t in written["tables"]]
    assert "projection_open_effect" not in [t[0] for t in after["facts"]["tables"]]
    assert after["facts"] == at_backup
    assert after["unapplied"] is True
    done = subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v0"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (done.returncode, done.stderr) == (0, "")
    checked = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--check"], cwd=ROOT, env=env, timeout=300
    )
    assert checked.returncode == 0
