"""Store tests run on every configured backend: SQLite always, PostgreSQL when available."""

from __future__ import annotations

import pytest
from django.conf import settings

ALIASES = [alias for alias in ("default", "postgres") if alias in settings.DATABASES]
BACKENDS = ["default", "postgres"]


@pytest.fixture(params=BACKENDS, ids=["sqlite", "postgres"])
def alias(request):
    if request.param not in settings.DATABASES:
        pytest.skip(
            "PostgreSQL is not available here (install it, or set MINUTES_TEST_POSTGRES_URL)"
        )
    return request.param


def on_every_backend(transaction: bool = False):
    """The django_db mark for tests that take the `alias` fixture."""
    return pytest.mark.django_db(databases=ALIASES, transaction=transaction)
