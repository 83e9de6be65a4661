"""Shared fixtures for the whole suite."""

from __future__ import annotations

import os

# Crash-test seams must never leak in from the environment of whoever runs the suite.
os.environ.pop("MINUTES_FAULT", None)
os.environ.pop("MINUTES_EXEC_LOG", None)

pytest_plugins = ["tests.fakellm"]  # the `server` fixture: a fake OpenAI-compatible endpoint
