"""The run's tool belt: what the servers listed, each server behind a circuit breaker."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from runtime.events import Event
from runtime.fanout.breakers import CircuitBreaker
from runtime.tools import Tool
from teams.triage.services import Surface


class Belt:
    """The run's tools, from what the servers listed; calls go to a surface started on first
    use (never in a replay, whose results all come from the journal), behind one breaker per
    server."""

    def __init__(self, open_surface: Callable[[], Surface], run_id: str = "") -> None:
        # Whose breakers: a trip journalled on the run's stream names its run, or the store
        # keeps it under no run and the run's pages and findings never see it.
        self.run_id = run_id
        self.specs: list[dict[str, Any]] = []
        self.open_surface = open_surface
        self.surface: Surface | None = None
        self.lock = threading.Lock()
        self.breakers: dict[str, CircuitBreaker] = {}
        self.events: list[Event] = []

    def breaker(self, server: str) -> CircuitBreaker:
        with self.lock:
            if server not in self.breakers:
                self.breakers[server] = CircuitBreaker(
                    f"tools:{server}",
                    window=6,
                    min_calls=2,
                    max_failure_rate=0.5,
                    cool_down=30.0,
                    on_event=self.events.append,
                    run_id=self.run_id,
                )
            return self.breakers[server]

    def opened(self) -> Surface:
        with self.lock:
            if self.surface is None:
                self.surface = self.open_surface()
            return self.surface

    def listing(self) -> dict[str, Any]:
        surface = self.opened()
        return {"tools": [t.spec() for t in surface.tools()], "degraded": surface.degraded()}

    def call(self, name: str, args: dict[str, Any]) -> Any:
        """The tool, behind its server's breaker (open: refused at once, a ToolFailure, so an
        observation)."""
        surface = self.opened()
        return self.breaker(name.split(".", 1)[0]).call(lambda: surface.call(name, args))

    def tools(self) -> list[Tool]:
        return [
            Tool(
                s["name"],
                s.get("description", ""),
                s["parameters"],
                lambda _name=s["name"], **args: self.call(_name, args),
                timeout=20.0,
                outside=True,  # the servers' schemas, as they listed them
            )
            for s in self.specs
        ]

    def close(self) -> None:
        if self.surface is not None:
            self.surface.close()
