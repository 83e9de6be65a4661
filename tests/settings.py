"""The suite's settings: Minutes' own, plus the second database the store tests run on.

When tests/services.py has started (or been given) a PostgreSQL server, it is the database
"postgres" beside the default SQLite one, so the journal and projection tests run on both.
Production settings know nothing of it.
"""

from __future__ import annotations

import os

from config import env
from config.settings import *  # noqa: F403
from config.settings import BASE_DIR, DATABASES

if os.environ.get("MINUTES_TEST_POSTGRES_URL"):
    DATABASES["postgres"] = env.database(
        os.environ["MINUTES_TEST_POSTGRES_URL"], BASE_DIR, "MINUTES_TEST_POSTGRES_URL"
    )
