"""An enqueue that kombu hands a channel the broker closed (what a broker restart can leave
behind) is sent again on a fresh one, not lost with an AttributeError."""

from __future__ import annotations

import pytest

from config.celery import app
from services import queue
from tests.tasks.conftest import REDIS, needs_redis, use_broker

pytestmark = [needs_redis, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def redis(settings):
    import redis as client

    use_broker(REDIS, {})
    server = client.Redis.from_url(REDIS)
    server.flushdb()
    yield server
    use_broker(settings.CELERY_BROKER_URL, settings.CELERY_BROKER_TRANSPORT_OPTIONS)


def close_the_pooled_channel() -> None:
    """Leave the pool's producer on the channel a broker restart mid-publish left behind in
    tests/tasks/test_embedded_broker_stress.py: no Redis pool yet, and no connection (kombu
    sets it to None when the connection that owned the channel closes)."""
    with app.producer_or_acquire() as producer:
        producer.channel._pool = None
        producer.channel.connection = None


def test_a_send_on_a_closed_channel_goes_out_on_a_fresh_one(redis):
    queue.advance("r-after-restart")  # warm the pool: its producer now has a channel
    close_the_pooled_channel()
    queue.advance("r-after-restart")
    assert redis.llen("celery") == 2  # both sends reached the queue


def test_without_a_second_try_the_closed_channel_loses_the_send(redis, monkeypatch):
    queue.advance("r-after-restart")
    close_the_pooled_channel()
    monkeypatch.setattr(queue, "STALE_CHANNEL_TRIES", 1)
    with pytest.raises(AttributeError):
        queue.advance("r-after-restart")
    assert redis.llen("celery") == 1
