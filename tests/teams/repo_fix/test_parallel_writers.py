"""Parallel writers in repo-fix (real git, real pytest): each fix a commitment of its own coder,
written in a worktree of its own and merged through the gate in turn; a writer that goes quiet
loses its lease and its commitment to the other; two writers waiting for each other's files are
parted by the wait-for graph. Each run replays identically."""

from __future__ import annotations

import pytest

from runtime import flight
from runtime.coordination.mutation import Authority, Evidence, Mutation, MutationGate
from runtime.diagnose import diagnose
from runtime.events import (
    CommitmentAcknowledged,
    CommitmentMade,
    CommitmentReleased,
    CommitmentTransferred,
    DeadlinePassed,
    DeadlockDetected,
    Integrated,
    LeaseAwaited,
    LeaseGivenBack,
    LeaseReleased,
    LeaseTaken,
    MessageSent,
    MutationRefused,
    WorktreeAdded,
    WorktreeRemoved,
)
from runtime.journal import MemoryJournal
from runtime.jsonl import JsonlJournal
from runtime.session import Session
from runtime.workspace import git

pytestmark = pytest.mark.slow

PARSER, SLUG = "textparse/parser.py", "slugkit/slug.py"


def of(flown, cls):
    return [e for e in flown.events if isinstance(e, cls)]


def steps(flown, commitment):
    """A commitment's life: (event, who) for each step."""
    out = []
    for e in flown.events:
        if getattr(e, "commitment_id", None) != commitment:
            continue
        if isinstance(e, CommitmentMade):
            out.append(("made", e.owner))
        elif isinstance(e, CommitmentAcknowledged):
            out.append(("acknowledged", e.by))
        elif isinstance(e, CommitmentTransferred):
            out.append(("transferred", f"{e.from_owner}>{e.to_owner}"))
        elif isinstance(e, CommitmentReleased):
            out.append((e.outcome, e.by))
    return out


def leases(flown):
    """The events of the run's leases (streams of their own beside the run's)."""
    return [r.event for r in JsonlJournal(flown.path).read_all() if r.stream.startswith("lease-")]


def changed(root, commit):
    return git(root, "diff", "--name-only", f"{commit}^1", commit).splitlines()


def test_two_writers_each_write_in_their_own_worktree_and_merge_in_turn_through_the_gate(
    fly_team,
):
    flown = fly_team("parallel-writers")
    assert flown.outcome.status == "done"
    assert steps(flown, "c-T1") == [
        ("made", "coder-a"),
        ("acknowledged", "coder-a"),
        ("fulfilled", "coder-a"),
    ]
    assert steps(flown, "c-T2") == [
        ("made", "coder-b"),
        ("acknowledged", "coder-b"),
        ("fulfilled", "coder-b"),
    ]
    trees = {e.agent: e for e in of(flown, WorktreeAdded) if e.branch}
    assert set(trees) == {"coder-a", "coder-b"}
    assert trees["coder-a"].base == trees["coder-b"].base  # both from main as it stood
    assert trees["coder-a"].path != trees["coder-b"].path != str(flown.workspace)
    # both drafted before either was reviewed: they wrote at the same time, each alone
    kinds = [(e.kind, e.agent) for e in flown.events]
    drafted = [i for i, k in enumerate(kinds) if k[0] == "CandidateCommitted"]
    reviewed = [
        i
        for i, e in enumerate(flown.events)
        if isinstance(e, MessageSent) and e.recipient == "reviewer"
    ]
    assert len(drafted) == 2 and max(drafted) < min(reviewed)
    # each writer's branch holds its own file's change and nothing of the other's
    root = flown.workspace
    assert git(root, "diff", "--name-only", "main~2", "writer/coder-a-T1").splitlines() == [PARSER]
    assert git(root, "diff", "--name-only", "main~2", "writer/coder-b-T2").splitlines() == [SLUG]
    # merged one after the other, each a real merge with the reviewer's ACCEPT
    merged = of(flown, Integrated)
    assert [(m.task_id, m.branch, m.approved_by) for m in merged] == [
        ("T1", "writer/coder-a-T1", "reviewer"),
        ("T2", "writer/coder-b-T2", "reviewer"),
    ]
    assert git(root, "rev-parse", "main") == merged[-1].commit
    assert [changed(root, m.commit) for m in merged] == [[PARSER], [SLUG]]
    assert of(flown, MutationRefused) == []
    # verified once both are merged, each in a worktree of the tester's own at the commit it
    # integrated (on no branch), taken away after: main's working tree holds nothing of it
    looked = [e for e in of(flown, WorktreeAdded) if not e.branch]
    assert [(e.agent, e.base) for e in looked] == [("tester", m.commit) for m in merged]
    assert min(flown.events.index(e) for e in looked) > flown.events.index(merged[-1])
    removed = [e.writer for e in of(flown, WorktreeRemoved)]
    assert removed[2:] == [e.writer for e in looked]  # after the writers' own, once merged
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
    suite = next(e for e in flown.events if e.kind == "SuiteChecked")
    assert suite.ok and (suite.passed, suite.failed) == (4, 0)
    assert diagnose(flown.records) == []
    assert flight.replay(JsonlJournal(flown.path), flown.run_id).identical


def test_a_writer_that_goes_quiet_loses_its_lease_and_its_commitment_moves_to_the_other(
    fly_team,
):
    flown = fly_team("lost-writer")
    assert flown.outcome.status == "done"
    passed = of(flown, DeadlinePassed)
    assert [(d.awaited, d.task_id, d.attempt) for d in passed] == [
        ("coder-b", "T2", 1),
        ("coder-b", "T2", 2),
    ]
    assert steps(flown, "c-T2") == [
        ("made", "coder-b"),
        ("acknowledged", "coder-b"),
        ("transferred", "coder-b>coder-a"),
        ("acknowledged", "coder-a"),
        ("fulfilled", "coder-a"),
    ]
    [moved] = of(flown, CommitmentTransferred)
    assert flown.events.index(moved) > flown.events.index(passed[-1])
    assert "coder-b lost the lease" in moved.reason and moved.epoch > 1
    # the lease was taken from the quiet writer (revoked in its stream), not left to expire
    revoked = [e for e in leases(flown) if isinstance(e, LeaseReleased) and e.holder == "coder-b"]
    assert revoked and all(e.outcome.startswith("revoked: coder-b") for e in revoked)
    given_back = [e for e in of(flown, LeaseGivenBack) if e.holder == "coder-b"]
    assert [(e.resource, e.epoch, e.outcome) for e in given_back] == [
        (e.resource, e.epoch, e.outcome) for e in revoked
    ]
    # coder-a wrote T2 in a worktree of its own, and its merge is the one that shipped
    merged = {m.task_id: m for m in of(flown, Integrated)}
    assert merged["T2"].branch == "writer/coder-a-T2"
    assert "Integrated" in flown.kinds() and flown.outcome.status == "done"
    kinds = {f["kind"] for f in diagnose(flown.records)}
    assert kinds == {"missed_deadline"}  # and no orphaned commitment
    assert flight.replay(JsonlJournal(flown.path), flown.run_id).identical


def test_a_commitment_nobody_took_over_is_found_orphaned(fly_team):
    # The same run as a harness that never moved the quiet writer's commitment would have
    # journalled it: coder-b's commitment is still open when the run finishes.
    flown = fly_team("lost-writer")
    moved = next(r.position for r in flown.records if isinstance(r.event, CommitmentTransferred))
    kept = [
        r
        for r in flown.records
        if not (getattr(r.event, "commitment_id", None) == "c-T2" and r.position >= moved)
    ]
    [found] = [f for f in diagnose(kept) if f["kind"] == "orphaned_commitment"]
    assert found["commitment"] == "c-T2" and found["agents"] == ["coder-b"]
    assert "still open when the run finished" in found["summary"]
    assert not [f for f in diagnose(flown.records) if f["kind"] == "orphaned_commitment"]


def test_two_writers_waiting_for_each_others_files_are_parted_by_the_wait_for_graph(fly_team):
    flown = fly_team("deadlocked-writers")
    assert flown.outcome.status == "done"
    awaited = of(flown, LeaseAwaited)
    assert [(a.waiter, a.holder, a.resource.split(":", 2)[2]) for a in awaited] == [
        ("coder-a", "coder-b", SLUG),
        ("coder-b", "coder-a", PARSER),
    ]
    [broken] = of(flown, DeadlockDetected)
    assert (broken.cycle, broken.refused, broken.rule) == (
        ["coder-a", "coder-b"],
        "coder-b",
        "youngest-wait-refused",
    )
    # coder-b gave its file back, and wrote only after coder-a's fix was merged
    gave_back = next(
        e for e in leases(flown) if isinstance(e, LeaseReleased) and e.holder == "coder-b"
    )
    assert gave_back.resource.endswith(SLUG) and "closed a cycle" in gave_back.outcome
    first_merge = flown.events.index(of(flown, Integrated)[0])
    asked_b = [
        flown.events.index(e)
        for e in of(flown, MessageSent)
        if e.recipient == "coder-b" and e.performative == "request"
    ]
    assert len(asked_b) == 1 and asked_b[0] > first_merge
    assert [m.task_id for m in of(flown, Integrated)] == ["T1", "T2"]
    [found] = diagnose(flown.records)
    assert (found["kind"], found["refused"], found["agents"]) == (
        "deadlock",
        "coder-b",
        ["coder-a", "coder-b"],
    )
    assert flight.replay(JsonlJournal(flown.path), flown.run_id).identical


def test_parallel_writers_refuse_bidding_and_reflection_when_planned():
    for option in ("bidding", "reflect"):
        with pytest.raises(flight.FlightError, match="parallel writers take their fixes"):
            flight.plan("repo-fix", "parallel-writers", "r-vet", **{option: True})


def stepped(config, run_id, root):
    """The run driven one turn per session, as the workers drive it; each session re-reads the
    record (and the leases it took stay taken in the journal between sessions)."""
    journal = MemoryJournal()
    for _ in range(300):
        outcome = flight.drive(Session(journal, run_id, steps=1), config, root)
        if outcome.status != "stepped":
            return outcome, [r.event for r in journal.read(f"run-{run_id}")]
    raise AssertionError("the run never finished")


@pytest.mark.parametrize("scenario", ["parallel-writers", "lost-writer", "deadlocked-writers"])
def test_driven_a_turn_at_a_time_the_writers_take_the_same_leases_waits_and_transfers(
    tmp_path, fly_team, scenario
):
    reference = fly_team(scenario)
    config = flight.plan("repo-fix", scenario, reference.run_id)
    outcome, events = stepped(config, reference.run_id, tmp_path)
    assert outcome.status == reference.outcome.status == "done"

    def shape(evs):
        return [(e.kind, e.agent, e.task_id, getattr(e, "commitment_id", None)) for e in evs]

    assert shape(events) == shape(reference.events)
    taken = [(e.resource, e.holder, e.epoch) for e in events if isinstance(e, LeaseTaken)]
    assert taken == [
        (e.resource, e.holder, e.epoch) for e in reference.events if isinstance(e, LeaseTaken)
    ]


def test_once_its_lease_is_taken_over_the_quiet_writers_fence_is_refused_at_the_gate(fly_team):
    # The journal as it stood when the commitment moved: coder-b's epoch on the fix no longer
    # stands, coder-a's does; a merge fenced by coder-b's would be refused before git is touched.
    flown = fly_team("lost-writer")
    moved = next(r.position for r in flown.records if isinstance(r.event, CommitmentTransferred))
    then = MemoryJournal()
    for r in JsonlJournal(flown.path).read_all():
        if r.position <= moved:
            then.append(r.stream, [r.event], then.version(r.stream))
    fences = {
        e.holder: (f"lease-{e.resource}", e.epoch)
        for e in of(flown, LeaseTaken)
        if e.resource.endswith(":fix:T2")
    }
    gate = MutationGate(then, Authority.of({"integrate": {"coder-a", "coder-b"}}), "gate-t")

    def merge(writer):
        return Mutation(
            what=f"merging {writer}'s T2",
            actor=writer,
            capability="integrate",
            intent=(f"task-{flown.run_id}", 1),
            lease=fences[writer],
            evidence=(Evidence("ACCEPT on T2", True),),
            key="integrate:T2",
            expected_key="integrate:T2",
            run_id=flown.run_id,
        )

    refused = gate.judge(merge("coder-b"))
    assert refused is not None and refused.check == "lease"
    assert (refused.held, refused.current) == (fences["coder-b"][1], fences["coder-a"][1])
    assert gate.judge(merge("coder-a")) is None
