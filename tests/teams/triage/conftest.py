"""Fixtures of the triage team's tests."""

from __future__ import annotations

import pytest

from runtime.mcp.client import McpSurface
from teams.triage.surface import support_servers


@pytest.fixture
def orders(tmp_path):
    """The real orders server on a book of the test's own: (its surface, the book's path)."""
    book = tmp_path / "orders-book.sqlite3"
    with McpSurface(support_servers(["orders"], book=book), call_timeout=10) as surface:
        yield surface, book
