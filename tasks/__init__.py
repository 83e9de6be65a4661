"""Celery tasks: runs advance in bounded steps; specialists; reconciliation of stalled runs and
effects left in flight.

Tasks take ids, never objects, and read everything else from the journal. This package may
import runtime, teams, journal_store and desk; dashboard imports it, never the reverse.
"""
