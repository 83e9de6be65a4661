"""A worker whose consumer stays connected and reads nothing more connects again and drives the
runs that wait (config/consumer_watch.py).

After a reconnect, kombu's Redis transport can keep a consumer registered with no reader on its
socket (celery/kombu#2629, celery/celery#10205): the worker stays up, answers pings, runs its
beat, and takes no task; kombu's own check of a silent BRPOP does not see it, the socket being
readable. The suite's embedded-broker stress test met a worker in that state once on CI, every
run waiting until the test's timeout. Here a real worker on a real Redis is put in that state
on purpose (tests/tasks/deaf_worker.py) while idle, and a run is started."""

from __future__ import annotations

import re
import time

import pytest
from kombu import Connection

from config.consumer_watch import Strikes, WaitingCount
from services import runs
from tests.tasks.conftest import REDIS, needs_redis, settled, wait_until


@pytest.mark.slow
def test_a_worker_whose_consumer_reads_nothing_connects_again(redis_workers, tmp_path):
    told = tmp_path / "deafen"
    redis_workers.app = "tests.tasks.deaf_worker"
    redis_workers.start(
        concurrency=1, MINUTES_CONSUMER_WATCH_SECONDS="1", MINUTES_TEST_DEAFEN=str(told)
    )
    first = runs.start_run("solo", "solo-fix")
    wait_until(lambda: settled([first]), 120, "the first run", redis_workers)
    assert runs.status_of(first) == "done"

    told.write_text("deafen")
    wait_until(lambda: told.read_text() == "deaf", 30, "the consumer to go deaf", redis_workers)
    # The BRPOP in flight gives up after a second at the server, its reply never read: wait
    # that out, so that the run started next waits in its queue.
    time.sleep(2)
    second = runs.start_run("solo", "solo-fix")
    wait_until(lambda: settled([second]), 120, "the run started after", redis_workers)
    assert runs.status_of(second) == "done"
    log = (tmp_path / "worker-0.log").read_text()
    said = re.search(r"consumer took no task for \S+ s while (\d+) waited in (.*?):", log)
    assert said, log[-3000:]
    assert int(said.group(1)) >= 1 and "celery" in said.group(2)
    assert redis_workers.procs[0].poll() is None  # the same worker, not a restarted one


@pytest.mark.parametrize(
    ("checks", "stalled"),
    [
        # (waiting, room, received) at each check
        ([(3, True, 0), (3, True, 0)], True),
        ([(3, True, 0)], False),  # once is not enough
        ([(3, True, 0), (3, True, 1), (3, True, 0)], False),  # it took one between
        ([(3, False, 0), (3, False, 0), (3, False, 0)], False),  # busy: no room
        ([(0, True, 0), (0, True, 0), (0, True, 0)], False),  # nothing waits
        ([(3, True, 0), (0, True, 0), (3, True, 0)], False),  # the strikes must be in a row
    ],
)
def test_a_consumer_is_stalled_only_when_idle_beside_waiting_messages_twice_in_a_row(
    checks, stalled
):
    strikes = Strikes()
    assert [strikes.observe(*check) for check in checks][-1] is stalled


@needs_redis
def test_the_count_reads_every_priority_of_each_queue_and_the_key_prefix():
    import redis

    with Connection(REDIS, transport_options={"global_keyprefix": "pfx:"}) as conn:
        channel = conn.default_channel
        count = WaitingCount.of(channel, 2.0)
        assert count is not None
        raw = redis.Redis.from_url(REDIS)
        keys = [
            f"pfx:{channel._q_for_pri(q, p)}" for q in ("watch-a", "watch-b") for p in (0, 3, 9)
        ]
        try:
            for n, key in enumerate(keys):
                raw.lpush(key, *["m"] * (n + 1))
            raw.lpush("watch-a", "not ours: no prefix")
            assert count(["watch-a", "watch-b"]) == sum(range(1, len(keys) + 1))
            assert count(["watch-a"]) == 1 + 2 + 3
            assert count(["watch-c"]) == 0
            # By the connection's id, not a count of clients: the suite's other workers
            # connect to the same Redis meanwhile.
            ours = count.client.client_id()
            ids = lambda: {int(client["id"]) for client in raw.client_list()}  # noqa: E731
            assert ours in ids()
            count.close()  # its connection goes with it: a reconnect makes a count anew
            assert ours not in ids()
        finally:
            raw.delete(*keys, "watch-a")
            count.close()


def test_a_broker_other_than_redis_is_not_watched():
    with Connection("memory://") as conn:
        assert WaitingCount.of(conn.default_channel, 2.0) is None
