"""The figures of a run's coordination metrics that the sums across runs add up
(journal_store/metrics_days.py), as one flat record: what the metrics fold snapshots at a
fork point and the runs read model keeps."""

from __future__ import annotations

from typing import Any

# The figures of a run that the sums across runs add up (journal_store/metrics_days.py) and
# that grow with its journal: what a prefix holds of each is no more than the whole holds, and
# a fork's copied prefix holds exactly its parent's up to the fork point. The open counts (a
# conflict or letter waiting "now") and the verdict (done and verified) are the run's as it
# stands, not sums of its events: docs/metrics.md.
SUMMED = (
    "claims",
    "contested",
    "handoffs",
    "failed_handoffs",
    "deliveries",
    "stale_deliveries",
    "files_written",
    "shared_files",
    "reviewed_tasks",
    "looked_at_tasks",  # livelock_rate's whole: the tasks reviewed and every one that livelocked
    "livelocked_tasks",
    "verifications",
    "independent_verifications",
    "conflicts_resolved",
    "conflict_wait",
    "human_wait",
    "dead_letters",
    "waits",
    "deadlocks",
    "commitments",
    "orphaned",
)


def summed(m: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The run's SUMMED figures from its metrics (seconds as seconds; `conflict_wait` is the
    seconds its resolved conflicts waited in all, its mean latency times their count)."""
    latency = m["conflict_resolution_latency"]
    return {
        "claims": m["ownership_conflict_rate"]["claims"],
        "contested": m["ownership_conflict_rate"]["contested"],
        "handoffs": m["handoff_failure_rate"]["handoffs"],
        "failed_handoffs": m["handoff_failure_rate"]["failed"],
        "deliveries": m["stale_message_rate"]["deliveries"],
        "stale_deliveries": m["stale_message_rate"]["stale"],
        "files_written": m["duplicate_work_rate"]["files_written"],
        "shared_files": m["duplicate_work_rate"]["shared_files"],
        "reviewed_tasks": m["livelock_rate"]["reviewed_tasks"],
        "looked_at_tasks": m["livelock_rate"]["looked_at"],
        "livelocked_tasks": m["livelock_rate"]["livelocked"],
        "verifications": m["verification_independence_rate"]["verifications"],
        "independent_verifications": m["verification_independence_rate"]["independent"],
        "conflicts_resolved": latency["resolved"],
        "conflict_wait": round((latency["value"] or 0.0) * latency["resolved"], 3),
        "human_wait": latency["waiting_for_people_seconds"],
        "dead_letters": latency["dead_letters"],
        "waits": m["deadlock_rate"]["waits"],
        "deadlocks": m["deadlock_rate"]["deadlocks"],
        "commitments": m["commitment_orphan_rate"]["total"],
        "orphaned": m["commitment_orphan_rate"]["orphaned"],
    }
