"""The environment a bench runs Minutes in: production's settings (DEBUG off: with it on,
Django records every query and its parameters, which the figures would then include), over
plain HTTP on 127.0.0.1, with a throwaway secret key and a home of its own. Imports nothing
of Django: it is read before Django is set up."""

from __future__ import annotations

import uuid
from pathlib import Path


def production_env(database_url: str, home: Path) -> dict[str, str]:
    return {
        "DATABASE_URL": database_url,
        "MINUTES_HOME": str(home),
        "MINUTES_DEBUG": "0",
        "MINUTES_SECRET_KEY": "bench-" + uuid.uuid4().hex + uuid.uuid4().hex,
        "MINUTES_SSL_REDIRECT": "0",  # plain HTTP with DEBUG off
        "MINUTES_ALLOWED_HOSTS": "127.0.0.1",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
