""" "Check replay" keeps its verdict in the shared cache (the database's: settings.CACHES),
so another web process answers a second check of an unchanged run from the first, as a
restarted one does; before, the cache was each process's own memory, and every gunicorn worker
flew the run again. A kept verdict is trusted only when it is exactly what was kept for this
journal: an entry the cache cannot decode, of another journal, or with a field missing, unknown
or of another type is replayed again and written over."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.cache import cache
from django.db import connections

from journal_store.models import CacheEntry
from runtime import flight
from services import verdicts
from tests.dashboard.conftest import run_of

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("recorded_runs")]
ROOT = Path(__file__).resolve().parents[2]

# Another process, with the shipped settings on the suite's database: it checks the replay
# through the same service the page calls, and may not fly the run itself.
IN_ANOTHER_PROCESS = """
import dataclasses, json
from runtime import flight

def flown_again(journal, run_id):
    raise SystemExit("this process flew the run again")

flight.replay = flown_again
from services import runs
print(json.dumps(dataclasses.asdict(runs.replay({run_id!r}))))
"""


@pytest.fixture
def flown(owner):
    return run_of("first-flight")


@pytest.fixture
def flights(monkeypatch):
    """The run ids this process flew again to check a replay."""
    flown_again: list[str] = []
    replay = flight.replay

    def counted(journal, run_id):
        flown_again.append(run_id)
        return replay(journal, run_id)

    monkeypatch.setattr(flight, "replay", counted)
    return flown_again


def check(client, run_id: str) -> str:
    return client.post(f"/runs/{run_id}/replay", HTTP_HX_REQUEST="true").content.decode()


def test_a_verdict_checked_in_one_process_is_read_in_another(as_owner, flown, flights, tmp_path):
    assert "identical: all" in check(as_owner, flown)
    assert flights == [flown]
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": f"sqlite:///{connections['default'].settings_dict['NAME']}",
        "MINUTES_HOME": str(tmp_path / "home"),
    }
    other = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", IN_ANOTHER_PROCESS.format(run_id=flown)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert other.returncode == 0, other.stderr
    answer = json.loads(other.stdout.strip().splitlines()[-1])
    assert answer["identical"] is True
    assert answer["events"] == verdicts.kept(verdicts.journal_of(flown)).events > 0


def forged(journal: dict) -> dict:
    """A verdict in the form kept, saying what the real one does not."""
    return {"of": journal, **dataclasses.asdict(flight.ReplayReport(False, 3, "forged"))}


# Each way a kept entry can be wrong, done to the entry the first check kept.
SPOILED = {
    "gone": lambda key, journal: CacheEntry.objects.all().delete(),
    "undecodable": lambda key, journal: CacheEntry.objects.update(value="not a pickle"),
    "not kept as text": lambda key, journal: cache.set(key, flight.ReplayReport(False, 3, "x")),
    "not JSON": lambda key, journal: cache.set(key, "identical"),
    "of another journal": lambda key, journal: cache.set(
        key, json.dumps(forged({**journal, "position": journal["position"] + 1}))
    ),
    "a field missing": lambda key, journal: cache.set(
        key, json.dumps({k: v for k, v in forged(journal).items() if k != "read_back"})
    ),
    "a field unknown": lambda key, journal: cache.set(
        key, json.dumps({**forged(journal), "verdict": "forged"})
    ),
    "a field of another type": lambda key, journal: cache.set(
        key, json.dumps({**forged(journal), "events": "3"})
    ),
}


@pytest.mark.parametrize("how", sorted(SPOILED))
def test_a_kept_verdict_that_is_not_what_was_kept_is_replayed_again(as_owner, flown, flights, how):
    assert "identical: all" in check(as_owner, flown)
    journal = verdicts.journal_of(flown)
    SPOILED[how](verdicts.key(journal), journal)
    page = check(as_owner, flown)
    assert "identical: all" in page and "forged" not in page
    assert flights == [flown, flown]
    assert verdicts.kept(journal).identical is True  # written over with the real verdict
    assert "identical: all" in check(as_owner, flown)
    assert flights == [flown, flown]


def test_an_entry_in_the_kept_form_is_read_back_as_it_says(as_owner, flown, flights):
    """The check above cannot pass by refusing everything: the form `forged` builds, saying
    what a replay says, is read back."""
    assert "identical: all" in check(as_owner, flown)
    journal = verdicts.journal_of(flown)
    real = verdicts.kept(journal)
    cache.set(verdicts.key(journal), json.dumps(forged(journal)))
    page = check(as_owner, flown)
    assert "differs forged" in page and flights == [flown]
    verdicts.keep(journal, real)
    assert "identical: all" in check(as_owner, flown) and flights == [flown]
