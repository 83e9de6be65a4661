"""Store tests run on every configured backend (see `alias` in tests/conftest.py)."""

from __future__ import annotations

from tests.conftest import ALIASES, on_every_backend

__all__ = ["ALIASES", "on_every_backend"]
