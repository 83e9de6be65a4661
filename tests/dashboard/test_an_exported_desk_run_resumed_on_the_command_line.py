"""A support-desk run exported from the store mid-flight, resumed with `python -m runtime
resume`: the export holds the run's own writes to its order, not the order's opening (no
run's), so its desk cannot go on from the file. The resume was accepted, wrote a turn of
failed tool calls for each of its agents ("there is no order"), and stopped with OrderMissing's
traceback at the harness's own check of the order. It is refused before anything is written."""

from __future__ import annotations

import json

import pytest

from journal_store import transfer
from journal_store.models import StoredEvent
from runtime import cli
from runtime.cli_stop import stop_path
from services import runs
from services.steps import drive_step

pytestmark = pytest.mark.django_db


def exported_mid_flight(settings, tmp_path, order: str):
    settings.STEP_TURNS = 1  # a step is a turn: two steps leave the run halfway
    run_id = runs.start_run("support-desk", "double-refund", by="owner", desk={"order_id": order})
    assert [drive_step(run_id, "test") for _ in range(2)] == ["stepped", "stepped"]
    path = tmp_path / "desk.jsonl"
    with open(path, "w") as out:
        transfer.export(run_id, out)
    kinds = [json.loads(line)["kind"] for line in path.read_text().splitlines()]
    assert "OrderPrepared" in kinds and "TeamFinished" not in kinds
    return run_id, path


def test_the_resume_is_refused_naming_the_order_and_writes_nothing(settings, tmp_path, capsys):
    run_id, path = exported_mid_flight(settings, tmp_path, "E-1")
    # The operator had asked it to stop: a refused resume does not lift the stop either.
    assert cli.main(["interrupt", str(path)]) == 0
    before = path.read_bytes()
    capsys.readouterr()
    code = cli.main(["resume", str(path), "--workspaces", str(tmp_path / "ws")])
    out, err = capsys.readouterr()
    assert code == cli.EXIT_BAD_INPUT, (out, err)
    assert err == (
        f"error: run {run_id} cannot go on here: order E-1: the run opened it and works on it, "
        "and there is no such order here, so its desk cannot go on here. Nothing of the resume "
        "was written: resume it where what it works on is (a run exported from a store, in "
        f"that store: python manage.py resume_run {run_id})\n"
    )
    assert out == ""
    assert path.read_bytes() == before
    assert stop_path(path).exists()
    assert not (tmp_path / "ws").exists()


# Its refund is issued in the tool's own thread, on a connection of its own, which sees
# only what is committed: rolled back, it finds no order.
@pytest.mark.django_db(transaction=True)
def test_one_whose_order_changed_in_it_says_the_opening_is_missing(settings, tmp_path, capsys):
    """Its own writes to the order are in the file, the opening is not: said as such."""
    settings.STEP_TURNS = 1
    run_id = runs.start_run("support-desk", "double-refund", by="owner", desk={"order_id": "E-2"})
    for _ in range(30):  # a turn a step, until the run has set the order's status
        assert drive_step(run_id, "test") == "stepped"
        if StoredEvent.objects.filter(run_id=run_id, kind="FactChanged").exists():
            break
    path = tmp_path / "desk.jsonl"
    with open(path, "w") as out:
        transfer.export(run_id, out)
    kinds = [json.loads(line)["kind"] for line in path.read_text().splitlines()]
    assert "FactChanged" in kinds and "TeamFinished" not in kinds
    before = path.read_bytes()
    capsys.readouterr()
    assert cli.main(["resume", str(path), "--workspaces", str(tmp_path)]) == cli.EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert err.startswith(
        f"error: run {run_id} cannot go on here: order E-2: this journal holds changes to the "
        "order but not its opening"
    )
    assert "Nothing of the resume was written" in err
    assert path.read_bytes() == before
