"""A page costs what it shows: threads and audit come a page at a time (tabs and API), and the
timeline's live tail answers 204 while nothing is new."""

from __future__ import annotations

import re

import pytest

from dashboard import queries
from dashboard.views import runs as pages
from journal_store import projection
from services.steps import drive_step
from tests.dashboard.conftest import run_of

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("recorded_runs")]
HTMX = {"HX-Request": "true", "HX-Target": "tab"}
# The link each row carries to the timeline just before it (its position - 1).
ROW_LINK = {
    "threads": r'class="muted mono" href="[^"]*after=(\d+)#e\d+"',
    "audit": r'<td class="num mono"><a href="[^"]*after=(\d+)#e\d+"',
}


def follow(client, run_id, tab):
    """Every position a tab shows, page after page, following its Next links."""
    seen, url, pages_read = [], f"/runs/{run_id}/tabs/{tab}", 0
    while url:
        html = client.get(url, headers=HTMX).content.decode()
        seen += [int(p) for p in re.findall(ROW_LINK[tab], html)]
        nxt = re.search(r'hx-get="([^"]+\?after=\d+)"', html)
        url = nxt.group(1).replace("&amp;", "&") if nxt else None
        pages_read += 1
    return seen, pages_read


@pytest.mark.parametrize("tab", ["threads", "audit"])
def test_a_long_tab_comes_a_page_at_a_time_and_the_pages_hold_every_row(as_owner, monkeypatch, tab):
    run_id = run_of("first-flight")
    rows = queries.messages(run_id) if tab == "threads" else queries.audit(run_id)
    assert len(rows) > 2
    monkeypatch.setattr(pages, "TAB_PAGE", 2)
    links, pages_read = follow(as_owner, run_id, tab)
    assert pages_read == -(-len(rows) // 2)  # two a page, and no empty page at the end
    # each row links to the timeline just before it: position - 1
    assert [p + 1 for p in links] == [r.position for r in rows]


def test_the_api_pages_threads_and_audit_with_after_and_limit(api):
    run_id = run_of("first-flight")
    for what in ("threads", "audit"):
        everything = api.get(f"/api/runs/{run_id}/{what}").json()
        got, after = [], 0
        while True:
            page = api.get(f"/api/runs/{run_id}/{what}?after={after}&limit=2").json()
            rows = page if what == "audit" else [m for lane in page.values() for m in lane]
            if not rows:
                break
            assert len(rows) <= 2
            got += sorted(r["position"] for r in rows)
            after = got[-1]
        whole = everything if what == "audit" else [m for v in everything.values() for m in v]
        assert got == sorted(r["position"] for r in whole)
        too_many = api.get(f"/api/runs/{run_id}/{what}?limit={queries.PAGE_MAX + 1}")
        assert too_many.status_code == 422 and "limit" in too_many.text
        assert api.get(f"/api/runs/{run_id}/{what}?after=-1").status_code == 422


def test_the_live_tail_answers_204_until_something_new_then_the_rows(as_owner):
    run_id = run_of("first-flight", steps=1)
    projection.catch_up()
    last = queries.events(run_id, limit=queries.EVENTS_MAX)[-1].position
    idle = as_owner.get(f"/runs/{run_id}/tail?after={last}", headers={"HX-Request": "true"})
    assert idle.status_code == 204 and idle.content == b""
    assert drive_step(run_id, "test") == "stepped"
    fresh = as_owner.get(f"/runs/{run_id}/tail?after={last}", headers={"HX-Request": "true"})
    # The next of the run's own events (the driver's lease events are hidden unless asked).
    [nxt] = queries.events(run_id, last, infra=False, limit=1)
    assert fresh.status_code == 200 and f'id="e{nxt.position}"' in fresh.content.decode()
    while drive_step(run_id, "test") == "stepped":
        pass
    end = queries.events(run_id, limit=queries.EVENTS_MAX)[-1].position
    done = as_owner.get(f"/runs/{run_id}/tail?after={end}", headers={"HX-Request": "true"})
    assert done.status_code == 286  # the run is over: htmx stops polling


def test_a_live_tail_a_page_behind_stays_live_and_asks_again_at_once(as_owner, monkeypatch):
    run_id = run_of("first-flight", steps=2)
    projection.catch_up()
    monkeypatch.setattr(pages, "EVENTS_PAGE", 2)
    first = queries.events(run_id, infra=False, limit=1)[0].position
    live = as_owner.get(f"/runs/{run_id}/tail?after={first}&live=1", headers={"HX-Request": "true"})
    html = live.content.decode()
    # Two rows, then the tail again, asking at once (not in 2 s), after the second row.
    assert live.status_code == 200 and html.count('class="event') == 2
    [(after, trigger)] = re.findall(
        r'<tr id="tail" hx-get="[^"]*after=(\d+)&amp;live=1" hx-trigger="([^"]+)"', html
    )
    shown = [int(p) for p in re.findall(r'<tr id="e(\d+)"', html)]
    assert int(after) == shown[-1] and trigger == "load" and 'id="more"' not in html
    # A "Next" link asks the same without live=1: a page and the link to the next, no tail.
    paged = as_owner.get(f"/runs/{run_id}/tail?after={first}", headers={"HX-Request": "true"})
    assert 'id="more"' in paged.content.decode() and 'id="tail"' not in paged.content.decode()
    # Caught up, the tail polls every 2 s again.
    end = queries.events(run_id, limit=queries.EVENTS_MAX)[-1].position
    idle = as_owner.get(f"/runs/{run_id}/tail?after={end}&live=1", headers={"HX-Request": "true"})
    assert idle.status_code == 204


def test_the_tails_last_answer_draws_the_filters_and_resume_point_again(as_owner, monkeypatch):
    run_id = run_of("first-flight", steps=1)
    projection.catch_up()
    start = queries.events(run_id, limit=1)[0].position
    opened = as_owner.get(f"/runs/{run_id}/tabs/timeline", headers=HTMX).content.decode()
    assert 'value="TeamFinished"' not in opened
    while drive_step(run_id, "test") == "stepped":
        pass
    projection.catch_up()
    # The run ended pages ago: the tail brings the rest a page at a time, then stops.
    monkeypatch.setattr(pages, "EVENTS_PAGE", 20)
    url, answers, shown = f"/runs/{run_id}/tail?after={start}&live=1", [], []
    while url:
        answers.append(as_owner.get(url, headers={"HX-Request": "true"}))
        html = answers[-1].content.decode()
        shown += [int(p) for p in re.findall(r'<tr id="e(\d+)"', html)]
        nxt = re.search(r'<tr id="tail" hx-get="([^"]+)" hx-trigger="load"', html)
        url = nxt.group(1).replace("&amp;", "&") if nxt else None
    own = [e.position for e in queries.events(run_id, start, infra=False, limit=queries.EVENTS_MAX)]
    assert shown == own and len(answers) == -(-len(own) // 20) > 2
    assert [a.status_code for a in answers] == [200] * (len(answers) - 1) + [286]
    assert not any("<template>" in a.content.decode() for a in answers[:-1])
    last = answers[-1]
    html = last.content.decode()
    [redrawn] = re.findall(r"<template>(.*)</template>", html, re.S)
    assert 'id="timeline-filters" hx-swap-oob="true"' in redrawn
    assert 'value="TeamFinished"' in redrawn and 'value="reviewer"' in redrawn
    assert 'id="resume-point" hx-swap-oob="true"' in redrawn and "stage <strong>complete" in redrawn
    # While the run goes on, answers carry no redraw.
    running = run_of("first-flight", steps=1)
    projection.catch_up()
    mid = queries.events(running, limit=1)[0].position
    going = as_owner.get(f"/runs/{running}/tail?after={mid}&live=1", headers={"HX-Request": "true"})
    assert going.status_code == 200 and "<template>" not in going.content.decode()


def test_the_timeline_filters_offer_every_kind_and_agent_the_run_holds(as_owner):
    from journal_store.models import StoredEvent

    run_id = run_of("first-flight")
    rows = StoredEvent.objects.filter(run_id=run_id)
    kinds = sorted(set(rows.values_list("kind", flat=True)))
    agents = sorted({a for a in rows.values_list("agent", flat=True) if a})
    assert len(kinds) > 10 and len(agents) >= 3
    assert queries.event_kinds(run_id) == kinds and queries.event_agents(run_id) == agents
    assert queries.event_kinds("r-nothing") == [] == queries.event_agents("r-nothing")
    html = as_owner.get(f"/runs/{run_id}/tabs/timeline", headers=HTMX).content.decode()
    offered = re.findall(r'<option value="([^"]+)"', html)
    assert offered == kinds + agents
