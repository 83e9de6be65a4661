"""A page that cannot take a filter names it as its form labels it, where it said the query's
name: the runs list's box "Started from" was refused as "since: 'yesterday' is not a date", a
review queue's "Holding the words" as "q: ...". The API names its own parameters, and says
"since" still."""

from __future__ import annotations

import re
from html import unescape

import pytest

from dashboard.asked import KEPT

pytestmark = pytest.mark.django_db


def said(body: bytes) -> str:
    """The text as a person reads it: tags out, entities read."""
    return unescape(re.sub(r"<[^>]+>", "", body.decode()))


@pytest.mark.parametrize("headers", [{}, {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "runs"}])
def test_the_runs_list_names_its_date_boxes_as_labelled(as_owner, headers):
    answer = as_owner.get("/?since=yesterday", **headers)
    assert answer.status_code == 400
    assert "Started from: 'yesterday' is not a date (YYYY-MM-DD)" in said(answer.content)
    assert "since:" not in said(answer.content)
    assert 'id="since-error"' in answer.content.decode()  # the box still points at it
    answer = as_owner.get("/?since=2026-12-05&until=2026-12-01", **headers)
    assert "to: 2026-12-01 is before Started from (2026-12-05)" in said(answer.content)


def test_the_runs_lists_poll_names_them_as_the_list_does(as_owner):
    answer = as_owner.get("/runs/newer?newer_than=2026-01-01T00:00:00%2B00:00&since=soon")
    assert answer.status_code == 400
    assert "Started from: 'soon' is not a date" in said(answer.content)


def test_the_runs_lists_search_too_long_or_unseen_is_refused_by_its_label(as_owner, api):
    """The Search box is held to what a queue's words are: 200 characters, no control or
    format character (a phrase of thousands of trigrams, a word break nobody sees)."""
    for asked, why in (("w" * 201, "is longer than 200 characters"), ("fix%E2%80%AEit", "U+202E")):
        answer = as_owner.get(f"/?q={asked}")
        assert answer.status_code == 400 and why in said(answer.content)
        assert re.search(r"Search: .*" + re.escape(why), said(answer.content))
        poll = as_owner.get(f"/runs/newer?newer_than=2026-01-01T00:00:00%2B00:00&q={asked}")
        assert poll.status_code == 400 and why in said(poll.content)
        [error] = api.get(f"/api/runs?q={asked}").json()["detail"]
        assert error["loc"] == ["query", "q"] and why in error["msg"]
    # The box keeps what was typed (its head, asked.KEPT) and says where the reason is;
    # unrefused, it takes 200 characters.
    box = re.search(r'<input type="search" id="q"[^>]*>', as_owner.get(f"/?q={'w' * 201}").text)
    assert box and f'value="{"w" * KEPT}"' in box[0] and 'aria-describedby="q-error"' in box[0]
    answer = as_owner.get(f"/?q={'w' * 200}")
    assert answer.status_code == 200
    box = re.search(r'<input type="search" id="q"[^>]*>', answer.text)
    assert box and 'maxlength="200"' in box[0] and "aria-invalid" not in box[0]


def test_the_metrics_page_names_them_as_labelled(as_owner):
    answer = as_owner.get("/metrics?since=2026-12-05&until=2026-12-01")
    assert answer.status_code == 400
    assert "to: 2026-12-01 is before Started from (2026-12-05)" in said(answer.content)


@pytest.mark.parametrize("path", ["/api/runs", "/api/metrics"])
def test_the_api_names_its_parameters(api, path):
    answer = api.get(f"{path}?since=yesterday&until=2026-12-01")
    [error] = answer.json()["detail"]
    assert error["loc"] == ["query", "since"] and "is not a date" in error["msg"]
    answer = api.get(f"{path}?since=2026-12-05&until=2026-12-01")
    [error] = answer.json()["detail"]
    assert error["loc"] == ["query", "until"]
    assert error["msg"] == "2026-12-01 is before since (2026-12-05)"


QUEUES = ["/review/conflicts", "/review/dead-letters"]


@pytest.mark.parametrize("queue", QUEUES)
def test_a_review_queue_names_its_search_box_as_labelled(as_owner, queue):
    """The queue's one box, "Holding the words", was refused as "q: ..."."""
    page = as_owner.get(queue).content.decode()
    assert '<label for="queue-q">Holding the words</label>' in page
    answer = as_owner.get(f"{queue}?q={'w' * 201}")
    assert answer.status_code == 400
    assert re.search(
        r"Holding the words: 'w+…' is longer than 200 characters", said(answer.content)
    )
    assert "q:" not in said(answer.content)
    assert 'id="q-error"' in answer.content.decode()
    # The box itself says it was refused, and where the reason is (as the runs list's do).
    box = re.search(r'<input id="queue-q"[^>]*>', answer.content.decode())
    assert box and 'aria-invalid="true"' in box[0] and 'aria-describedby="q-error"' in box[0]
    assert "aria-invalid" not in re.search(r'<input id="queue-q"[^>]*>', page)[0]


@pytest.mark.parametrize("queue", QUEUES)
def test_a_review_queue_names_the_metrics_dates_as_the_metrics_page_labels_them(as_owner, queue):
    """The runs a queue shows may be the metrics page's choice (its link): its dates are
    named as that page's boxes are, where they were "since" and "until"."""
    answer = as_owner.get(f"{queue}?since=yesterday")
    assert answer.status_code == 400
    assert "Started from: 'yesterday' is not a date (YYYY-MM-DD)" in said(answer.content)
    answer = as_owner.get(f"{queue}?since=2026-12-05&until=2026-12-01")
    assert "to: 2026-12-01 is before Started from (2026-12-05)" in said(answer.content)
    assert "since" not in said(answer.content)


@pytest.mark.parametrize("queue", QUEUES)
def test_a_review_queues_poll_names_them_as_its_page_does(as_owner, queue):
    answer = as_owner.get(f"{queue}/newer?after=0&since=soon&q={'w' * 201}")
    assert answer.status_code == 400
    assert "Started from: 'soon' is not a date" in said(answer.content)
    assert "Holding the words: 'w" in said(answer.content)


@pytest.mark.parametrize("path", ["/api/review/conflicts", "/api/review/dead-letters"])
def test_the_queues_api_names_its_parameters(api, path):
    answer = api.get(f"{path}?q={'w' * 201}&since=2026-12-05&until=2026-12-01")
    assert answer.status_code == 422
    said_of = {tuple(e["loc"]): e["msg"] for e in answer.json()["detail"]}
    assert set(said_of) == {("query", "q"), ("query", "until")}
    assert said_of[("query", "until")] == "2026-12-01 is before since (2026-12-05)"
