"""Runs flown once per test process and written again into each test's own store.

A repo-fix run driven to its end costs a second or more (its agents' tools run git and pytest
in its workspace), and many tests only need such a run to stand in the store. The first
`run_of(scenario)` in a process that opted in (the `recorded_runs` fixture) flies the run for
real and keeps what it wrote: its events, stream by stream in the order of their positions,
and its workspace. Later ones append those same events through the real journal
(DjangoJournal.append, with the recorded expected versions), bring the projectors up with
their ordinary catch-up, and copy the workspace back under the test's WORKSPACES: the store
a test starts from is a real one, as the run left it.

A recording is written again only where it stands as it stood: under the same Django settings
(a test's own, such as its collector's endpoint or its step size, reach what a run writes), its
run id not in the store yet, none of its streams with an event yet, and the run planned now the
one recorded. Otherwise, and for runs stopped after some steps (whose parked flight a process
keeps warm), the run is flown for real.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils.functional import LazyObject

from journal_store import projection
from journal_store.journal import DjangoJournal
from runtime import flight
from runtime.events import Event
from runtime.journal import Recorded
from services.steps import sandbox


@dataclass(frozen=True)
class Recording:
    run_id: str
    config: dict[str, Any]  # the TeamStarted's plan, as recorded
    batches: list[tuple[str, list[Event], int]]  # stream, events, expected version
    workspaces: Path  # a copy of what the run left under WORKSPACES


class Recorder:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.kept: dict[tuple[str, str, str], Recording] = {}

    def run(self, scenario: str, by: str, fly: Any) -> str:
        """The run id of a finished run of `scenario` started by `by`: written again from its
        recording when it can be, else flown by `fly()` (and recorded, when first)."""
        key = (scenario, by, fingerprint())
        kept = self.kept.get(key)
        if kept is not None and self.fits(kept, scenario, by):
            return self.write(kept)
        journal = DjangoJournal()
        after = journal.last_position()
        before = listing(Path(settings.WORKSPACES))
        run_id = fly()
        if kept is None:
            recording = self.record(key, run_id, journal.read_all(after), before)
            if recording is not None:
                self.kept[key] = recording
        return run_id

    def record(
        self, key: tuple[str, str, str], run_id: str, records: list[Recorded], before: set[str]
    ) -> Recording | None:
        batches: list[tuple[str, list[Event], int]] = []
        for r in records:
            if batches and batches[-1][0] == r.stream:
                batches[-1][1].append(r.event)
            else:
                batches.append((r.stream, [r.event], r.version - 1))
        firsts: dict[str, int] = {}
        for stream, _, expected in batches:
            firsts.setdefault(stream, expected)
        if not records or any(expected != 0 for expected in firsts.values()):
            return None  # it wrote to a stream that was there before it: not its own past
        started = records[0].event
        if started.kind != "TeamStarted" or started.run_id != run_id:
            return None
        root = Path(settings.WORKSPACES)
        copy = self.root / f"{key[0]}-{key[1]}-{len(self.kept)}"
        copy.mkdir(parents=True)
        for name in listing(root) - before:
            shutil.copytree(root / name, copy / name, symlinks=True)
        return Recording(run_id, started.config, batches, copy)  # type: ignore[attr-defined]

    def fits(self, kept: Recording, scenario: str, by: str) -> bool:
        journal = DjangoJournal()
        if any(journal.version(stream) for stream, _, _ in kept.batches):
            return False
        planned = flight.plan(
            "repo-fix",
            scenario,
            kept.run_id,
            park=True,
            started_by=by,
            sandbox=sandbox().required,
        )
        return planned.model_dump(mode="json") == kept.config

    def write(self, kept: Recording) -> str:
        journal = DjangoJournal()
        for stream, events, expected in kept.batches:
            journal.append(stream, events, expected)
        projection.catch_up()
        root = Path(settings.WORKSPACES)
        root.mkdir(parents=True, exist_ok=True)
        for entry in kept.workspaces.iterdir():
            shutil.copytree(entry, root / entry.name, symlinks=True)
        return kept.run_id


def fingerprint() -> str:
    """The settings a run is flown under, but for WORKSPACES (each test's own directory, which
    the recording's copy goes to)."""
    names = sorted(n for n in dir(settings) if n.isupper() and n != "WORKSPACES")
    return repr([(n, evaluated(getattr(settings, n))) for n in names])


def evaluated(value: Any) -> Any:
    """A lazy setting's value: its repr changes once something has read it."""
    return str(value) if isinstance(value, LazyObject) else value


def listing(root: Path) -> set[str]:
    return {p.name for p in root.iterdir()} if root.is_dir() else set()
