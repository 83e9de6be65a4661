"""The product's Celery app as bench/long_run.py's workers run it: with the benchmark's long
scenario (a coder reading a file BENCH_LONG_TURNS times) registered in the solo team, which
production workers never have."""

from __future__ import annotations

import os

from bench.long_run import register_scenario
from config.celery import app

register_scenario(int(os.environ.get("BENCH_LONG_TURNS", "200")))

__all__ = ["app"]
