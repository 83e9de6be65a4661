"""What a merge into main must show repo-fix's mutation gate (runtime/coordination/mutation.py).

The harness merges a candidate only through the gate: the run's intent version, the lease of
whoever drives the merge, the awarded coder's authority, two pieces of evidence (the reviewer's
ACCEPT of this very commit on the task thread, and the candidate's own test run, the one the
harness showed the reviewer, showing no failures), and one merge per task. These are the pieces
it hands the gate; `Harness.integrate` does the merge.

An ACCEPT does not merge a candidate whose tests fail: the reviewer may have missed them, the
record has not. A candidate with no test run after its coder's last edit (`tests` None) is let
through, as it always was: the reviewer is shown that nothing was run and judges that (the
`premature-done` scenario's reviewer rejects it for that; `done_without_evidence` finds the
coder's DONE), a coder whose sandbox cannot start has no run to show however many rounds it is
given, and the zero-intelligence experiment (runtime/zero.py) measures exactly what a rubber
stamp on an untested change lets through. The harness's own suite check (`SuiteChecked`) is
what stands behind such a merge.

`merged` does the merge the gate let through, of the very commit accepted (by its id: a commit
added to the branch since the review stays out of main). The gate judges the record, not the
repository: a candidate whose branch changed a file main changed since the branch left it
(another writer's, merged first) conflicts, and is refused after all (IntegrationRefused,
naming the files), the merge aborted and main as it was; the harness sends it back to its
coder.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from runtime import merges
from runtime.coordination.keys import request_hash
from runtime.coordination.mutation import Authority, Evidence, Mutation, MutationGate
from runtime.events import CandidateCommitted, Integrated, IntegrationRefused
from runtime.journal import Fence
from runtime.messages import Message, Performative
from runtime.pytest_runs import failures
from runtime.session import Session
from teams.repo_fix.roles import role_of


def approval(log: Iterable[Message], task_id: str, commit: str) -> Message | None:
    """The reviewer's ACCEPT on this thread for this very commit, if there is one."""
    for message in log:
        if (
            message.task_id == task_id
            and message.performative is Performative.ACCEPT
            and role_of(message.sender).name == "reviewer"
            and message.payload.get("commit") == commit
        ):
            return message
    return None


def tested(candidate: CandidateCommitted, tests: dict[str, Any] | None) -> Evidence:
    """The candidate's own test run (`Harness.evidence`: its coder's last successful run_tests
    after its last edit) as evidence: it holds unless that run shows failures. None (no run
    after the last edit) holds: see the module's docstring."""
    commit = candidate.commit[:12]
    if tests is None:
        return Evidence(f"no test run with {commit}", True)
    failed = failures(tests)
    counts = f"{failed} failed, {tests.get('passed', 0)} passed"
    return Evidence(
        f"tests of {commit}: {counts}",
        failed == 0,
        f"the tests submitted with commit {commit} fail ({counts})",
    )


def mutation(
    task_id: str,
    candidate: CandidateCommitted,
    approval: Message | None,
    tests: dict[str, Any] | None,
    intent: tuple[str, int] | None,
    lease: Fence | None,
    run_id: str,
) -> Mutation:
    """A merge into main as the gate sees it. Its evidence: the reviewer's ACCEPT of the
    commit, and `tests`, the candidate's test run the reviewer was shown. Its key is the
    task's (one merge per task, in this run: the harness keeps the run's merges, so the key
    needs no run id and reads the same in every run); its request, the commit: merging another
    commit for a merged task is refused."""
    key = f"integrate:{task_id}"
    return Mutation(
        what=f"merging {candidate.branch} ({candidate.commit[:12]}) into main",
        actor=candidate.agent or "",
        capability="integrate",
        intent=intent,
        lease=lease,
        evidence=(
            Evidence(
                f"ACCEPT {approval.message_id}" if approval else f"ACCEPT on {task_id}",
                approval is not None,
                f"no ACCEPT from the reviewer on {task_id} for commit {candidate.commit[:12]}",
            ),
            tested(candidate, tests),
        ),
        key=key,
        expected_key=key,
        request=request_hash("integrate", "main", candidate.commit),
        run_id=run_id,
    )


def gate(session: Session, coder: str | None, merged: Mapping[str, str]) -> MutationGate:
    """The gate for a merge on a task: only the coder awarded the task (`coder`; None when
    nobody was) may have its candidates merged, once per task (`merged`: idempotency key ->
    the request merged under it)."""
    return MutationGate(
        session.journal,
        Authority.of({"integrate": {coder} if coder else set()}),
        session.stream,
        used=merged.get,
    )


def merged(
    session: Session, root: Path, task_id: str, candidate: CandidateCommitted, approval: Message
) -> Integrated | IntegrationRefused:
    """Merge the candidate into main, once: Integrated, or IntegrationRefused when it conflicts
    with main (the merge aborted). Either is read back, never done again, on resume and
    replay."""
    session.flush()
    recorded = session.peek()
    if isinstance(recorded, IntegrationRefused):
        session.emit(recorded)
        return recorded
    try:
        return session.activity(
            Integrated,
            lambda: {
                "branch": candidate.branch,
                "commit": merges.merge(
                    root, candidate.branch, f"integrate {task_id}", candidate.commit
                ),
                "approval": approval.message_id,
                "approved_by": approval.sender,
            },
            task_id=task_id,
        )
    except merges.MergeConflict as conflict:
        refused = session.new(
            IntegrationRefused, task_id=task_id, branch=candidate.branch, reason=str(conflict)
        )
        session.emit(refused)
        return refused
