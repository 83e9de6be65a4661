"""The stall sweep (services/steps.py revive_stalled) looks at each run it finds in turn: who
drives it, whether a letter parks it, and notes its stall. An error of one run's look that was
not foreseen (a row no event model reads is: the step parks that run) raised out of the whole
round, so no run after it was revived at any beat. Each run is looked at alone: the error is
logged once, naming the run, and the round goes on; the database's own trouble still ends the
round (services/beat.py says so in one line)."""

from __future__ import annotations

import logging
import time

import pytest
from django.db import OperationalError

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import StoppedView
from runtime import events as ev
from services import steps
from services.control import Control

pytestmark = pytest.mark.django_db

ODD = "odd<b>'\n"  # what a run's look may say of it: the log line escapes its id, not this


def started(run_id: str) -> None:
    started = ev.TeamStarted(run_id=run_id, team="solo", scenario="solo-fix", task="t")
    DjangoJournal().append(f"run-{run_id}", [started], 0)


def three_stalled(settings) -> None:
    for run_id in ("r-first", "r-odd", "r-last"):
        started(run_id)
    projection.catch_up()
    settings.STALL_SECONDS = 0
    time.sleep(0.01)


def test_an_error_in_one_runs_look_is_logged_and_the_others_are_revived(
    settings, monkeypatch, caplog
):
    three_stalled(settings)
    original = Control.parked_on

    def parked_on(self):
        if self.run_id == "r-odd":
            raise RuntimeError(ODD)
        return original(self)

    monkeypatch.setattr(Control, "parked_on", parked_on)
    with caplog.at_level(logging.ERROR, logger="services.steps"):
        assert sorted(steps.revive_stalled()) == ["r-first", "r-last"]
    [line] = [r for r in caplog.records if "r-odd" in r.getMessage()]
    assert "'r-odd'" in line.getMessage() and "RuntimeError" in line.getMessage()


def test_an_error_in_a_set_aside_runs_look_is_logged_and_the_others_are_revived(
    settings, monkeypatch, caplog
):
    three_stalled(settings)
    StoppedView.objects.create(
        projector=projection.Runs.name, run_id="r-odd", position=1, kind="TeamStarted", error="x"
    )
    original = steps.going

    def going(run_id: str) -> bool:
        if run_id == "r-odd":
            raise RuntimeError(ODD)
        return original(run_id)

    monkeypatch.setattr(steps, "going", going)
    with caplog.at_level(logging.ERROR, logger="services.steps"):
        assert sorted(steps.revive_stalled()) == ["r-first", "r-last"]
    [line] = [r for r in caplog.records if "r-odd" in r.getMessage()]
    assert "'r-odd'" in line.getMessage()


def test_the_databases_trouble_still_ends_the_round(settings, monkeypatch):
    three_stalled(settings)

    def parked_on(self):
        raise OperationalError("database is locked")

    monkeypatch.setattr(Control, "parked_on", parked_on)
    with pytest.raises(OperationalError):
        steps.revive_stalled()
