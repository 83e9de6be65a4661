"""Minutes' worker app with one more consumer step, for
tests/tasks/test_a_consumer_that_hears_nothing.py: once the file MINUTES_TEST_DEAFEN names says
"deafen", the consumer's socket loses its reader while kombu keeps it registered, the state
celery/kombu#2629 describes after a reconnect. The file then says "deaf".

Started as `celery -A tests.tasks.deaf_worker worker ...`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from celery import bootsteps

from config.celery import app

__all__ = ["app"]


class Deafen(bootsteps.StartStopStep):  # type: ignore[misc]  # Celery is untyped
    requires = ("celery.worker.consumer.tasks:Tasks",)
    done = False  # once a worker: the connection the consumer makes next is left whole

    def start(self, c: Any) -> None:
        self.tref = c.timer.call_repeatedly(0.2, self.maybe, (c,))

    def maybe(self, c: Any) -> None:
        told = Path(os.environ["MINUTES_TEST_DEAFEN"])
        if Deafen.done or not told.exists() or told.read_text() != "deafen":
            return
        channel = c.task_consumer.channel
        cycle = channel.connection.cycle  # kombu's poller of the Redis transport's sockets
        for fd, (owner, kind) in list(cycle._fd_to_chan.items()):
            # Only a BRPOP in flight: one paused for want of room would be registered afresh.
            if owner is channel and kind == "BRPOP" and fd not in cycle._paused_brpop:
                c.hub.remove_reader(fd)
                del cycle._fd_to_chan[fd]  # kept in _chan_to_sock: registered, never read
                Deafen.done = True
                told.write_text("deaf")

    def stop(self, c: Any) -> None:
        self.tref.cancel()


app.steps["consumer"].add(Deafen)
