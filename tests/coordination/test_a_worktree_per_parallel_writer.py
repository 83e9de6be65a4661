"""Parallel writers each get a git worktree of their own (real git): they never see or touch each
other's files, and their work reaches main only through the mutation gate."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest

from runtime import workspace
from runtime.coordination.gates import Intents
from runtime.coordination.mutation import Authority, Evidence, GateRefused, Mutation, MutationGate
from runtime.coordination.writers import Writers
from runtime.journal import MemoryJournal
from teams.repos import template


@pytest.fixture
def writers(tmp_path):
    root = workspace.located(tmp_path, "w")
    workspace.prepare(root, template("parse-empty"))
    journal = MemoryJournal()
    Intents(journal).declare("task-r-1", "two fixes at once", by="ann")
    gate = MutationGate(journal, Authority.of({"merge": {"writer-a", "writer-b"}}), "gate-r-1")
    return Writers(root, gate, run_id="r-1"), journal


def approved(writer, ok=True):
    return Mutation(
        what=f"merging {writer}'s branch into main",
        actor=writer,
        capability="merge",
        intent=("task-r-1", 1),
        evidence=(Evidence(f"ACCEPT for {writer}", ok, f"no ACCEPT for {writer}"),),
        run_id="r-1",
    )


def refs(root):
    return workspace.git(root, "for-each-ref", "--format=%(refname) %(objectname)")


def test_two_writers_in_parallel_never_touch_each_others_files(writers):
    w, _ = writers
    made = {name: w.add(name) for name in ("writer-a", "writer-b")}
    assert made["writer-a"].base == made["writer-b"].base  # one base commit for both
    assert made["writer-a"].path != made["writer-b"].path
    assert w.add("writer-a") == made["writer-a"]  # asked again: the same worktree, journalled once
    assert [r.event.writer for r in w.gate.journal.read(w.stream)] == ["writer-a", "writer-b"]
    main_before = workspace.git(w.root, "rev-parse", "main")

    def write(name: str) -> None:
        here = w.path(name)
        for i in range(20):  # interleaved with the other writer's writes
            (here / "NOTES.md").write_text(f"{name} {i}\n")
            (here / f"{name}.txt").write_text(f"{i}\n")
        w.commit(name, f"{name}'s change")

    threads = [threading.Thread(target=write, args=(n,)) for n in made]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)

    a, b = w.path("writer-a"), w.path("writer-b")
    assert (a / "NOTES.md").read_text() == "writer-a 19\n"  # nobody overwrote it
    assert (b / "NOTES.md").read_text() == "writer-b 19\n"
    assert not (a / "writer-b.txt").exists() and not (b / "writer-a.txt").exists()
    assert not (w.root / "NOTES.md").exists()  # the shared checkout saw nothing
    assert workspace.git(w.root, "rev-parse", "main") == main_before
    assert w.commit("writer-a", "again")["files"] == ["NOTES.md", "writer-a.txt"]


def test_each_writers_work_reaches_main_through_the_gate_once(writers):
    w, journal = writers
    for name in ("writer-a", "writer-b"):
        w.add(name)
        (w.path(name) / f"{name}.txt").write_text("done\n")
        w.commit(name, f"{name}'s change")
    first = w.merge("writer-a", approved("writer-a"))
    second = w.merge("writer-b", approved("writer-b"))
    assert workspace.git(w.root, "rev-parse", "main") == second != first
    assert set(workspace.git(w.root, "ls-tree", "--name-only", "main").split()) >= {
        "writer-a.txt",
        "writer-b.txt",
    }
    # the merge is an effect of the ledger: asked again, it is read back, not done again
    assert w.merge("writer-a", approved("writer-a")) == first
    assert workspace.git(w.root, "rev-parse", "main") == second
    assert len(journal.read(f"effect-{w.key('writer-a')}")) == 2  # started, succeeded


@pytest.mark.parametrize(
    "mutation, check",
    [
        (approved("writer-a", ok=False), "evidence"),
        (Mutation("merging", "writer-c", "merge", ("task-r-1", 1), evidence=()), "authority"),
        (replace(approved("writer-a"), intent=("task-r-1", 0)), "intent"),
    ],
    ids=["without-approval", "another-writer", "stale-intent"],
)
def test_a_merge_the_gate_refuses_moves_no_ref(writers, mutation, check):
    w, journal = writers
    w.add("writer-a")
    (w.path("writer-a") / "writer-a.txt").write_text("done\n")
    w.commit("writer-a", "writer-a's change")
    before = refs(w.root)
    with pytest.raises(GateRefused) as refused:
        w.merge("writer-a", mutation)
    assert refused.value.refused.check == check
    assert refs(w.root) == before
    assert journal.read_prefix("effect-") == []
