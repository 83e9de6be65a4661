"""The suite's flush command (management/commands/flush.py), installed by tests/settings.py
only: what a transactional test's teardown calls."""
