"""A refund saga whose driver dies after the orders server made a step's operation (the return
label, the credit, or an undo of either) and before its EffectSucceeded was written, resumed
by a driver that took the run's lease over: the step is sent again under its key, the server
answers its first answer (it made the operation once), and the run goes on as if nothing had
happened. Before, the ledger answered EffectInProgress on resume: the saga turned back with
nothing completed and voided nothing, the label stayed at the server and the journal said the
saga had done nothing.

On the project's database (SQLite, and PostgreSQL where it runs), fenced by the run's lease as
on the workers; the driver dies in process (a BaseException raised right after the server's
answer came back), and the run is compared, stream by stream, with an uninterrupted one."""

from __future__ import annotations

import json
import re
import sqlite3
from collections import defaultdict

import pytest

from journal_store.journal import DjangoJournal
from runtime import flight
from runtime.coordination.leases import Leases
from runtime.events import EffectResumed
from runtime.fenced import Fenced
from runtime.team import Services
from teams.triage.servers.orders import made_id
from teams.triage.services import TriageServices
from teams.triage.surface import default_surface
from tests.conftest import on_every_backend
from tests.runtime.helpers import facts

pytestmark = pytest.mark.slow


class Killed(BaseException):
    """The driver dies (a BaseException: no `except Exception` on the way outlives it)."""


class DiesAfter:
    """The orders surface, dying once right after the server answered `tool`'s call: the
    operation is in the server's book, its EffectSucceeded is not in the journal."""

    def __init__(self, book, tool: str | None) -> None:
        self.inner = default_surface(book)
        self.tool = tool

    def call(self, name, args):
        result = self.inner.call(name, args)
        if name == self.tool:
            self.tool = None
            raise Killed(name)
        return result

    def __getattr__(self, name):
        return getattr(self.inner, name)


def services(book, tool=None):
    return Services(provided=(TriageServices(mcp=lambda: DiesAfter(book, tool)),))


def operations(book):
    rows = sqlite3.connect(book).execute("SELECT key, kind FROM operation ORDER BY at")
    return [(key, kind) for key, kind in rows]


FENCE = ("lease", "epoch", "request_hash")
POLICY_DOWN = (
    r"(McpToolError: )?policy\.record_decision returned an error: Error executing tool "
    r"record_decision: policy database unreachable \(connection to policy-db:5432 refused\)",
    r"(BreakerOpen: )?breaker tools:policy is open \(failure rate\); calls refused for "
    r"[0-9.]+ s more",
)


def normalised(journal, run_id):
    """The run's streams (not its lease's: the resumed run was driven under two grants), each
    in its own order (parallel specialists interleave across streams), as an uninterrupted run
    of another id has them: the run's id, the keys hashed from it (numbered in the order the
    effects started) and the server's ids made from those (the order's and the key's hash)
    replaced by placeholders, and the fence each effect was started under (which grant of the
    run's lease drove it) and its request's hash (of a target named by the run's id) left out.
    EffectResumed, the record of a takeover, is returned aside.

    And the policy step's failure, whose words are not the saga's to keep: the uninterrupted
    run finds policy's breaker open (it tripped during the fan-out) and is refused "for 29.9 s
    more", a clock reading; a resumed process starts with its breakers closed (their state is
    in the process, not the journal) and hears the server's own error. Both are "the policy
    server is down", and the step fails either way."""
    streams: dict[str, list] = defaultdict(list)
    resumed = []
    keys: dict[str, str] = {}
    for rec in journal.read_all():
        if run_id not in rec.stream and run_id != rec.event.run_id:
            continue
        if rec.stream.startswith("lease-"):
            continue
        if isinstance(rec.event, EffectResumed):
            resumed.append(rec.event)
            continue
        if rec.event.kind == "EffectStarted":
            keys.setdefault(rec.event.key, f"fx-{len(keys)}")
        streams[rec.stream].append(rec.event)
    text = json.dumps(
        {
            name: [{k: v for k, v in e.items() if k not in FENCE} for e in facts(evs)]
            for name, evs in streams.items()
        },
        sort_keys=True,
    ).replace(run_id.removeprefix("r-"), "ID")
    for key, placeholder in keys.items():
        # The server's ids of what it made under the key (a label's, a credit's): the order's
        # and a hash of the key, which differs between runs as the key does.
        for prefix in ("RL", "CR"):
            text = text.replace(made_id(prefix, "B2001", key), f"{prefix}-B2001-{placeholder}")
        text = text.replace(key, placeholder)
    for words in POLICY_DOWN:
        text = re.sub(words, "POLICY DOWN", text)
    text = re.sub(r'"message": "POLICY DOWN", "type": "\w+"', '"message": "POLICY DOWN"', text)
    return json.loads(text), resumed


def fly(journal, run_id, root, book, tool=None):
    lease = Leases(journal).acquire(run_id, "worker-1", ttl=0)  # ran out: a dead worker's
    config = flight.plan("support-triage", "refund-saga", run_id)
    return flight.fly(
        Fenced(journal, *lease.fence), config, run_id, root, services=services(book, tool)
    )


def resume(journal, run_id, root, book):
    lease = Leases(journal).acquire(run_id, "worker-2", ttl=60)  # the run taken over
    return flight.resume(Fenced(journal, *lease.fence), run_id, root, services=services(book))


# The saga's operations at the orders server, in order: label, credit, then (policy's step
# failing) the credit's reversal and the label's void.
STEPS = [
    "orders.create_return_label",
    "orders.issue_credit",
    "orders.reverse_credit",
    "orders.void_return_label",
]


def uninterrupted(journal, root):
    """An uninterrupted flight of the scenario on the same database: its verdict, its streams
    and the server's book."""
    run_id = flight.new_run_id()
    book = root / f"reference-{run_id}.sqlite3"
    outcome = fly(journal, run_id, root, book)
    [settled] = [r.event for r in journal.read(f"run-{run_id}") if r.event.kind == "SagaSettled"]
    assert settled.compensated == ["credit", "label"]
    return outcome.status, normalised(journal, run_id)[0], operations(book)


# The uninterrupted flight, once a backend: what each of its four kills is compared with is
# the same flight (its run's id and keys are placeholders once normalised), so the module flew
# it four times a backend to compare with the same streams (a third of its time).
REFERENCE: dict[str, tuple] = {}


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """One root for the module's flights, the reference's and the kills' (each run has a
    workspace of its own under it): where a run's path is in its journal, both have the same."""
    return tmp_path_factory.mktemp("flights")


@on_every_backend(transaction=True)
@pytest.mark.parametrize("tool", STEPS)
def test_a_saga_killed_after_the_server_acted_resumes_to_the_uninterrupted_journal(
    alias, root, tool
):
    journal = DjangoJournal(alias)
    if alias not in REFERENCE:
        REFERENCE[alias] = uninterrupted(journal, root)
    status, journal_then, book_then = REFERENCE[alias]
    assert [kind for _, kind in book_then] == ["label", "credit", "reversal", "void"]

    run_id = flight.new_run_id()
    book = root / f"crashed-{run_id}.sqlite3"
    with pytest.raises(Killed):
        fly(journal, run_id, root, book, tool)
    outcome = resume(journal, run_id, root, book)
    assert outcome.status == status, outcome.reason

    now, resumed = normalised(journal, run_id)
    assert now == journal_then  # every stream as the uninterrupted run wrote it
    [taken] = resumed  # the one effect found unsettled was taken over, once
    assert (taken.after_epoch, taken.epoch) == (1, 2)
    # One operation per key at the server, the same ones as the uninterrupted run's: the
    # label made before the crash was voided, nothing is left orphaned there.
    assert [kind for _, kind in operations(book)] == ["label", "credit", "reversal", "void"]
