"""Settings for the benches that measure SQLite and PostgreSQL side by side in one process
(bench/store.py, bench/coordination.py): Minutes' own, and the private cluster they start as
the database "postgres" beside the default. Production settings have one database, and the
suite's second (tests/settings.py) comes with the suite's way of driving runs."""

from __future__ import annotations

import os

from config import env
from config.settings import *  # noqa: F403
from config.settings import BASE_DIR, DATABASES

if os.environ.get("MINUTES_BENCH_POSTGRES_URL"):
    DATABASES["postgres"] = env.database(
        os.environ["MINUTES_BENCH_POSTGRES_URL"], BASE_DIR, "MINUTES_BENCH_POSTGRES_URL"
    )
