"""Which run a stream is, by its name: a harness's leases on a run's own resources
(`lease-<run>:fix:T1`, a parallel writer's) are that run's, and move with it when it is renamed
(a fork, an import under a new id)."""

from __future__ import annotations

from runtime import streams


def test_a_lease_on_a_runs_resource_is_the_runs_own():
    name = "lease-" + streams.resource("r-a813a8dce0bc", "fix", "T1")
    assert name == "lease-r-a813a8dce0bc:fix:T1"
    assert streams.owners(name) == ["r-a813a8dce0bc"]
    assert streams.owned_by(name, "r-a813a8dce0bc")
    assert streams.owners("lease-r-a:file:src/app/parser.py") == ["r-a"]


def test_it_is_renamed_with_the_run_and_only_with_it():
    name = "lease-r-a:file:src/r-a:x.py"
    assert streams.renamed(name, "r-a", "r-b") == "lease-r-b:file:src/r-a:x.py"
    assert streams.renamed(name, "r-ab", "r-b") == name  # another run's: left as it is
    assert streams.resource_renamed("r-a:fix:T1", "r-a", "r-b") == "r-b:fix:T1"
    assert streams.resource_renamed("r-ab:fix:T1", "r-a", "r-b") == "r-ab:fix:T1"


def test_the_driver_lease_and_the_specialists_are_read_as_before():
    assert streams.owners("lease-r-a") == ["r-a"]
    assert streams.renamed("lease-r-a", "r-a", "r-b") == "lease-r-b"
    assert "r-a" in streams.owners("lease-worker-r-a-S1-w")
    assert streams.owners("subject-order:o-1") == []
