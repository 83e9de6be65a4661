"""Forking a stored run at one of its events (runtime/fork.py decides what the fork is); with
an idempotency key (services/keys.py), a fork asked again answers the fork the first made."""

from __future__ import annotations

import logging
from contextlib import nullcontext

from django.conf import settings
from django.db import InterfaceError, InternalError, OperationalError

from config.commandline import first_line
from journal_store import projection
from journal_store.journal import DjangoJournal
from runtime import flight, fork, fork_workspace, streams
from runtime.events import RunForked
from runtime.journal import DuplicateEventId, Recorded, WrongExpectedVersion
from runtime.team import Services, split_models
from services import keys, local_model, queue, run_cap, specialists
from services.runs import (
    Begun,
    KeyReused,
    KeyTaken,
    ModelUnavailable,
    RunError,
    RunNotFound,
    endpoint_unusable,
    make_room,
)
from services.steps import provided, sandbox

Changes = fork.Changes
log = logging.getLogger(__name__)
# What a database says when it cannot take a write now: locked or busy past the timeout, the
# disk full, read-only (InternalError on PostgreSQL), the connection gone. Not bad data nor a
# bug (DataError, ProgrammingError, a malformed file): "try again" would not help those.
UNAVAILABLE = (OperationalError, InternalError, InterfaceError)


class ForkRefused(RunError):
    """The fork cannot be made as asked (a 400): the message says what and where; `field` and
    `why` as runtime.fork.ForkRefused's (the change at fault, and the message without it)."""

    def __init__(self, why: str, field: str = "") -> None:
        super().__init__(f"{field}: {why}" if field else why)
        self.why, self.field = why, field


class ForkOfUnreadable(RunError):
    """The run's own settings do not validate here (an imported journal's): no fork of it can
    be made, whatever is changed. A 409, as its replay and its baseline answer the same."""


class ForkNotWritten(RunError):
    """The fork was checked and its workspace restored, but the database did not take its
    events (busy with another writer past its timeout, read-only, full, gone): nothing of it
    was written and the workspace was removed. The same fork asked again may go through
    (a 503)."""

    def __init__(self, parent: str, failure: BaseException, workspace: bool) -> None:
        # The first line of the database's own words: the rest goes to the log.
        super().__init__(
            f"the fork of run {parent} was not written: the database did not take its events "
            f"({first_line(failure)}). {nothing_left(workspace)}; try again in a moment"
        )


class ForkCollided(RunError):
    """Another writer wrote one of the new fork's streams first (its id taken): nothing of the
    fork was written and its workspace was removed; asked again, it gets another id (a 409)."""

    def __init__(self, parent: str, failure: BaseException, workspace: bool) -> None:
        super().__init__(
            f"the fork of run {parent} was not written: another writer took one of its "
            f"streams first ({failure}). {nothing_left(workspace)}; try again"
        )


def nothing_left(workspace: bool) -> str:
    if workspace:
        return "Nothing of the fork was written, and the workspace made for it was removed"
    return "Nothing of the fork was written"


def host() -> Services:
    """The world a fork goes on live in: the workers' (services/steps.py)."""
    return Services(sandbox=sandbox(), provided=provided(), models=settings.MODELS)


def first_letter(run_id: str) -> Recorded | None:
    """The run's first dead letter in its own journal, or decision on one (fork.first_letter):
    no fork starts at it or after it."""
    kinds = [kind.kind for kind in fork.LETTERS]
    # A seek by the (run, kind, position) index, as letters.events_of reads them: asked by
    # the stream, SQLite read the run's stream to its end for the letters a run seldom has
    # (5 ms at 20,000 events, on every timeline page and poll and the fork page), and took
    # the (run, position) index for the order by. `+position` keeps the order off the index.
    found = DjangoJournal().select(
        f"WHERE run_id = %s AND kind IN ({', '.join(['%s'] * len(kinds))}) AND stream = %s "
        "ORDER BY +position LIMIT 1",
        [run_id, *kinds, streams.journal(run_id)],
    )
    return found[0] if found else None


def event_at(run_id: str, at: int) -> Recorded | None:
    """The run's event at position `at`, where a fork of it would be made after; None when
    none of its events is there."""
    found = DjangoJournal().select("WHERE run_id = %s AND position = %s", [run_id, at])
    return found[0] if found else None


def fork_run(parent: str, at: int, changes: Changes, by: str) -> str:
    """Start a fork of run `parent` after its event at position `at`; returns the fork's id
    (begin_fork, with no key)."""
    return begin_fork(parent, at, changes, by).run_id


def begin_fork(
    parent: str, at: int, changes: Changes, by: str, key: str = "", cap: int = 0
) -> Begun:
    """Start a fork of run `parent` after its event at position `at`: its id, and whether this
    call made it. Checked by replaying it before anything is written; written whole or not at
    all (a write the database refuses is ForkNotWritten or ForkCollided, and leaves no
    workspace); then driven by the workers like any run (its past read back from the record).

    With an idempotency key (services/keys.py) the fork's id is the key's (keys.fork_id): a
    fork made under it already is answered (new False), before anything is planned or
    checked, as long as it was asked the same (KeyReused naming what differs, when not; and
    KeyTaken when it is not this person's fork), and nothing is written, restored or enqueued
    again. Two asked at once each restore a workspace of their own (fork_workspace.stage_workspace):
    the one whose write wins puts its workspace in place; the other removes its own and
    answers the fork the first wrote.

    `cap` (a person's ask: settings.RUNS_PER_PERSON; 0 none): a fork is a new run of `by`'s,
    so AtCapacity when they have no place left for it, counted under their lock with the
    write (runs.make_room); nothing is written and the workspace restored for it is removed.
    A keyed fork made already is answered, as it takes no new place."""
    journal = DjangoJournal()
    child = keys.fork_id(key, by, parent) if key else flight.new_run_id()
    if key and (answered := made_before(journal, child, parent, at, changes, by)) is not None:
        return answered
    records = fork.records_of(journal, parent)
    if not records:
        raise RunNotFound(parent)
    make_room(by, cap)  # before a replay and a workspace are made for nothing; again below
    try:
        # An event of the run that no fork copies (a tag, a stop, a lease) is named as what it
        # is: the records the fork plans from do not hold it.
        letter = fork.first_letter(records, parent)
        if (found := event_at(parent, at)) and (why := fork.unforkable(found, parent, letter)):
            raise fork.ForkRefused(why)
        planned = fork.plan(records, parent, child, at, changes, by)
        # By backend: `coder=endpoint:big-model` names the endpoint as `coder=endpoint` does,
        # and passed the check below to fail at its first step.
        backends = split_models(changes.models)[0].values()
        if "local" in backends:
            why = local_model.unavailable()
            if why:
                raise ModelUnavailable(why)
        if "endpoint" in backends and (why := endpoint_unusable()):
            # Refused here, not at its first step: there it would fail three times and wait
            # in the dead-letter queue for a person, saying only that its step kept failing.
            raise ForkRefused(why, "models")
        fork.verify(journal, planned)
        # Asked as the command line asks it, of this host's world (a team's world here is the
        # database's: a desk run's order is a row every run flown here opened).
        fork.ready(journal, planned, settings.WORKSPACES, host())
        staged = fork_workspace.stage_workspace(planned, settings.WORKSPACES)
    except fork.UnreadableSettings as exc:
        raise ForkOfUnreadable(str(exc)) from None
    except fork.ForkRefused as exc:
        raise ForkRefused(exc.why, exc.field) from None
    try:
        with run_cap.one_start_at_a_time(by) if cap > 0 else nullcontext():
            # A keyed fork written meanwhile is answered below (made_before): no place.
            if cap > 0 and not (key and journal.version(streams.journal(child))):
                make_room(by, cap)
            fork.write(journal, planned)  # one transaction for all its streams
    except BaseException as exc:
        # Nothing of this fork was written: the workspace restored for it belongs to no run.
        made = fork_workspace.discard_workspace(staged)
        if isinstance(exc, UNAVAILABLE):
            log.warning("the fork of run %s was not written", parent, exc_info=True)
            raise ForkNotWritten(parent, exc, made) from None
        if isinstance(exc, WrongExpectedVersion | DuplicateEventId):
            # The same keyed fork asked at once: the other request wrote it first.
            if key and (first := made_before(journal, child, parent, at, changes, by)):
                return first
            raise ForkCollided(parent, exc, made) from None
        raise
    fork_workspace.place_workspace(planned, settings.WORKSPACES, staged)
    projection.catch_up()
    for sub_id in fork.in_flight(planned):
        specialists.dispatch(child, sub_id, {})
    queue.advance(child)
    return Begun(child, True)


def made_before(
    journal: DjangoJournal, child: str, parent: str, at: int, changes: Changes, by: str
) -> Begun | None:
    """The fork `child` (a key's id) when it was made already: answered (new False) when `by`
    asked it the same (its RunForked's parent, `at` and changes: what the request asked,
    nothing the server made of it), KeyReused naming what differs when not; KeyTaken when it
    is not `by`'s fork to be answered (imported from a file, forked by someone else, or no
    fork); None when there is none."""
    found = journal.select(
        "WHERE run_id = %s AND stream = %s AND kind = %s ORDER BY position DESC LIMIT 1",
        [child, streams.journal(child), RunForked.kind],
    )
    if not found:
        if journal.version(streams.journal(child)):
            raise KeyTaken(child)  # a run under the key's id, no fork's
        return None
    forked = found[0].event
    assert isinstance(forked, RunForked)
    if forked.by != by or journal.version(streams.imported(child)):
        raise KeyTaken(child)
    if differ := fork.differences(forked, parent, at, changes):
        raise KeyReused(child, differ)
    projection.catch_up()
    return Begun(child, False)  # its first step was enqueued by the request that made it
