"""The Celery app: configured from Django's settings (the CELERY_ names), tasks from tasks/."""

from __future__ import annotations

import os
from pathlib import Path

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("minutes")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.imports = ["tasks.runs", "tasks.effects", "tasks.fanout", "tasks.bench"]


@app.on_after_configure.connect
def make_broker_folders(sender: Celery, **_: object) -> None:
    """The embedded broker keeps its queue in folders, which must exist before anyone uses it."""
    options = sender.conf.broker_transport_options or {}
    for key in ("data_folder_in", "data_folder_out", "control_folder"):
        if key in options:
            Path(options[key]).mkdir(parents=True, exist_ok=True)
