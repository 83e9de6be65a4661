"""What a fork reads of its parent (fork.records_of): the parent's own streams, by names that
hold its id and the streams it wrote to, not every `worker-` and `saga-` stream of every run in
the store filtered afterwards, which made a fork cost what the store holds
(bench/whole_reads.py has the figures). The answer is compared with that whole read's, on the
store, the file journal and the in-memory one."""

from __future__ import annotations

from typing import Any

from journal_store.journal import DjangoJournal
from runtime import fork, streams
from runtime.coordination.gates import TASK, Intents
from runtime.events import IntentDeclared, LeaseGranted, SagaStepCompleted, ToolDispatched
from runtime.journal import MemoryJournal, Recorded
from runtime.jsonl import JsonlJournal
from tests.conftest import on_every_backend
from tests.coordination.counting import Counting as Counted

OTHERS = 40  # other runs, each with streams of every sort a fork reads
RUN = "r-a"


class Counting(Counted):
    """The journal, counting the records it hands out, however asked: also by prefix and by
    the runs' index, as a fork reads."""

    def read_prefix(self, prefix: str) -> list[Recorded]:
        return self.count(self.journal.read_prefix(prefix))

    def read_owned(self, run_id: str, prefix: str) -> list[Recorded]:
        return self.count(self.journal.read_owned(run_id, prefix))


def dispatched(run: str) -> ToolDispatched:
    return ToolDispatched(run_id=run, tool="t", args={})


def made(stream: str, run: str) -> Any:
    if stream.startswith("saga-"):
        return SagaStepCompleted(run_id=run, saga_id="x", step="s", key="k")
    if stream.startswith("lease-"):
        return LeaseGranted(run_id=run, resource="x", holder="h", expires=1.0)
    return dispatched(run)


def fill(journal: Any, run: str) -> None:
    """A run's streams of every sort records_of reads, two events each."""
    for stream in (
        streams.journal(run),
        streams.breakers(run),
        streams.worker(run, "S1", "w1"),
        f"saga-refund-{run}",
        "lease-" + streams.resource(run, "fix", "T1"),
    ):
        journal.append(stream, [made(stream, run), made(stream, run)], 0)
    intent = IntentDeclared(
        run_id="", intent_id=TASK + run, intent_version=2, statement="s", by="p"
    )
    journal.append(Intents.stream(TASK + run), [intent], 0)


def filled(journal: Any) -> Any:
    for n in range(OTHERS // 2):
        fill(journal, f"r-other{n}")
    fill(journal, RUN)
    # Run r-a-b's worker: a name run r-a could own too, which r-a never wrote to.
    journal.append(streams.worker("r-a-b", "S1", "w1"), [dispatched("r-a-b")], 0)
    for n in range(OTHERS // 2, OTHERS):
        fill(journal, f"r-other{n}")
    return journal


def whole(journal: Any, run_id: str) -> list[tuple[str, int]]:
    """What records_of answered before: every stream so named, picked out afterwards."""
    found: list[Recorded] = list(journal.read(Intents.stream(TASK + run_id)))
    found += journal.read(streams.journal(run_id)) + journal.read(streams.breakers(run_id))
    for prefix in ("worker-", "saga-"):
        found += [r for r in journal.read_prefix(prefix) if streams.owned_by(r.stream, run_id)]
    found += journal.read_prefix("lease-" + streams.resource(run_id, ""))
    return [(r.stream, r.position) for r in sorted(found, key=lambda r: r.position)]


def check(journal: Any, counting: Counting) -> None:
    found = [(r.stream, r.position) for r in fork.records_of(counting, RUN)]
    expected = [(s, p) for s, p in whole(journal, RUN) if s != "worker-r-a-b-S1-w1"]
    assert found == expected
    assert len(found) == 11  # five streams of two, and the declared version
    assert sum(counting.handed.values()) == len(found)  # none of the other runs' records
    assert {s for s, _ in found} == {s for s in counting.handed}


@on_every_backend()
def test_the_store_reads_the_runs_own_streams_alone(alias) -> None:
    journal = filled(DjangoJournal(alias))
    check(journal, Counting(journal))


def test_the_file_journal_reads_the_runs_own_streams_alone(tmp_path) -> None:
    filled(JsonlJournal(tmp_path / "j.jsonl", fsync=False))
    journal = JsonlJournal(tmp_path / "j.jsonl", fsync=False)  # its index, read from the file
    check(journal, Counting(journal))


def test_a_journal_that_only_scans_gives_the_same_answer() -> None:
    journal = filled(MemoryJournal())
    found = fork.records_of(journal, RUN)  # it has no read_owned
    assert [(r.stream, r.position) for r in found] == [
        (s, p) for s, p in whole(journal, RUN) if s != "worker-r-a-b-S1-w1"
    ]
