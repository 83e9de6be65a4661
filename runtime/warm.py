"""A flight kept warm between steps: it waits at a turn boundary instead of unwinding.

A cold step reads the run's whole history and replays the harness over it before its first
live turn, so its cost grows with the run. A warm flight pays that once. It runs in a thread
of its own; when its step's turns are used up, the session's `pause` hook parks the thread at
the turn boundary, with the harness's whole state (agents' windows, budgets, scripted clients'
places) still on its stack. The next step on the same process checks that the stream is still
at the version the flight would write next, gives it the new lease's fence, and lets it go on.

It is a cache, never the truth: a parked flight is dropped (its thread unwound with Abandoned,
writing nothing) whenever anyone else wrote to the run, the process keeps too many, or it sat
idle too long; the next step then replays from the journal as every cold step does. Both paths
write the same events (tests/runtime/test_warm.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from runtime import children
from runtime.flight import FlightOutcome
from runtime.session import Session


class Abandoned(BaseException):
    """Unwinds a parked flight that will not go on. A BaseException so that a harness's
    `except Exception` cannot swallow it; anything the unwinding tries to write is refused by
    the journal, since the flight's lease is no longer held."""


class WarmFlight:
    """One run's flight on a thread of its own, driven a step at a time by `step()`."""

    def __init__(
        self,
        session: Session,
        fly: Callable[[Session], FlightOutcome],
        *,
        on_exit: Callable[[], None] | None = None,
        threaded: bool = True,
    ) -> None:
        self.session = session
        # Unthreaded, a step runs on the caller's thread and the flight unwinds at its end
        # (StepComplete), as a cold step always did: for hosts that keep nothing warm.
        self.threaded = threaded
        self.run_id = session.run_id
        self._fly = fly
        self._on_exit = on_exit  # runs on the flight's thread as it ends (its DB connection)
        self._lock = threading.Condition()
        self._state = "new"  # new -> running <-> parked -> done
        self._abandon = False
        self._outcome: FlightOutcome | None = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        # The holding of the step driving the flight now: the children its thread starts are
        # that step's, ended with that step's lost lease and no other (runtime/children.py).
        self._holding: object | None = None
        self.used = time.monotonic()
        if threaded:
            session.pause = self._pause

    @property
    def version(self) -> int:
        """The stream version the flight will write next: where the journal must still be."""
        return self.session.version

    @property
    def parked(self) -> bool:
        return self._state == "parked"

    def step(
        self, steps: int | None, until: float | None, began: float | None = None
    ) -> FlightOutcome:
        """Let the flight take up to `steps` live turns, or until `until` (time.monotonic());
        its outcome, "stepped" when it parked for the next step. Raises what the flight
        raised. `began`: when the step began (its lease was asked for), if before now."""
        with self._lock:
            if self._state not in ("new", "parked"):
                raise RuntimeError(f"flight {self.run_id} is {self._state}: it cannot step")
            self.session.steps, self.session.until, self.session.live_turns = steps, until, 0
            self.session.start.begin(began)
            self._holding = children.holding()
            if not self.threaded:
                self._state = "done"
                return self._fly(self.session)
            if self._state == "new":
                self._thread = threading.Thread(
                    target=self._run, name=f"flight-{self.run_id}", daemon=True
                )
                self._state = "running"
                self._thread.start()
            else:
                self._state = "running"
                self._lock.notify_all()
            while self._state == "running":
                self._lock.wait()
            self.used = time.monotonic()
            if self._state == "parked":
                return FlightOutcome(self.run_id, "stepped")
            if self._error is not None:
                raise self._error
            assert self._outcome is not None
            return self._outcome

    def abandon(self, wait: float = 10.0) -> None:
        """Unwind a parked flight (it writes nothing) and let its thread end."""
        with self._lock:
            if self._state != "parked":
                return
            self._abandon = True
            self._lock.notify_all()
        if self._thread is not None:
            self._thread.join(wait)

    def _pause(self) -> None:
        """The session's hook at a boundary where its step's turns are used up."""
        with self._lock:
            self._state = "parked"
            self._lock.notify_all()
            while self._state == "parked" and not self._abandon:
                self._lock.wait()
            if self._abandon:
                raise Abandoned()
            children.adopt(self._holding)  # the next step's

    def _run(self) -> None:
        outcome: FlightOutcome | None = None
        error: BaseException | None = None
        children.adopt(self._holding)
        try:
            outcome = self._fly(self.session)
        except Abandoned:
            pass
        except BaseException as exc:  # handed to the caller of step(), who decides
            error = exc
        finally:
            if self._on_exit is not None:
                self._on_exit()
        with self._lock:
            self._outcome, self._error, self._state = outcome, error, "done"
            self._lock.notify_all()


class WarmFlights:
    """A process's parked flights, by run id: at most `size`, none idle over `idle` seconds."""

    def __init__(self, size: int = 4, idle: float = 600.0) -> None:
        self.size = size
        self.idle = idle
        self._flights: dict[str, WarmFlight] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._flights)

    def take(self, run_id: str, version: int) -> WarmFlight | None:
        """The run's parked flight if the stream is still where it left it; else None (and a
        flight that no longer fits the journal is dropped)."""
        with self._lock:
            flight = self._flights.pop(run_id, None)
        if flight is None:
            return None
        if flight.parked and flight.version == version:
            return flight
        flight.abandon()
        return None

    def resize(self, size: int, idle: float) -> None:
        self.size, self.idle = size, idle

    def keep(self, flight: WarmFlight) -> None:
        """Park a flight for its run's next step, dropping the idle and the least recent."""
        if self.size < 1:
            flight.abandon()
            return
        now = time.monotonic()
        with self._lock:
            old = self._flights.pop(flight.run_id, None)
            stale = [f for f in self._flights.values() if now - f.used > self.idle]
            for f in stale:
                del self._flights[f.run_id]
            while len(self._flights) >= self.size:
                lru = min(self._flights.values(), key=lambda f: f.used)
                del self._flights[lru.run_id]
                stale.append(lru)
            self._flights[flight.run_id] = flight
        for f in [*stale, *([old] if old is not None and old is not flight else [])]:
            f.abandon()

    def drop(self, run_id: str) -> None:
        with self._lock:
            flight = self._flights.pop(run_id, None)
        if flight is not None:
            flight.abandon()

    def clear(self) -> None:
        with self._lock:
            flights = list(self._flights.values())
            self._flights.clear()
        for f in flights:
            f.abandon()
