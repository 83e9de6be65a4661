"""The coordination metrics read from the state of their fold (runtime/metrics.py `Metrics`):
each as `{"value": number | None, "reason": str | None, ...what it was computed from}`, null
with the reason where the journal lacks the events that define it (docs/metrics.md).
"""

from __future__ import annotations

from typing import Any

from runtime import status as status_
from runtime.coordination import livelock
from runtime.folds import State
from runtime.signatures.obligations import Deadlocks, Livelocks, OrphanedCommitments


def measured(value: float | int, **detail: Any) -> dict[str, Any]:
    return {"value": value, "reason": None, **detail}


def unmeasured(reason: str, **detail: Any) -> dict[str, Any]:
    return {"value": None, "reason": reason, **detail}


def rate(part: int, whole: int, none: str, **detail: Any) -> dict[str, Any]:
    if not whole:
        return unmeasured(f"not measurable: {none}", **detail)
    return measured(round(part / whole, 4), **detail)


def writers(state: State) -> set[str]:
    return {a for agents in state["duplicates"]["writers"].values() for a in agents}


def coordinating(state: State) -> list[str]:
    """The agents whose tokens are coordination: they coordinate and wrote no file."""
    producers = writers(state)
    return [
        name
        for name, (_, _, coordinates) in sorted(state["agents"].items())
        if coordinates and name not in producers
    ]


def values(state: State) -> dict[str, dict[str, Any]]:
    """Each metric read from the fold's state (docs/metrics.md)."""
    written = state["duplicates"]["writers"]
    shared = sum(1 for agents in written.values() if len(agents) > 1)
    coord_tokens = work_tokens = 0
    coord_seconds = state["transit"] + state["human_wait"]
    work_seconds = 0.0
    coordinators = coordinating(state)
    for name, (tokens, seconds, _) in sorted(state["agents"].items()):
        if name in coordinators:
            coord_tokens += tokens
            coord_seconds += seconds
        else:
            work_tokens += tokens
            work_seconds += seconds
    timed = state["timed"]
    inherited = state.get("inherited")
    overhead_detail = {
        "coordination_tokens": coord_tokens,
        "work_tokens": work_tokens,
        "coordinating_agents": coordinators,
        "coordination_seconds": round(coord_seconds, 3) if timed else None,
        "work_seconds": round(work_seconds, 3) if timed else None,
        "seconds_ratio": round(coord_seconds / work_seconds, 4) if timed and work_seconds else None,
    }
    if inherited is not None:  # a fork: the parent's tokens in those, split the same way
        theirs = sum(inherited.get(name, 0) for name in coordinators)
        overhead_detail["inherited_coordination_tokens"] = theirs
        overhead_detail["inherited_work_tokens"] = sum(inherited.values()) - theirs
    if not state["agents"]:
        overhead = unmeasured("not measurable: no model response was journalled")
        overhead.update(overhead_detail)
    else:
        overhead = rate(
            coord_tokens,
            work_tokens,
            "no tokens were spent on the work itself (every agent only coordinated)",
            **overhead_detail,
        )
    count, waited, longest = state["resolved"]
    open_conflicts = len(state["parked"])
    if count:
        latency = measured(
            round(waited / count, 3),
            unit="seconds",
            resolved=count,
            open=open_conflicts,
            longest=round(longest, 3),
            waiting_for_people_seconds=round(state["human_wait"], 3),
            dead_letters=state.get("lettered", 0),
            open_dead_letters=len(state["letters"]),
        )
    else:
        latency = unmeasured(
            f"not measurable: {open_conflicts} conflict{'s' if open_conflicts > 1 else ''} "
            "parked, none resolved yet"
            if open_conflicts
            else "not measurable: no conflict was parked for a person",
            unit="seconds",
            resolved=0,
            open=open_conflicts,
            waiting_for_people_seconds=round(state["human_wait"], 3),
            dead_letters=state.get("lettered", 0),
            open_dead_letters=len(state["letters"]),
        )
    status = verdict(state)
    if status is None:
        cost = unmeasured("not measurable: the run has not finished", verified_successes=0)
    elif status != "done":
        cost = unmeasured(
            f"not measurable: the run ended {status_.label(status)}, no verified success to "
            "divide by",
            verified_successes=0,
            coordination_tokens=coord_tokens,
        )
    else:
        cost = measured(coord_tokens, unit="tokens", verified_successes=1)
    checks, independent = state["checks"]
    handoffs = state["handoffs"]
    orphans = state.get(OrphanedCommitments.name) or OrphanedCommitments().start()
    deadlocks = state.get(Deadlocks.name) or Deadlocks().start()
    livelocked = livelock.things(
        state["livelocked"], (state.get(Livelocks.name) or Livelocks().start())["found"]
    )
    # Every livelocked thing is among those looked at, so the rate is never over 1 and the
    # sums across runs divide by what holds their numerator (not by the reviewed alone).
    looked = set(state["reviewed"]) | livelocked
    return {
        "duplicate_work_rate": rate(
            shared,
            len(written),
            "no agent wrote a file",
            shared_files=shared,
            files_written=len(written),
        ),
        "coordination_overhead_ratio": overhead,
        "assignment_handoff_count": measured(handoffs),
        "ownership_conflict_rate": rate(
            state["contested"],
            state["claims"],
            "no claim or lease was journalled, so nothing could be contested",
            contested=state["contested"],
            claims=state["claims"],
        ),
        "stale_message_rate": rate(
            state["stale"],
            state["deliveries"],
            "no message was delivered",
            stale=state["stale"],
            deliveries=state["deliveries"],
        ),
        "conflict_resolution_latency": latency,
        "deadlock_rate": rate(
            deadlocks["deadlocks"],
            deadlocks["waits"],
            "nobody waited for anybody (no request, no lease awaited)",
            deadlocks=deadlocks["deadlocks"],
            waits=deadlocks["waits"],
        ),
        "livelock_rate": rate(
            len(livelocked),
            len(looked),
            "no task was reviewed and no livelock signal was seen",
            livelocked=len(livelocked),
            looked_at=len(looked),
            reviewed_tasks=len(state["reviewed"]),
        ),
        "verification_independence_rate": rate(
            independent,
            checks,
            "nothing was checked (no review verdict, no test run after an edit, no harness check)",
            independent=independent,
            verifications=checks,
        ),
        "commitment_orphan_rate": orphan_rate(orphans),
        "handoff_failure_rate": rate(
            len(state["failed"]),
            handoffs,
            "no work was handed off",
            failed=len(state["failed"]),
            handoffs=handoffs,
        ),
        "coordination_cost_per_verified_success": cost,
    }


def verdict(state: State) -> str | None:
    """How the run ended as its runs list says it (runtime.status.derived): the harness's
    verdict, except that "done" whose saga steps were undone is `compensated`, no verified
    success (its work did not stand). None: not finished."""
    verdict: str | None = state["status"]
    if verdict is None:
        return None
    return status_.derived(verdict, status_.RUNNING, undone=bool(state.get("undone")))


def orphan_rate(orphans: State) -> dict[str, Any]:
    """Commitments left open at the finish among those made; in a run that made none,
    requests taken up and left owed among those taken up."""
    if orphans["explicit"]:
        whole, of = orphans["made"], "commitments"
    else:
        whole, of = orphans["taken"], "requests taken up"
    return rate(
        orphans["orphaned"],
        whole,
        "no commitment was made and no agent took up a request",
        orphaned=orphans["orphaned"],
        counted=of,
        total=whole,
    )
