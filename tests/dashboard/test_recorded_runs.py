"""A run written again from its recording (tests/dashboard/recorded.py) stands in the store as
the flown run stood: its events, every read model and its workspace."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings
from django.db import connection

from journal_store import projection
from journal_store.models import Checkpoint, StoredEvent
from tests.dashboard.conftest import flown
from tests.dashboard.recorded import Recorder

pytestmark = pytest.mark.django_db(transaction=True)

SKIPPED = {"position", "id", "recorded_at"}  # a store's own numbering


def store() -> dict[str, list]:
    """Every row of the journal and its read models, without the store's own numbering."""
    kept: dict[str, list] = {}
    for model in apps.get_app_config("journal_store").get_models():
        if model in (Checkpoint,):
            continue
        fields = [f.attname for f in model._meta.concrete_fields if f.attname not in SKIPPED]
        kept[model.__name__] = sorted(
            (repr(row) for row in model.objects.values_list(*fields)), key=str
        )
    return kept


def number_from(position: int) -> None:
    """The store's next event is at `position`."""
    table = StoredEvent._meta.db_table
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(
                "UPDATE sqlite_sequence SET seq = %s WHERE name = %s", [position - 1, table]
            )
        else:
            cursor.execute(
                "SELECT setval(pg_get_serial_sequence(%s, 'position'), %s)", [table, position - 1]
            )


def workspace(run_id: str) -> tuple[str, str]:
    path = Path(settings.WORKSPACES) / f"{run_id}.workspace"
    git = ["git", "-C", str(path)]
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    files = subprocess.run([*git, "status", "--porcelain", "--ignored"], capture_output=True)
    return head, files.stdout.decode()


@pytest.mark.parametrize("scenario", ["first-flight", "premature-done"])
def test_a_recorded_run_is_written_again_as_it_was_flown(owner, tmp_path, scenario):
    recorder = Recorder(tmp_path / "recordings")
    run_id = recorder.run(scenario, "owner", lambda: flown(scenario, "owner"))
    assert len(recorder.kept) == 1
    was, files = store(), workspace(run_id)
    assert was["StoredEvent"] and was["RunSummary"]
    # The store and the workspaces emptied, as a new test's are, its positions numbered
    # from where the flown run's began (read models cite them)
    first = StoredEvent.objects.order_by("position").values_list("position", flat=True)[0]
    StoredEvent.objects.all().delete()
    projection.rebuild()
    number_from(first)
    shutil.rmtree(settings.WORKSPACES)
    assert not StoredEvent.objects.exists()

    again = recorder.run(scenario, "owner", lambda: pytest.fail("flown again"))
    assert again == run_id
    assert store() == was
    assert workspace(run_id) == files


def test_a_recording_is_not_written_where_its_run_is_already(owner, tmp_path):
    recorder = Recorder(tmp_path / "recordings")
    first = recorder.run("premature-done", "owner", lambda: flown("premature-done", "owner"))
    second = recorder.run("premature-done", "owner", lambda: flown("premature-done", "owner"))
    assert second != first
    assert (
        StoredEvent.objects.filter(run_id=second).count()
        == StoredEvent.objects.filter(run_id=first).count()
    )


def test_a_recording_is_not_written_under_other_settings(owner, tmp_path, settings):
    recorder = Recorder(tmp_path / "recordings")
    first = recorder.run("premature-done", "owner", lambda: flown("premature-done", "owner"))
    StoredEvent.objects.all().delete()
    projection.rebuild()
    settings.SANDBOX = "off" if settings.SANDBOX == "required" else "required"
    second = recorder.run("premature-done", "owner", lambda: flown("premature-done", "owner"))
    assert second != first
