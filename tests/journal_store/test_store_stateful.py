"""A property-based model of the store: random appends with right and wrong expected versions,
retried and half-retried batches, catch-ups and rebuilds — invariants checked after every step."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import Checkpoint, RunState, RunSummary, StoredEvent
from runtime.events import BudgetDebited
from runtime.journal import DuplicateEventId, WrongExpectedVersion
from tests.journal_store.conftest import ALIASES

pytestmark = pytest.mark.slow

STREAMS = st.sampled_from(["run-a", "run-b", "run-c"])


class StoreMachine(RuleBasedStateMachine):
    alias = "default"

    @initialize()
    def empty_store(self) -> None:
        for model in (StoredEvent, Checkpoint, RunState, RunSummary):
            model.objects.using(self.alias).all().delete()
        self.journal = DjangoJournal(self.alias)
        self.model: dict[str, list[str]] = {}
        self.last: tuple[str, list[BudgetDebited], int, list[int]] | None = None

    def version(self, stream: str) -> int:
        return len(self.model.get(stream, []))

    @rule(stream=STREAMS, size=st.integers(1, 4))
    def append_at_the_right_version(self, stream: str, size: int) -> None:
        batch = [BudgetDebited(run_id=stream[4:], amount=i) for i in range(size)]
        recs = self.journal.append(stream, batch, self.version(stream))
        assert [r.version for r in recs] == list(
            range(self.version(stream) + 1, self.version(stream) + size + 1)
        )
        self.last = (stream, batch, self.version(stream), [r.position for r in recs])
        self.model.setdefault(stream, []).extend(e.id for e in batch)

    @rule(stream=STREAMS, off=st.sampled_from([-2, -1, 1, 3]))
    def append_at_a_wrong_version(self, stream: str, off: int) -> None:
        expected = self.version(stream) + off
        if expected < 0:
            with pytest.raises(ValueError):
                self.journal.append(stream, [BudgetDebited(amount=1)], expected)
            return
        with pytest.raises(WrongExpectedVersion) as info:
            self.journal.append(stream, [BudgetDebited(amount=1)], expected)
        assert info.value.actual == self.version(stream)

    @precondition(lambda self: self.last is not None)
    @rule()
    def retry_the_last_batch(self) -> None:
        assert self.last is not None
        stream, batch, expected, positions = self.last
        again = self.journal.append(stream, batch, expected)  # whatever the stream is at now
        assert [r.position for r in again] == positions

    @precondition(lambda self: self.last is not None)
    @rule()
    def mix_a_stored_id_into_a_new_batch(self) -> None:
        assert self.last is not None
        stream, batch, _, _ = self.last
        with pytest.raises(DuplicateEventId):
            self.journal.append(stream, [batch[0], BudgetDebited(amount=2)], self.version(stream))

    @rule()
    def catch_up(self) -> None:
        projection.catch_up(["runs"], using=self.alias, batch=3)
        self.check_projection()

    @rule()
    def rebuild(self) -> None:
        projection.rebuild(["runs"], using=self.alias)
        self.check_projection()

    def check_projection(self) -> None:
        counts = dict(RunSummary.objects.using(self.alias).values_list("run_id", "event_count"))
        assert counts == {s[4:]: len(ids) for s, ids in self.model.items() if ids}

    @invariant()
    def streams_are_contiguous_and_hold_exactly_the_model(self) -> None:
        for stream, ids in self.model.items():
            recs = self.journal.read(stream)
            assert [r.version for r in recs] == list(range(1, len(ids) + 1))
            assert [r.event.id for r in recs] == ids

    @invariant()
    def positions_increase_and_ids_are_unique(self) -> None:
        recs = self.journal.read_all()
        positions = [r.position for r in recs]
        assert positions == sorted(set(positions))
        assert len({r.event.id for r in recs}) == len(recs) == sum(map(len, self.model.values()))


@pytest.mark.parametrize("alias", ["default", "postgres"], ids=["sqlite", "postgres"])
@pytest.mark.django_db(databases=ALIASES)
def test_the_store_keeps_its_invariants_under_random_operations(alias):
    if alias not in ALIASES:
        pytest.skip("PostgreSQL is not available here")
    machine = type("Machine", (StoreMachine,), {"alias": alias})
    machine.TestCase.settings = settings(
        max_examples=25,
        stateful_step_count=25,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    machine.TestCase().runTest()
