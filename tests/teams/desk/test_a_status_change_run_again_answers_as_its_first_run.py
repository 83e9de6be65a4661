"""set_order_status run again under the same call (a resumed step's: the worker died after the
tool ran, before its ToolReturned was written) answers as its first run did: no second claim,
no second write, and the journal and the order of an uninterrupted run.

On the command line's desk (the order and its claims in the run's JSONL journal, the process
SIGKILLed at the fault seam), and on the project's database (SQLite and PostgreSQL: the order's
row beside its subject stream, the step dying in process at the same seam)."""

from __future__ import annotations

import json
import re
import signal

import pytest

from desk.models import Order as OrderRow
from desk.models import Refund
from desk.services import TableOrders, database_desk
from journal_store.journal import DjangoJournal
from runtime import flight
from runtime.coordination.claims import Claims
from runtime.coordination.facts import Facts
from runtime.faults import Faults
from runtime.jsonl import JsonlJournal
from runtime.team import Services
from runtime.tools import Call
from teams.desk.local import FilePayments, JournalOrders
from teams.desk.services import DeskServices, OrderMoved, subject
from tests.conftest import on_every_backend
from tests.coordination.desk_tools import desk_tools
from tests.runtime.helpers import facts
from tests.runtime.test_crash import cli

ESCALATED = 3  # the command line's exit for a verdict other than done (runtime/cli.py)
RUN = "r-desk-crash"
ORDER = "o-desk-crash"
FLY = (
    "fly",
    "--team",
    "support-desk",
    "--scenario",
    "lost-update",
    "--journal",
    "j.jsonl",
    "--run-id",
    RUN,
)
# In lost-update the order agent's set_order_status wins the compare-and-swap (the 1st run of
# the tool) and the support agent's loses it (the 2nd): either killed before its ToolReturned.
POINTS = ["exec:set_order_status#1", "exec:set_order_status#2"]


def world(journal, order_id):
    """What the run did to the order beside its own stream: the order as its subject stream
    tells it, every claim on its status, and every change of it."""
    about = subject(order_id)
    return {
        # Its id aside: the database's test compares the orders of two runs.
        "order": JournalOrders(journal).get(order_id).public() | {"order_id": "ID"},
        "claims": [(c.by, c.value, c.based_on, c.supersedes) for c in Claims(journal).all(about)],
        "changes": [
            (r.version, r.event.value, r.event.by)
            for r in journal.read(Facts.stream(about))
            if r.event.predicate != "opened"
        ],
    }


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    where = tmp_path_factory.mktemp("desk-reference")
    done = cli(*FLY, cwd=where)
    assert done.returncode == ESCALATED, done.stderr  # the conflict parked for a person
    refunds = FilePayments(where / "payments.sqlite3").refunds(ORDER)
    return facts(where / "j.jsonl"), world(JsonlJournal(where / "j.jsonl"), ORDER), refunds


@pytest.mark.slow
@pytest.mark.parametrize("point", POINTS)
def test_a_desk_killed_after_a_status_change_resumes_to_the_uninterrupted_journal(
    tmp_path, uninterrupted, point
):
    crashed = cli(*FLY, env={"MINUTES_FAULT": point}, cwd=tmp_path)
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    resumed = cli("resume", "j.jsonl", cwd=tmp_path)
    assert resumed.returncode == ESCALATED, resumed.stderr + resumed.stdout

    journal, done, refunds = uninterrupted
    # Every stream of the file: the run's, the order's, its claims', the parked conflict's.
    assert facts(tmp_path / "j.jsonl") == journal
    assert world(JsonlJournal(tmp_path / "j.jsonl"), ORDER) == done
    assert FilePayments(tmp_path / "payments.sqlite3").refunds(ORDER) == refunds


# --- on the project's database ---------------------------------------------------------------


class Killed(BaseException):
    """The worker dies (a BaseException: no harness's `except Exception` outlives it)."""


class DiesAfter(Faults):
    """The `exec` fault seam, dying in process: right after the tool's nth run, before its
    ToolReturned is written."""

    def executed(self, run_id, tool, ordinal, dispatch):
        if self.exec.get(tool) == ordinal:
            raise Killed()


def normalised(events, run_id):
    """A run's events as an uninterrupted run of another id would have them: the run's id (and
    the order's, made from it) and the ids hashed from them (claims, conflicts) replaced by
    placeholders, in the order they appear."""
    # A window's digest hashes the prompt the run's id is in: the placeholder can't reach it.
    rows = [{k: v for k, v in row.items() if k != "window_digest"} for row in facts(events)]
    text = json.dumps(rows, sort_keys=True).replace(run_id.removeprefix("r-"), "ID")
    seen: dict[str, str] = {}
    return re.sub(
        r"\b(cl|cf|fx)-[0-9a-f]{16,40}\b",
        lambda m: seen.setdefault(m.group(0), f"{m.group(1)}-{len(seen)}"),
        text,
    )


@on_every_backend(transaction=True)
@pytest.mark.parametrize("point", POINTS)
def test_a_status_change_on_the_database_run_again_answers_as_its_first_run(alias, tmp_path, point):
    services = Services(provided=(DeskServices(desk=database_desk(alias)),))
    journal = DjangoJournal(alias)

    def fly(run_id, faults=None):
        config = flight.plan("support-desk", "lost-update", run_id)
        return flight.fly(
            journal, config, run_id, tmp_path / run_id, services=services, faults=faults
        )

    def seen(run_id):
        order_id = "o-" + run_id.removeprefix("r-")
        row = OrderRow.objects.using(alias).get(order_id=order_id)
        refunds = Refund.objects.using(alias).filter(order_id=order_id).count()
        return normalised([r.event for r in journal.read(f"run-{run_id}")], run_id), {
            "row": (row.status, row.version, row.updated_by),
            "refunds": refunds,
            **world(journal, order_id),
        }

    reference = flight.new_run_id()
    assert fly(reference).status == "escalated"  # the conflict parked for a person

    run_id = flight.new_run_id()
    with pytest.raises(Killed):
        fly(run_id, DiesAfter.parse(point))
    outcome = flight.resume(journal, run_id, tmp_path / run_id, services=services)
    assert outcome.status == "escalated", outcome.reason
    assert seen(run_id) == seen(reference)


# --- the tool itself, on either database ------------------------------------------------------


def claims_of(journal, order_id):
    return Claims(journal).all(subject(order_id))


@on_every_backend(transaction=True)
def test_the_same_call_run_again_makes_no_second_claim_and_no_second_write(alias):
    journal, run_id, tools = desk_tools(alias, "o-again")
    call = Call(f"run-{run_id}", 7)
    first = tools.set_order_status("refunded", 1, "refunded in full", call=call)
    assert (first["status"], first["version"], first["changed"]) == ("refunded", 2, True)
    assert tools.set_order_status("refunded", 1, "refunded in full", call=call) == first
    row = OrderRow.objects.using(alias).get(order_id="o-again")
    assert (row.status, row.version) == ("refunded", 2)
    [claim] = claims_of(journal, "o-again")
    assert (claim.claim_id, claim.call) == (first["claim_id"], call.ref)
    assert Claims(journal).live(subject("o-again"), "status") == [claim]  # still live
    [change] = [r.event for r in journal.read(Facts.stream(subject("o-again")))][1:]
    assert (change.value, change.call) == ("refunded", call.ref)


@on_every_backend(transaction=True)
def test_a_call_that_lost_its_compare_and_swap_loses_it_again_with_one_claim(alias):
    journal, run_id, tools = desk_tools(alias, "o-lost")
    TableOrders(journal, alias).set_status("o-lost", "shipped", 1, "order-agent")
    call = Call(f"run-{run_id}", 7)
    for _ in range(2):
        with pytest.raises(OrderMoved, match="decided from version 1, it is at version 2"):
            tools.set_order_status("cancelled", 1, "she cancelled first", call=call)
    [claim] = claims_of(journal, "o-lost")
    assert claim.call == call.ref


@on_every_backend(transaction=True)
def test_another_call_with_the_same_arguments_is_a_new_decision(alias):
    _, run_id, tools = desk_tools(alias, "o-new")
    tools.set_order_status("refunded", 1, "refunded in full", call=Call(f"run-{run_id}", 7))
    # The order is at version 2 now: deciding from version 1 again is deciding from a version
    # gone, whoever made the change since (the keying is by call, not by what it asks).
    with pytest.raises(OrderMoved):
        tools.set_order_status("refunded", 1, "refunded in full", call=Call(f"run-{run_id}", 9))
