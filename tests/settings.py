"""The suite's settings: Minutes' own, plus the second database the store tests run on.

When tests/services.py has started (or been given) a PostgreSQL server, it is the database
"postgres" beside the default SQLite one, so the journal and projection tests run on both.
Production settings know nothing of it.
"""

from __future__ import annotations

import os

from config import env
from config.settings import *  # noqa: F403
from config.settings import BASE_DIR, DATABASES, INSTALLED_APPS

# One turn per step: every turn boundary is then also a cold resume from the journal, the
# strictest check that driving in steps writes what one session would. Tests of multi-turn
# steps set it themselves.
STEP_TURNS = env.number("MINUTES_STEP_TURNS", 1, minimum=1)
# And no flight is kept warm between steps, so each step replays the run's history from the
# journal. The warm path has tests of its own (tests/runtime/test_warm.py,
# tests/tasks/test_warm_steps.py), and the real workers of tests/tasks run the shipped settings.
WARM_RUNS = env.number("MINUTES_WARM_RUNS", 0, minimum=0)

# The SQLite test database commits without waiting for the disk (WAL's synchronous=NORMAL: a
# commit is lost only when the machine goes down, never when a process dies), as the suite's
# PostgreSQL cluster runs with fsync off: the suite tests behaviour, not power-loss
# durability. A journal append committed in 1.5 ms at FULL and 0.18 ms here, a transactional
# test's flush in 0.042 s and 0.020 s (medians, in turns). Processes the tests start read
# DATABASE_URL and keep FULL; test_loop_snapshots.py sets FULL to see a snapshot restore it.
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    DATABASES["default"]["OPTIONS"]["init_command"] = (
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
    )

# A transactional test's flush keeps the content types and permissions migrate made, and makes
# none again (tests/suite_flush/management/commands/flush.py says when and why that is the
# same to a test): a flush on SQLite took 0.031 s, 0.026 s of it remaking them.
INSTALLED_APPS = [*INSTALLED_APPS, "tests.suite_flush"]

if os.environ.get("MINUTES_TEST_POSTGRES_URL"):
    DATABASES["postgres"] = env.database(
        os.environ["MINUTES_TEST_POSTGRES_URL"], BASE_DIR, "MINUTES_TEST_POSTGRES_URL"
    )
    # Django's backend, flushing with DELETE where TRUNCATE took 0.2 s a transactional test
    # (tests/postgres_backend/base.py says why that is the same to a test).
    DATABASES["postgres"]["ENGINE"] = "tests.postgres_backend"
