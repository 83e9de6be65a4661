from __future__ import annotations

import pytest

from runtime.journal import MemoryJournal
from tests.runtime.journal_contract import JournalContract


class TestMemoryJournal(JournalContract):
    @pytest.fixture
    def journal(self):
        return MemoryJournal()
