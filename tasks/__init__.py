"""Celery tasks: runs advance in bounded steps; reconciliation; projector catch-up."""
