"""A run that stopped making progress is a finding, read from its driver's lease alone: a lease
that ran out before the next step took it, a step given back with no next step for too long,
or the reconciler's RunStalled while it lasts; journals from before the one lease primitive
(DriverLeased/DriverReleased) read the same."""

from __future__ import annotations

from runtime.diagnose import diagnose
from runtime.events import (
    DriverLeased,
    DriverReleased,
    LeaseGranted,
    LeaseReleased,
    LeaseRenewed,
    RunStalled,
    TeamStarted,
)
from runtime.journal import Recorded
from runtime.signatures.stalls import QUIET

RUN = "r-1"
T0 = 1_796_000_000.0  # 2026-11-30 00:53:20 UTC


def journal(*pairs):
    """Records at positions 1, 2, ...: (stream, event), each stream versioned in order."""
    versions: dict[str, int] = {}
    out = []
    for position, (stream, event) in enumerate(pairs, start=1):
        versions[stream] = versions.get(stream, 0) + 1
        out.append(Recorded(stream, versions[stream], position, event))
    return out


def started():
    return (
        f"run-{RUN}",
        TeamStarted(run_id=RUN, t=T0, team="repo-fix", scenario="s", task="t", config={}),
    )


def granted(holder, t, ttl=30.0):
    return (
        f"lease-{RUN}",
        LeaseGranted(run_id=RUN, t=t, resource=RUN, holder=holder, expires=t + ttl),
    )


def released(holder, t, outcome):
    return (
        f"lease-{RUN}",
        LeaseReleased(run_id=RUN, t=t, resource=RUN, holder=holder, epoch=1, outcome=outcome),
    )


def stalls(records):
    return [f for f in diagnose(records) if f["kind"] == "stalled_run"]


def test_a_lease_that_ran_out_before_the_next_step_took_it_is_a_stall_with_its_length():
    records = journal(
        started(),
        granted("w1:7", T0 + 1),
        (
            f"lease-{RUN}",
            LeaseRenewed(
                run_id=RUN, t=T0 + 11, resource=RUN, holder="w1:7", expires=T0 + 41, epoch=1
            ),
        ),
        granted("w2:9", T0 + 200),
    )
    [stall] = stalls(records)
    assert stall["summary"] == (
        "the run stalled for 2 min 39 s: the lease of w1:7 ran out at 00:54:01 UTC (it stopped "
        "renewing it), until w2:9 took it at 00:56:40 UTC"
    )
    assert stall["positions"] == [3, 4]
    assert (stall["since"], stall["until"]) == (T0 + 41, T0 + 200)


def test_an_old_journals_driver_lease_that_ran_out_reads_the_same():
    records = journal(
        started(),
        (
            f"lease-{RUN}",
            DriverLeased(run_id=RUN, t=T0, holder="w1", expires=T0 + 30, at_version=1),
        ),
        (
            f"lease-{RUN}",
            DriverLeased(run_id=RUN, t=T0 + 4000, holder="w2", expires=T0 + 4030, at_version=1),
        ),
    )
    [stall] = stalls(records)
    assert stall["summary"].startswith("the run stalled for 66 min 10 s: the lease of w1 ran out")


def test_a_step_given_back_with_no_next_step_for_too_long_is_a_stall_and_a_prompt_one_is_not():
    prompt = journal(
        started(),
        granted("w1", T0),
        released("w1", T0 + 5, "stepped"),
        granted("w2", T0 + 5 + QUIET - 1),
    )
    assert stalls(prompt) == []
    late = journal(
        started(), granted("w1", T0), released("w1", T0 + 5, "stepped"), granted("w2", T0 + 905)
    )
    [stall] = stalls(late)
    assert "w1 gave the lease back at 00:53:25 UTC (stepped) and no step came" in stall["summary"]
    assert stall["summary"].startswith("the run stalled for 15 min 0 s")


def test_a_run_that_waited_for_a_person_is_no_stall_however_long_it_waited():
    for outcome in ("interrupted", "escalated", "dead-lettered"):
        records = journal(
            started(),
            granted("w1", T0),
            released("w1", T0 + 5, outcome),
            granted("w2", T0 + 86_400),
        )
        assert stalls(records) == [], outcome
    old = journal(
        started(),
        (
            f"lease-{RUN}",
            DriverLeased(run_id=RUN, t=T0, holder="w1", expires=T0 + 30, at_version=1),
        ),
        (f"lease-{RUN}", DriverReleased(run_id=RUN, t=T0 + 3, holder="w1", outcome="interrupted")),
        (
            f"lease-{RUN}",
            DriverLeased(run_id=RUN, t=T0 + 9e4, holder="w2", expires=T0 + 9e4 + 30, at_version=1),
        ),
    )
    assert stalls(old) == []


def test_another_resources_lease_is_not_the_runs_driving():
    records = journal(
        started(),
        (
            "lease-order:1",
            LeaseGranted(run_id=RUN, t=T0, resource="order:1", holder="w1", expires=T0 + 1),
        ),
        (
            "lease-order:1",
            LeaseGranted(run_id=RUN, t=T0 + 500, resource="order:1", holder="w2", expires=T0 + 501),
        ),
    )
    assert stalls(records) == []


def test_the_reconcilers_stall_is_a_finding_while_it_lasts_and_ends_when_a_step_takes_the_run():
    stalled = RunStalled(run_id=RUN, t=T0 + 100, since=T0 + 30, why="lease expired", holder="w1:7")
    records = journal(started(), granted("w1:7", T0), (f"control-{RUN}", stalled))
    [open_] = stalls(records)
    assert open_["summary"] == (
        "the run stalled: the lease of w1:7 ran out at 00:53:50 UTC, and nobody has driven it "
        "since; the reconciler queued it again (if it stays stalled, check that a worker with "
        "beat is running)"
    )
    again = RunStalled(run_id=RUN, t=T0 + 200, since=T0 + 30, why="lease expired", holder="w1:7")
    records = [
        *records,
        *journal(started(), (f"control-{RUN}", again), granted("w2", T0 + 260))[1:],
    ]
    records = [Recorded(r.stream, r.version, i, r.event) for i, r in enumerate(records, start=1)]
    [over] = stalls(records)  # one stall, noted twice, then ended: one finding
    assert over["summary"].startswith(
        "the run stalled for 3 min 50 s: the lease of w1:7 ran out at"
    )
    assert over["summary"].endswith("until w2 took it at 00:57:40 UTC")
    assert over["positions"] == [2, 3, 4, 5]
