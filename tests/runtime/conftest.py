"""Fixtures for the runtime's tests that more than one file uses."""

from __future__ import annotations

import resource
import signal

import pytest


@pytest.fixture
def file_size_limit():
    """limit(n): files this process writes may grow to n bytes, past which a write fails with
    EFBIG (a real failure part way through a write, as a full disk gives); limit(None) lifts it,
    as the end of the test does."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    signal_was = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # else the signal ends us
    try:
        yield lambda n: resource.setrlimit(resource.RLIMIT_FSIZE, (soft if n is None else n, hard))
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, signal_was)
