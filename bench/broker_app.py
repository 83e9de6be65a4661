"""The product's Celery app with transport options from the environment, for bench/workers.py.

Minutes' settings support only Redis (embedded or not); kombu's filesystem and SQLAlchemy
transports are measured for the record (docs/broker.md), so their workers need options that
the settings no longer give: BENCH_BROKER_OPTIONS, a JSON object.
"""

from __future__ import annotations

import json
import os

from config.celery import app

app.conf.broker_transport_options = json.loads(os.environ.get("BENCH_BROKER_OPTIONS", "{}"))

__all__ = ["app"]
