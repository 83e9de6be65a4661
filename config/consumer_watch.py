"""A worker connected to the broker that takes nothing from it connects again.

After a reconnect, kombu's Redis transport can keep a consumer marked as registered with no
reader on its socket (celery/kombu#2629, reported as celery/celery#10205): the worker answers
pings, runs its timers and its beat, and never receives another task until someone restarts it:
every run waits, however healthy the rest of the system. kombu drops a consumer's socket that
stays silent past its BRPOP's timeout (a half-open connection), but not one whose reply sits
there unread: it looks alive.

So every MINUTES_CONSUMER_WATCH_SECONDS the consumer counts, on a broker connection of its own,
the messages waiting in the queues it consumes. Messages waited, the consumer had room for one
(kombu's prefetch gate) and received none, at two checks in a row: it is stalled. The check then
raises a connection error in the consumer's event loop, and Celery does what it does for a lost
broker: it says so, drops the connection and connects and consumes again. Steps in flight go on;
an ack the old connection cannot carry is redelivered after the visibility timeout and fenced.

A healthy consumer with room takes a waiting message within milliseconds, so two checks apart
never find it idle beside one; a busy one has no room. Only the Redis transport is watched (the
one Minutes runs on: a Redis of one's own or the embedded broker).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from celery import bootsteps, signals

log = logging.getLogger(__name__)

# How long the count may take: the consumer's event loop waits for it.
COUNT_TIMEOUT = 2.0


class ConsumerStalled(ConnectionError):
    """Messages waited for a consumer with room, and it received none."""


@dataclass
class Strikes:
    """How many checks in a row found the consumer idle beside waiting messages."""

    needed: int = 2
    count: int = 0

    def observe(self, waiting: int, room: bool, received: int) -> bool:
        """Record one check; whether the consumer is now taken to be stalled."""
        self.count = self.count + 1 if waiting and room and not received else 0
        return self.count >= self.needed


class Received:
    """Task messages this process's consumer has taken, whatever became of them."""

    count = 0

    @classmethod
    def one(cls, **_: object) -> None:
        cls.count += 1


for _signal in (signals.task_received, signals.task_rejected, signals.task_unknown):
    _signal.connect(Received.one, weak=False, dispatch_uid="minutes-consumer-watch")


class WaitingCount:
    """Counts the messages waiting in named queues of a channel's broker, on a Redis connection
    of its own that gives up after `timeout`: never the consumer's, where a reply read would
    be the consumer's.

    kombu's Redis channel names the keys (a queue is a list per priority step) and gives the
    connection's parameters (TCP, TLS, or the embedded broker's unix socket): used here, not
    repeated, so that the count reads the keys the consumer reads.
    """

    def __init__(self, channel: Any, timeout: float) -> None:
        import redis

        params = {**channel._connparams(), "socket_timeout": timeout}
        self.client = redis.Redis(
            connection_pool=redis.ConnectionPool(**{**params, "socket_connect_timeout": timeout})
        )
        self.channel = channel

    @classmethod
    def of(cls, channel: Any, timeout: float) -> WaitingCount | None:
        """One for `channel`; None where its broker is not Redis."""
        if not all(hasattr(channel, name) for name in ("_connparams", "_q_for_pri")):
            return None
        return cls(channel, timeout)

    def keys(self, queue: str) -> set[str]:
        channel = self.channel
        prefix = channel.global_keyprefix
        return {prefix + channel._q_for_pri(queue, step) for step in channel.priority_steps}

    def __call__(self, queues: list[str]) -> int:
        with self.client.pipeline(transaction=False) as pipe:
            for key in sorted(set().union(*(self.keys(queue) for queue in queues))):
                pipe.llen(key)
            return sum(pipe.execute())

    def close(self) -> None:
        # The pool is ours (given to the client, which closes only a pool it made itself): each
        # reconnect of the consumer makes a new count, and the old one's socket stayed open.
        self.client.connection_pool.disconnect()


class ConsumerWatch(bootsteps.StartStopStep):  # type: ignore[misc]  # Celery is untyped
    """The consumer's step that checks, on its event loop's timer, that it still consumes."""

    requires = ("celery.worker.consumer.tasks:Tasks",)

    def __init__(self, c: Any, **kwargs: Any) -> None:
        from django.conf import settings

        super().__init__(c, **kwargs)
        self.every = float(settings.CONSUMER_WATCH_SECONDS)
        self.tref: Any = None
        self.waiting: WaitingCount | None = None

    def start(self, c: Any) -> None:
        # No event loop (a pool without one), or no task consumer: nothing to watch with.
        if not self.every or c.hub is None or c.task_consumer is None:
            return
        self.waiting = WaitingCount.of(c.task_consumer.channel, COUNT_TIMEOUT)
        if self.waiting is None:
            return
        self.strikes = Strikes()
        self.seen = Received.count
        # On the hub's timer: an error raised there that is one of the connection's own errors
        # leaves the event loop, and the consumer connects again (celery/worker/loops.py).
        self.tref = c.timer.call_repeatedly(self.every, self.check, (c,))

    def check(self, c: Any) -> None:
        import redis

        queues = [queue.name for queue in c.task_consumer.queues]
        received, self.seen = Received.count - self.seen, Received.count
        try:
            waiting = self.waiting(queues) if self.waiting else 0
        except redis.RedisError as exc:
            # The broker is away: the consumer's own connection says so, not this count.
            log.debug("could not count the messages waiting in %s: %s", queues, exc)
            return
        room = c.task_consumer.channel.qos.can_consume()
        if self.strikes.observe(waiting, room, received):
            took = self.every * self.strikes.needed
            log.warning(
                "this worker's consumer took no task for %g s while %d waited in %s and it had "
                "room for one: it connects to the broker again (a consumer left with no reader "
                "after a reconnect: celery/celery#10205)",
                took,
                waiting,
                ", ".join(queues),
            )
            raise ConsumerStalled(f"no task taken in {took:g} s while {waiting} waited")

    def stop(self, c: Any) -> None:
        if self.tref is not None:
            self.tref.cancel()
            self.tref = None
        if self.waiting is not None:
            self.waiting.close()
            self.waiting = None

    shutdown = stop
