"""Every page cites an event by the number the timeline shows for it (its place in the run's
journal, or in a stream beside it), not by its position in the store, which the timeline does
not show: the audit, the threads, the findings, the pagers, search, a fork's header and the
fork page all say "#57" where the timeline's row says 57."""

from __future__ import annotations

import html
import re

import pytest

from dashboard import present
from journal_store import projection
from journal_store.models import AuditEntry, StoredEvent, ThreadMessage
from tests.dashboard.conftest import run_of
from tests.dashboard.test_obligation_events_read_plainly import imported

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("recorded_runs")]
HTMX = {"HX-Request": "true", "HX-Target": "tab"}
# A citation: a link to the timeline at the event, and the number it shows.
CITED = re.compile(r'after=(\d+)#e(\d+)"[^>]*>(#[^<]+)</a>')
# A timeline row: its position (the anchor) and the number it shows.
ROW = re.compile(r'<tr id="e(\d+)"[^\n]*\n\s*<td class="num mono"[^>]*>([^<]+)</td>')


def timeline_numbers(client, run_id: str) -> dict[int, str]:
    """The number the timeline shows for each event, read off its rows, page after page."""
    shown, url = {}, f"/runs/{run_id}/tabs/timeline?infra=1"
    while url:
        page = client.get(url, headers=HTMX).content.decode()
        for position, number in re.findall(ROW, page):
            shown[int(position)] = html.unescape(number)
        nxt = re.search(r'hx-get="([^"]+\?after=\d+[^"]*)" hx-target="#more"', page)
        url = html.unescape(nxt.group(1)) if nxt else None
    return shown


def citations(page: str) -> list[tuple[int, str]]:
    """Each cited event's position and the text shown for it; each link opens the timeline
    just before it."""
    found = CITED.findall(page)
    assert all(int(before) == int(at) - 1 for before, at, _ in found)
    return [(int(at), html.unescape(text)) for _, at, text in found]


def second_run(scenario: str) -> str:
    # A run flown after another: its positions in the store are not its own numbers.
    run_of(scenario)
    return run_of(scenario)


def test_the_audit_and_the_threads_cite_the_timelines_numbers(as_owner):
    run_id = second_run("first-flight")
    projection.catch_up()
    numbers = timeline_numbers(as_owner, run_id)
    audited = AuditEntry.objects.filter(run_id=run_id).count()
    messages = ThreadMessage.objects.filter(run_id=run_id).count()
    assert audited and messages
    for tab, rows in (("audit", audited), ("threads", messages)):
        page = as_owner.get(f"/runs/{run_id}/tabs/{tab}", headers=HTMX).content.decode()
        cited = citations(page)
        assert len(cited) >= rows
        for position, text in cited:
            assert text == f"#{numbers[position]}", (tab, position, text)
        # and no citation is the store's position where the run's number differs from it
        assert any(text != f"#{position}" for position, text in cited)


def test_a_pager_names_the_last_event_by_its_number(as_owner, monkeypatch):
    from dashboard.views import runs as pages

    run_id = second_run("first-flight")
    monkeypatch.setattr(pages, "TAB_PAGE", 2)
    page = as_owner.get(f"/runs/{run_id}/tabs/audit", headers=HTMX).content.decode()
    last = int(re.search(r'hx-get="[^"]+\?after=(\d+)"', page).group(1))
    row = StoredEvent.objects.get(position=last)
    assert f"entries after #{present.number(row.stream, row.version, run_id)} →" in page


def test_findings_cite_the_timelines_numbers(as_owner):
    run_of("first-flight")
    run_id = imported("flip-flop")
    numbers = timeline_numbers(as_owner, run_id)
    page = as_owner.get(f"/runs/{run_id}/tabs/findings", headers=HTMX).content.decode()
    cited = citations(page)
    assert cited
    for position, text in cited:
        assert text == f"#{numbers[position]}"


def test_search_cites_each_hit_by_its_number_in_its_run(as_owner):
    run_id = second_run("first-flight")
    projection.catch_up()
    page = as_owner.get(f"/search?q=parser&run={run_id}").content.decode()
    cited = re.findall(rf"#e(\d+)\">{run_id} · ([^<]+)</a>", page)
    assert cited
    for position, text in cited:
        row = StoredEvent.objects.get(position=int(position))
        assert html.unescape(text) == f"#{present.number(row.stream, row.version, run_id)}"


def test_a_fork_and_its_parent_cite_the_fork_point_by_its_number(as_owner):
    parent = second_run("first-flight")
    where = (
        StoredEvent.objects.filter(stream=f"run-{parent}", kind="ToolReturned")
        .order_by("position")
        .first()
    )
    number = f"#{where.version}"
    assert number != f"#{where.position}"
    form = as_owner.get(f"/runs/{parent}/fork?at={where.position}").content.decode()
    assert "after event <a" in form and f">{number}</a>" in form
    asked = {"at": where.position, "to": "coder", "message": "Small."}
    response = as_owner.post(f"/runs/{parent}/fork", asked)
    assert response.status_code == 302
    child = response["Location"].split("/")[2]
    head = as_owner.get(f"/runs/{child}/").content.decode()
    assert f'#e{where.position}">{number}</a>' in head  # "Forked from … after its event at #n"
    parents = as_owner.get(f"/runs/{parent}/").content.decode()
    assert f'#e{where.position}">{number}</a>, <a' in parents  # "Forks: … (at #n, compare)"
