"""The Journal contract: one suite, subclassed for every implementation (memory, JSONL, the
database ones). A subclass provides a `journal` fixture returning a fresh, empty journal.

Besides append and the reads: fencing (`append(..., fence=)` and `Fenced`), guards
(`append(..., guards=)`), the lease primitive on top of them (runtime/coordination/leases.py),
and `read_prefix`, so that every backend runs each of them."""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import BaseModel

from runtime.coordination.leases import Leases, landing
from runtime.events import (
    LINE_DEPTH,
    BudgetDebited,
    CallData,
    DriverLeased,
    DriverReleased,
    Event,
    LeaseGranted,
    LeaseReleased,
    LeaseRenewed,
    ModelResponded,
    RunForked,
    ToolReturned,
    Usage,
)
from runtime.fenced import Fenced
from runtime.journal import (
    DuplicateEventId,
    OutOfRange,
    StaleEpoch,
    WrongExpectedVersion,
    read_of_kind,
)


class Items(list):  # type: ignore[type-arg]
    """A list of a type of its own, as a tool may return."""


class Box(BaseModel):
    """A model inside a free-form value (a tool's result)."""

    inner: Any


@dataclass(frozen=True)
class Boxed:
    """A dataclass inside a free-form value: pydantic writes it as an object."""

    inner: Any


# One level of nesting, each way a payload can hold one: what the depth walk must go into.
SHAPES: dict[str, Any] = {
    "list": lambda v: [v],
    "tuple": lambda v: (v,),
    "dict": lambda v: {"k": v},
    "dict subclass": lambda v: OrderedDict(k=v),
    "list subclass": lambda v: Items([v]),
    "model in a value": lambda v: Box(inner=v),
    "dataclass in a value": lambda v: Boxed(v),
    "frozenset": lambda v: frozenset({v}),
    "deque": lambda v: deque([v]),
    "lists and dicts in turn": lambda v: {"k": v} if isinstance(v, list) else [v],
    "a tool call's args": lambda v: {"k": v},
}


def debit(n: int = 1) -> Event:
    return BudgetDebited(run_id="r-1", amount=n)


def grant(holder: str = "w1", expires: float = 9e9) -> Event:
    return LeaseGranted(resource="x", holder=holder, expires=expires, attempt=1)


class Watching:
    """A journal that notes every read of a stream, to show what the lease primitive reads."""

    def __init__(self, journal) -> None:
        self.journal = journal
        self.reads: list[tuple[str, int, int]] = []  # (stream, after, its version then)

    def read(self, stream, after=0):
        self.reads.append((stream, after, self.journal.version(stream)))
        return self.journal.read(stream, after)

    def __getattr__(self, name):
        return getattr(self.journal, name)


class JournalContract:
    @pytest.fixture
    def journal(self):
        raise NotImplementedError

    def test_a_new_stream_starts_at_version_0(self, journal):
        assert journal.version("run-a") == 0
        assert journal.read("run-a") == []

    def test_append_returns_versions_and_positions_in_order(self, journal):
        recs = journal.append("run-a", [debit(1), debit(2)], 0)
        assert [r.version for r in recs] == [1, 2]
        assert recs[0].position < recs[1].position
        more = journal.append("run-b", [debit(3)], 0)
        assert more[0].position > recs[1].position
        assert journal.version("run-a") == 2

    def test_read_returns_what_was_appended_after_a_version(self, journal):
        events = [debit(i) for i in range(1, 5)]
        journal.append("run-a", events, 0)
        assert [r.event for r in journal.read("run-a")] == events
        assert [r.event for r in journal.read("run-a", after=2)] == events[2:]

    def test_read_all_orders_every_stream_by_position(self, journal):
        journal.append("run-a", [debit(1)], 0)
        journal.append("run-b", [debit(2)], 0)
        journal.append("run-a", [debit(3)], 1)
        records = journal.read_all()
        assert [r.event.amount for r in records] == [1, 2, 3]
        assert [r.event.amount for r in journal.read_all(after=records[0].position)] == [2, 3]
        assert len(journal.read_all(limit=2)) == 2

    def test_a_stale_expected_version_is_refused_and_nothing_is_written(self, journal):
        journal.append("run-a", [debit(1)], 0)
        with pytest.raises(WrongExpectedVersion) as info:
            journal.append("run-a", [debit(2), debit(3)], 0)
        assert (info.value.expected, info.value.actual) == (0, 1)
        assert journal.version("run-a") == 1

    def test_an_expected_version_ahead_of_the_stream_is_refused(self, journal):
        with pytest.raises(WrongExpectedVersion):
            journal.append("run-a", [debit(1)], 3)
        assert journal.version("run-a") == 0

    def test_appending_the_same_ids_again_is_a_no_op_returning_the_originals(self, journal):
        batch = [debit(1), debit(2)]
        first = journal.append("run-a", batch, 0)
        again = journal.append("run-a", batch, 0)  # a retry after a lost answer
        assert [(r.version, r.position) for r in again] == [(r.version, r.position) for r in first]
        assert journal.version("run-a") == 2
        assert len(journal.read_all()) == 2

    def test_a_batch_mixing_stored_and_new_ids_is_refused(self, journal):
        old = debit(1)
        journal.append("run-a", [old], 0)
        with pytest.raises(DuplicateEventId):
            journal.append("run-a", [old, debit(2)], 1)
        assert journal.version("run-a") == 1

    def test_a_batch_repeating_an_id_is_refused(self, journal):
        e = debit(1)
        with pytest.raises(DuplicateEventId):
            journal.append("run-a", [e, e], 0)
        assert journal.version("run-a") == 0

    @pytest.mark.parametrize(
        "event, field",
        [
            (BudgetDebited(run_id="r-1", amount=2**40 + 1), "amount"),
            (
                ModelResponded(
                    run_id="r-1", agent="a", text="", tool_calls=[], usage=Usage(total=10**30)
                ),
                "usage.total",
            ),
            (RunForked(run_id="r-1", parent="r-0", at=10**30, number=1, by="x"), "at"),
            (BudgetDebited(run_id="r-1", amount=1, turn=2**31), "turn"),
        ],
    )
    def test_a_number_the_readers_cannot_hold_is_refused_and_nothing_is_written(
        self, journal, event, field
    ):
        """Stored, it would stop every projection that adds it into a 64-bit column; whoever
        made it (a caller's settings, a model's usage, an import), the append refuses it."""
        with pytest.raises(OutOfRange, match=f"field '{field}': "):
            journal.append("run-a", [debit(1), event], 0)
        assert journal.version("run-a") == 0
        assert journal.read_all() == []
        journal.append("run-a", [BudgetDebited(run_id="r-1", amount=2**40)], 0)  # the limit

    def test_an_event_nested_past_a_line_is_refused_and_nothing_is_written(self, journal):
        """Stored, it could not be read back (pydantic's JSON reader stops at 128 levels):
        every reader of the journal, the projectors first, would stop on it, and every page
        answer 500. Whoever made it (a tool, a model, a person's fork), the append refuses
        it, naming the field; a value as deep as a line may hold is taken."""

        def nested(levels: int) -> Any:
            value: Any = "x"
            for _ in range(levels):
                value = [value]
            return value

        too_deep = ToolReturned(run_id="r-1", agent="a", tool="t", result=nested(200))
        with pytest.raises(OutOfRange, match="field 'result': nested deeper than a journal line"):
            journal.append("run-a", [debit(1), too_deep], 0)
        assert journal.version("run-a") == 0
        assert journal.read_all() == []
        # The line is one level, so a field's value may nest one level less than a line.
        edge = ToolReturned(run_id="r-1", agent="a", tool="t", result=nested(LINE_DEPTH - 1))
        journal.append("run-a", [edge], 0)
        assert journal.read("run-a")[0].event.result == edge.result
        over = ToolReturned(run_id="r-1", agent="a", tool="t", result=nested(LINE_DEPTH))
        with pytest.raises(OutOfRange):
            journal.append("run-a", [over], 1)

    @pytest.mark.parametrize("shape", sorted(SHAPES))
    def test_deep_data_is_refused_through_every_kind_of_container(self, journal, shape):
        """The depth walk passes a payload's plain values (str, int, ...) by their exact type
        and goes into each container pydantic writes as a JSON array or object: whichever
        holds the nesting (a subclass of dict or list, a model inside a free-form value, a
        model's own field), too deep is refused and one level less is stored."""
        wrap = SHAPES[shape]

        def nested(levels: int) -> Any:
            value: Any = "x"
            for _ in range(levels):
                value = wrap(value)
            return value

        def event(levels: int) -> Event:
            if shape == "a tool call's args":  # ModelResponded.tool_calls.0.args: 3 levels
                return ModelResponded(
                    run_id="r-1",
                    text="",
                    tool_calls=[CallData(id="c", name="t", args={"a": nested(levels - 3)})],
                    usage=Usage(total=1),
                )
            return ToolReturned(run_id="r-1", agent="a", tool="t", result=nested(levels))

        with pytest.raises(OutOfRange, match="nested deeper than a journal line"):
            journal.append("run-a", [debit(1), event(LINE_DEPTH)], 0)
        assert journal.read_all() == []
        journal.append("run-a", [event(LINE_DEPTH - 1)], 0)
        assert journal.version("run-a") == 1

    def test_an_empty_batch_or_stream_name_is_refused(self, journal):
        with pytest.raises(ValueError):
            journal.append("run-a", [], 0)
        with pytest.raises(ValueError):
            journal.append("", [debit()], 0)

    def test_two_writers_at_the_same_expected_version_exactly_one_wins(self, journal):
        barrier = threading.Barrier(8)
        wins, losses = [], []

        def writer(i: int) -> None:
            barrier.wait()
            try:
                journal.append("run-hot", [debit(i)], 0)
                wins.append(i)
            except WrongExpectedVersion:
                losses.append(i)

        threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(wins) == 1 and len(losses) == 7
        assert [r.event.amount for r in journal.read("run-hot")] == wins

    # --- fencing -------------------------------------------------------------------------------

    def test_an_append_fenced_by_the_standing_epoch_is_written(self, journal):
        journal.append("lease-x", [grant()], 0)
        journal.append("run-a", [debit(1)], 0, fence=("lease-x", 1))
        assert journal.version("run-a") == 1

    def test_a_stale_epoch_cannot_append_and_nothing_is_written(self, journal):
        journal.append("lease-x", [grant("old", expires=0.0)], 0)
        journal.append("lease-x", [grant("new")], 1)  # taken over after it expired
        with pytest.raises(StaleEpoch) as info:
            journal.append("run-a", [debit(1), debit(2)], 0, fence=("lease-x", 1))
        assert (info.value.lease, info.value.epoch, info.value.current) == ("lease-x", 1, 2)
        assert journal.version("run-a") == 0 and len(journal.read_all()) == 2

    def test_a_renewal_by_the_holder_does_not_fence_the_holder_out(self, journal):
        journal.append("lease-x", [grant()], 0)
        renewal = LeaseRenewed(resource="x", holder="w1", expires=9e9, epoch=1, attempt=1)
        journal.append("lease-x", [renewal], 1)
        journal.append("run-a", [debit(1)], 0, fence=("lease-x", 1))
        with pytest.raises(StaleEpoch):  # the renewal's version is not an epoch
            journal.append("run-a", [debit(2)], 1, fence=("lease-x", 2))
        assert journal.version("run-a") == 1

    def test_a_released_or_never_granted_lease_fences_everyone_out(self, journal):
        with pytest.raises(StaleEpoch) as info:
            journal.append("run-a", [debit(1)], 0, fence=("lease-x", 1))
        assert info.value.current == 0
        journal.append("lease-x", [grant()], 0)
        journal.append("lease-x", [LeaseReleased(resource="x", holder="w1", epoch=1)], 1)
        with pytest.raises(StaleEpoch):
            journal.append("run-a", [debit(1)], 0, fence=("lease-x", 1))
        assert journal.version("run-a") == 0

    def test_a_fenced_journal_fences_every_append_through_it(self, journal):
        journal.append("lease-x", [grant("old", expires=0.0)], 0)
        fenced = Fenced(journal, "lease-x", 1)
        fenced.append("run-a", [debit(1)], 0)
        journal.append("lease-x", [grant("new")], 1)
        with pytest.raises(StaleEpoch):
            fenced.append("run-b", [debit(2)], 0)
        assert journal.version("run-b") == 0
        assert [r.event.amount for r in fenced.read("run-a")] == [1]

    def test_a_driver_lease_from_before_the_one_primitive_still_fences(self, journal):
        old = DriverLeased(run_id="r", holder="w1", expires=0.0, at_version=1)
        journal.append("lease-r", [old], 0)
        journal.append("run-r", [debit(1)], 0, fence=("lease-r", 1))
        journal.append("lease-r", [DriverReleased(run_id="r", holder="w1", outcome="x")], 1)
        with pytest.raises(StaleEpoch):
            journal.append("run-r", [debit(2)], 1, fence=("lease-r", 1))

    # --- guards: another stream's version, checked in the same atomic step ---------------------

    def test_an_append_guarded_by_a_stream_where_it_stands_is_written(self, journal):
        journal.append("intent-x", [debit(1)], 0)
        journal.append("run-a", [debit(2)], 0, guards=[("intent-x", 1), ("intent-none", 0)])
        assert journal.version("run-a") == 1

    def test_a_guarded_stream_that_moved_refuses_the_append_naming_it(self, journal):
        journal.append("intent-x", [debit(1), debit(2)], 0)
        with pytest.raises(WrongExpectedVersion) as info:
            journal.append("run-a", [debit(3)], 0, guards=[("intent-x", 1)])
        assert (info.value.stream, info.value.expected, info.value.actual) == ("intent-x", 1, 2)
        assert journal.version("run-a") == 0 and len(journal.read_all()) == 2

    def test_a_guard_refuses_every_batch_and_a_fenced_journal_passes_it_on(self, journal):
        journal.append("lease-x", [grant()], 0)
        journal.append("intent-x", [debit(1)], 0)
        fenced = Fenced(journal, "lease-x", 1)
        batches = [("hold-a", [debit(2)], 0), ("effect-a", [debit(3)], 0)]
        with pytest.raises(WrongExpectedVersion) as info:
            fenced.append_batches(batches, guards=[("intent-x", 0)])
        assert info.value.stream == "intent-x"
        with pytest.raises(WrongExpectedVersion):
            fenced.append("run-a", [debit(4)], 0, guards=[("intent-x", 0)])
        assert [journal.version(s) for s in ("hold-a", "effect-a", "run-a")] == [0, 0, 0]
        fenced.append_batches(batches, guards=[("intent-x", 1)])
        assert [journal.version(s) for s in ("hold-a", "effect-a")] == [1, 1]

    # --- stamps: an event rebuilt as it lands -----------------------------------------------------

    def test_a_stamp_rebuilds_the_event_as_it_lands_and_a_retry_returns_what_was_stored(
        self, journal
    ):
        journal.append("lease-x", [grant()], 0)
        renewal = LeaseRenewed(resource="x", holder="w1", expires=0.0, epoch=1)
        said = iter([1000.0, 2000.0])  # the second landing is a retry: never stamped
        stamp = landing(6, lambda: next(said))
        [first] = journal.append("lease-x", [renewal], 1, stamp=stamp)
        assert (first.event.id, first.event.expires, first.event.t) == (renewal.id, 1006.0, 1000.0)
        assert journal.read("lease-x", after=1)[0].event.expires == 1006.0
        [again] = journal.append("lease-x", [renewal], 1, stamp=landing(6, lambda: 3000.0))
        assert again.event.expires == 1006.0 and journal.version("lease-x") == 2

    def test_a_renewal_built_before_its_append_waited_expires_from_its_landing(self, journal):
        readings = iter([1000.0, 1000.0, 1001.0, 1008.0])  # grant built, landed; renewal...
        leases = Leases(journal, clock=lambda: next(readings))
        lease = leases.acquire("x", "w1", ttl=6)
        renewed = leases.renew(lease, ttl=6)  # built at 1001, landed 7 s later
        assert renewed.expires == 1014.0 == leases.current("x").expires

    # --- the lease primitive --------------------------------------------------------------------

    def test_a_lease_is_granted_at_an_epoch_and_refused_to_others_while_live(self, journal):
        leases = Leases(journal)
        first = leases.acquire("x", "w1", ttl=60)
        assert (first.epoch, first.holder, first.attempt) == (1, "w1", 1)
        assert leases.acquire("x", "w2", ttl=60) is None
        assert leases.current("x").holder == "w1"
        assert journal.version("lease-x") == 1  # the refusal wrote nothing

    def test_an_expired_lease_goes_to_the_next_taker_and_fences_the_old_holder(self, journal):
        leases = Leases(journal)
        old = leases.acquire("x", "w1", ttl=-1)
        new = leases.acquire("x", "w2", ttl=60)
        assert new.epoch == old.epoch + 1
        with pytest.raises(StaleEpoch):
            journal.append("run-a", [debit(1)], 0, fence=old.fence)
        journal.append("run-a", [debit(1)], 0, fence=new.fence)
        with pytest.raises(StaleEpoch):  # nor can the old holder renew it
            leases.renew(old, ttl=60)
        assert leases.release(old) is False
        assert leases.current("x").holder == "w2"

    def test_a_renewal_keeps_the_epoch_and_pushes_the_expiry_on(self, journal):
        leases = Leases(journal)
        lease = leases.acquire("x", "w1", ttl=-1)  # as if it were about to run out
        renewed = leases.renew(lease, ttl=60)
        assert (renewed.epoch, renewed.version) == (lease.epoch, lease.version + 1)
        assert renewed.expires > lease.expires
        assert leases.acquire("x", "w2", ttl=60) is None  # live again: nobody takes it
        journal.append("run-a", [debit(1)], 0, fence=renewed.fence)
        assert leases.release(renewed, "done") is True
        assert leases.current("x") is None
        assert leases.acquire("x", "w2", ttl=60).epoch == 4  # given back: free at once

    def test_a_renewal_whose_answer_was_lost_is_recognised_as_ours(self, journal):
        leases = Leases(journal)
        lease = leases.acquire("x", "w1", ttl=60)
        leases.renew(lease, ttl=60)  # landed, but the holder never heard (keeps `lease`)
        renewed = leases.renew(lease, ttl=60)
        assert renewed.epoch == 1 and renewed.version == 3
        assert leases.release(lease) is True  # found where it stands, still ours

    def test_two_holders_racing_for_a_lease_exactly_one_gets_it(self, journal):
        leases = Leases(journal)
        leases.acquire("x", "before", ttl=-1)  # expired: up for grabs
        barrier = threading.Barrier(6)
        won = []

        def take(i: int) -> None:
            barrier.wait()
            lease = Leases(journal).acquire("x", f"w{i}", ttl=60)
            if lease is not None:
                won.append(lease)

        threads = [threading.Thread(target=take, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(won) == 1 and won[0].epoch == 2
        assert journal.version("lease-x") == 2
        assert leases.current("x").holder == won[0].holder

    def test_a_lease_counts_the_starts_of_its_work_from_its_last_event(self, journal):
        leases = Leases(journal)
        first = leases.acquire("x", "w1", ttl=-1, at_version=5)  # its holder dies
        second = leases.acquire("x", "w2", ttl=60, at_version=5)
        assert (first.attempt, second.attempt) == (1, 2)
        second = leases.renew(second, ttl=60)
        leases.release(second, "waiting", counted=False)  # handed its work on: not a retry
        assert leases.attempts("x", 5) == 1
        assert leases.acquire("x", "w3", ttl=-1, at_version=5).attempt == 2
        reset = journal.append("control-x", [debit(1)], 0)[0].position  # a person's retry
        assert leases.attempts("x", 5, since=reset) == 0
        assert leases.acquire("x", "w4", ttl=60, at_version=5, since=reset).attempt == 1
        assert leases.attempts("x", 6) == 0

    def test_the_lease_primitive_reads_only_the_last_event_of_a_long_lease(self, journal):
        watching = Watching(journal)
        leases = Leases(watching)
        lease = leases.acquire("x", "w1", ttl=60, at_version=1)
        for _ in range(20):
            lease = leases.renew(lease, ttl=60)
        leases.release(lease, "stepped")
        lease = leases.acquire("x", "w2", ttl=60, at_version=1)
        leases.current("x")
        assert leases.attempts("x", 1) == 2 and lease.attempt == 2
        assert watching.reads and all(
            after == version - 1 for stream, after, version in watching.reads
        )

    def test_starts_written_before_the_count_was_carried_still_count(self, journal):
        old = [
            DriverLeased(run_id="r", holder="w1", expires=0.0, at_version=7),
            DriverReleased(run_id="r", holder="w1", outcome="waiting"),
            DriverLeased(run_id="r", holder="w2", expires=0.0, at_version=7),
            DriverLeased(run_id="r", holder="w3", expires=0.0, at_version=7),
        ]
        journal.append("lease-r", old, 0)
        leases = Leases(journal, "r")
        assert leases.attempts("r", 7) == 2  # the start that ended "waiting" does not count
        lease = leases.acquire("r", "w4", ttl=60, at_version=7)
        assert (lease.epoch, lease.attempt) == (5, 3)
        assert leases.attempts("r", 7) == 3  # carried on by the new grant

    def test_a_lease_stream_holding_no_lease_event_is_free_to_take(self, journal):
        journal.append("lease-x", [debit(1)], 0)  # an imported journal may write anything there
        leases = Leases(journal)
        assert leases.current("x") is None
        lease = leases.acquire("x", "w1", ttl=60, at_version=1)
        assert (lease.epoch, lease.attempt) == (2, 1)

    # --- scanning by prefix ------------------------------------------------------------------

    def test_read_prefix_matches_its_prefix_literally(self, journal):
        names = ["lease-a%b", "lease-axb", "lease-a_b", "lease-aXb", "lease-a\\b", "lease-ab"]
        for i, name in enumerate(names):
            journal.append(name, [debit(i)], 0)

        def found(prefix):
            return [r.stream for r in journal.read_prefix(prefix)]

        assert found("lease-a%") == ["lease-a%b"]
        assert found("lease-a_") == ["lease-a_b"]
        assert found("lease-a\\") == ["lease-a\\b"]
        assert found("lease-a") == names  # in position order
        assert found("lease-ab%") == [] and found("run-") == []

    # --- one kind of a stream's events ------------------------------------------------------

    def test_read_of_kind_gives_a_streams_events_of_one_kind_after_a_position(self, journal):
        # by the journal's own read where it has one (the database's), else from a read
        journal.append("claims-a", [debit(1), grant(), debit(2)], 0)
        journal.append("claims-b", [debit(3)], 0)
        later = journal.append("claims-a", [debit(4), grant("w2"), debit(5)], 3)

        def amounts(reader, after=0, limit=None):
            found = read_of_kind(reader, "claims-a", "BudgetDebited", after, limit)
            assert all(r.stream == "claims-a" for r in found)
            return [r.event.amount for r in found]

        for reader in (journal, Fenced(journal, "lease-x", 1)):
            assert amounts(reader) == [1, 2, 4, 5]
            assert amounts(reader, after=later[0].position) == [5]
            assert amounts(reader, after=later[0].position - 1) == [4, 5]
            assert amounts(reader, limit=3) == [1, 2, 4]
            assert amounts(reader, after=later[-1].position) == []
        assert read_of_kind(journal, "claims-none", "BudgetDebited") == []

    # --- several streams at once -------------------------------------------------------------

    def test_batches_on_several_streams_are_written_in_order(self, journal):
        journal.append("run-b", [debit(9)], 0)
        recs = journal.append_batches(
            [("run-a", [debit(1), debit(2)], 0), ("run-b", [debit(3)], 1), ("run-a", [debit(4)], 2)]
        )
        assert [(r.stream, r.version, r.event.amount) for r in recs] == [
            ("run-a", 1, 1),
            ("run-a", 2, 2),
            ("run-b", 2, 3),
            ("run-a", 3, 4),
        ]
        assert [r.position for r in recs] == sorted(r.position for r in recs)
        assert [r.event.amount for r in journal.read_all()] == [9, 1, 2, 3, 4]
        assert (journal.version("run-a"), journal.version("run-b")) == (3, 2)

    def test_a_refused_batch_leaves_no_batch_written(self, journal):
        journal.append("run-b", [debit(9)], 0)
        with pytest.raises(WrongExpectedVersion) as info:
            # The first two would be written alone; the third expects run-b where it is not.
            journal.append_batches(
                [("run-a", [debit(1)], 0), ("run-c", [debit(2)], 0), ("run-b", [debit(3)], 0)]
            )
        assert (info.value.stream, info.value.actual) == ("run-b", 1)
        assert [r.event.amount for r in journal.read_all()] == [9]
        assert (journal.version("run-a"), journal.version("run-c")) == (0, 0)
        # Nothing was kept aside either: the same streams take the next write from scratch.
        recs = journal.append_batches([("run-a", [debit(1)], 0), ("run-b", [debit(3)], 1)])
        assert [(r.stream, r.version) for r in recs] == [("run-a", 1), ("run-b", 2)]

    def test_a_stream_expected_past_its_earlier_batch_is_refused(self, journal):
        with pytest.raises(WrongExpectedVersion):
            journal.append_batches([("run-a", [debit(1)], 0), ("run-a", [debit(2)], 0)])
        assert journal.read_all() == []

    def test_an_event_id_in_two_batches_is_refused(self, journal):
        e = debit(1)
        with pytest.raises(DuplicateEventId, match="run-b"):
            journal.append_batches([("run-a", [e], 0), ("run-b", [e], 0)])
        with pytest.raises(ValueError, match="at least one batch"):
            journal.append_batches([])
        assert journal.read_all() == []

    def test_batches_appended_again_are_a_retry_returning_the_originals(self, journal):
        batches = [("run-a", [debit(1)], 0), ("run-b", [debit(2), debit(3)], 0)]
        first = journal.append_batches(batches)
        again = journal.append_batches(batches)
        assert [(r.stream, r.version, r.position) for r in again] == [
            (r.stream, r.version, r.position) for r in first
        ]
        assert len(journal.read_all()) == 3
