"""Runs that stopped making progress: nobody drove them for a while although they were not over.

A run is driven step by step under a lease (stream `lease-<run>`): a step takes it, renews it
while it runs, and gives it back saying how it ended. Read from those events alone, a stall is

    the lease ran out    a step held it and stopped renewing it (its worker died); the run sat
                         until the next step took it (journals from before the one lease
                         primitive hold DriverLeased/DriverReleased: read the same way);
    no step came         a step gave it back expecting another ("stepped", "waiting",
                         "failed-step") and none took it for longer than `QUIET`;

and, where the reconciler saw one as it happened, its RunStalled (control stream) says since
when and why: a finding while the run is still stalled, closed by the next lease taken.
"""

from __future__ import annotations

from typing import Any, ClassVar

from runtime import streams
from runtime.events import (
    DriverLeased,
    DriverReleased,
    LeaseGranted,
    LeaseReleased,
    LeaseRenewed,
    RunStalled,
)
from runtime.folds import Fold, Out, Rows, State
from runtime.instants import clock
from runtime.journal import Recorded
from runtime.signatures.base import Finding, finding

# Outcomes of a step that gave the lease back expecting the next step to come.
CONTINUES = frozenset(("stepped", "waiting", "failed-step"))
# Seconds without a step after such a release that make a stall: the reconciler's default
# grace (MINUTES_STALL_SECONDS, 60) plus a failed step's longest backoff (60).
QUIET = 120.0


def lasted(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 120:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 120:
        return f"{minutes} min {seconds} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


class Stalls(Fold):
    """Keeps the driver's lease as it stands (holder, expiry, or the release and its outcome)
    and the stall the reconciler reported and nobody has ended yet; each stall is a finding,
    keyed by when it began."""

    name: ClassVar[str] = "stalled_run"
    kinds: ClassVar[frozenset[str] | None] = frozenset(
        (
            "LeaseGranted",
            "LeaseRenewed",
            "LeaseReleased",
            "DriverLeased",
            "DriverReleased",
            "RunStalled",
        )
    )

    def start(self) -> State:
        return {"lease": None, "open": None}

    def step(self, state: State, rec: Recorded, out: Out) -> None:
        e = rec.event
        if isinstance(e, RunStalled):
            self.reported(state, rec, e, out)
            return
        if rec.stream != streams.driver_lease(e.run_id):
            return  # another resource's lease (a specialist's, a fact's): not the run's driving
        lease = state["lease"]
        if isinstance(e, LeaseRenewed) and lease is not None:
            lease.update(expires=e.expires, position=rec.position)
        elif isinstance(e, LeaseReleased | DriverReleased):
            state["lease"] = {
                "holder": e.holder,
                "released": e.t,
                "outcome": e.outcome,
                "position": rec.position,
            }
        elif isinstance(e, LeaseGranted | DriverLeased):
            self.taken(state, rec, e.holder, out)
            state["lease"] = {"holder": e.holder, "expires": e.expires, "position": rec.position}

    @staticmethod
    def reported(state: State, rec: Recorded, e: RunStalled, out: Out) -> None:
        """The reconciler's word: the run is stalled now (once per stall; a repeat grows it)."""
        stall = state["open"]
        if stall is not None and stall["since"] == e.since:
            stall["positions"].append(rec.position)
        else:
            lease = state["lease"] or {}
            stall = state["open"] = {
                "since": e.since,
                "why": e.why,
                "holder": e.holder,
                "outcome": e.outcome,
                "positions": [p for p in (lease.get("position"), rec.position) if p],
                "key": f"stall:{e.since}",
                "new": True,
            }
        what = (
            f"the lease of {e.holder or 'its driver'} ran out at {clock(e.since)}"
            if e.why == "lease expired"
            else f"no step took it after {clock(e.since)}"
            + (f" ({e.holder} gave the lease back: {e.outcome})" if e.holder else "")
        )
        summary = (
            f"the run stalled: {what}, and nobody has driven it since; the reconciler "
            "queued it again (if it stays stalled, check that a worker with beat is running)"
        )
        row = finding("stalled_run", summary, stall["positions"], since=e.since, why=e.why)
        (out.add if stall.pop("new", False) else out.put)(stall["key"], row)

    @staticmethod
    def taken(state: State, rec: Recorded, holder: str, out: Out) -> None:
        """A step took the lease at `rec`: was the run left alone for too long before it?"""
        t = rec.event.t
        lease: dict[str, Any] | None = state["lease"]
        stall = state["open"]
        state["open"] = None
        began = why = None
        if lease is not None and "expires" in lease and lease["expires"] < t:
            began = lease["expires"]
            why = (
                f"the lease of {lease['holder']} ran out at {clock(began)} (it stopped renewing it)"
            )
        elif (
            lease is not None
            and lease.get("outcome") in CONTINUES
            and t - lease["released"] > QUIET
        ):
            began = lease["released"]
            why = (
                f"{lease['holder']} gave the lease back at {clock(began)} ({lease['outcome']}) "
                "and no step came"
            )
        if stall is not None:  # the reconciler saw it: the same stall, now over
            began = stall["since"] if began is None else min(began, stall["since"])
            why = why or (
                f"the lease of {stall['holder'] or 'its driver'} ran out at {clock(stall['since'])}"
                if stall["why"] == "lease expired"
                else f"no step came after {clock(stall['since'])}"
            )
        if began is None:
            return
        positions = [*(stall["positions"] if stall else []), rec.position]
        if lease is not None:
            positions.append(lease["position"])
        summary = (
            f"the run stalled for {lasted(t - began)}: {why}, until {holder} took it at {clock(t)}"
        )
        row = finding("stalled_run", summary, positions, since=began, until=t)
        if stall is not None:
            out.put(stall["key"], row)
        else:
            out.add(f"stall:{began}", row)

    def result(self, state: State, rows: Rows) -> list[Finding]:
        return list(rows.rows.values())
