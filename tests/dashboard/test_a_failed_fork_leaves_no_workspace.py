"""A fork whose events cannot be written (another writer took its stream first, an integrity
error) leaves no workspace behind: the fork's repository is restored before the write, and a
failed write left a directory for a run that does not exist."""

from __future__ import annotations

import pytest
from django.conf import settings

from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary
from runtime import fork
from runtime.journal import WrongExpectedVersion
from services import forks
from tests.dashboard.conftest import run_of

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_fork_whose_write_fails_removes_the_workspace_it_restored(owner, monkeypatch):
    parent = run_of("first-flight")
    at = next(
        r.position for r in DjangoJournal().read(f"run-{parent}") if r.event.kind == "ToolReturned"
    )
    restored: list[str] = []
    restore = fork.restore_workspace

    def restore_and_note(planned, root):
        restore(planned, root)
        restored.append(planned.config.workspace)
        assert (root / planned.config.workspace / ".git").is_dir()

    def taken(journal, planned):
        raise WrongExpectedVersion("run-r-taken", 0, 1)

    monkeypatch.setattr(fork, "restore_workspace", restore_and_note)
    monkeypatch.setattr(fork, "write", taken)
    runs_before = RunSummary.objects.count()
    with pytest.raises(WrongExpectedVersion):
        forks.fork_run(parent, at, fork.Changes(), "owner")
    assert restored
    assert not (settings.WORKSPACES / restored[0]).exists()
    assert RunSummary.objects.count() == runs_before
