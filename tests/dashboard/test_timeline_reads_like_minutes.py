"""The timeline reads like minutes: the run's own numbers (1, 2, 3...), the driver's lease
events hidden unless asked, values a person reads (no raw epoch seconds, no Python False, ids
shortened with the whole line in a title), several kinds at once kept in the URL, a jump to the
latest events, and the resume point on the page."""

from __future__ import annotations

import re

import pytest

from dashboard import present
from journal_store.models import StoredEvent
from services import runs
from tests.dashboard.conftest import drive, run_of

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("recorded_runs")]


def numbers(html: str) -> list[str]:
    return re.findall(r'<td class="num mono" title="position \d+[^"]*">([^<]+)</td>', html)


def test_events_carry_the_runs_own_numbers_and_lease_events_are_hidden_until_asked(as_owner):
    run_id = run_of("first-flight")
    page = as_owner.get(f"/runs/{run_id}/?tab=timeline").content.decode()
    assert numbers(page)[:3] == ["1", "2", "3"]
    kinds = set(re.findall(r'<td><span class="badge">(\w+)</span></td>', page))
    assert kinds and not kinds & {"LeaseGranted", "LeaseRenewed", "LeaseReleased"}
    assert 'name="infra" value="1" ' in page and "Show lease and driver events" in page
    shown = as_owner.get(f"/runs/{run_id}/?tab=timeline&infra=1").content.decode()
    assert "LeaseGranted</span>" in shown and "lease 1" in numbers(shown)
    assert 'name="infra" value="1" checked' in shown


def test_several_kinds_at_once_and_the_filter_is_kept_in_every_link(as_owner):
    run_id = run_of("reject-loop")
    url = f"/runs/{run_id}/?tab=timeline&kind=MessageSent&kind=ToolReturned"
    page = as_owner.get(url).content.decode()
    kinds = set(re.findall(r'<td><span class="badge">(\w+)</span></td>', page))
    assert kinds == {"MessageSent", "ToolReturned"}
    assert 'value="MessageSent" selected' in page and 'value="ToolReturned" selected' in page
    assert "kind=MessageSent&amp;kind=ToolReturned" in page  # next page, tail, latest
    assert 'hx-push-url="true"' in page  # a change of filter goes into the address bar


def test_jump_to_latest_shows_the_last_events_and_the_resume_point_is_on_the_page(as_owner):
    run_id = run_of("reject-loop")
    mine = StoredEvent.objects.filter(run_id=run_id).exclude(stream__startswith="lease-")
    last = mine.order_by("-position").first()
    page = as_owner.get(f"/runs/{run_id}/?tab=timeline").content.decode()
    assert "Jump to latest" in page and f'id="e{last.position}"' not in page
    latest = as_owner.get(f"/runs/{run_id}/?tab=timeline&latest=1").content.decode()
    assert f'id="e{last.position}"' in latest
    assert re.search(
        # (a reject loop ends on a dead letter: the stage says what a person is to decide)
        r"Resume point: stage <strong>\w+</strong>( \([^)]*\))?, after event "
        r"<a href=\"[^\"]+#e\d+\">#\d+</a>",
        page,
    )
    assert "a resumed or retried run replays up to there and goes on live" in page


def test_values_read_as_a_person_reads_them():
    line = present.summary("DriverLeased", {"holder": "w1", "expires": 1796055333.79, "ok": False})
    assert line == "holder w1; expires 16:15:33 UTC; ok no"
    said = {"reason": "commit claim cl-66f8c8f8c97489aa to order:A-1"}
    assert present.summary("ConflictParked", said) == "commit claim cl-66f8c8f8… to order:A-1"
    assert present.summary_title("ConflictParked", said) == said["reason"]


def test_an_id_cut_short_by_the_line_ends_in_one_ellipsis():
    # A workspace's commit (40 digits) is the line's third field, cut where the line ends.
    commit = "aa16a83367522b9817fe2762bfc27cef6aa2bde8"
    said = {"path": "r-4543c7d58db8.workspace", "template": "parse-empty", "commit": commit}
    line = present.summary("WorkspacePrepared", said)
    assert line == "path r-4543c7d58db8.workspace; template parse-empty; commit aa16a833…"


def test_an_effects_number_shows_the_first_digits_of_its_key(as_owner):
    # The desk's refund goes through the effect ledger: stream effect-fx-<40 hex digits>.
    run_id = runs.start_run("support-desk", "double-refund", by="owner")
    drive(run_id)
    effect = StoredEvent.objects.filter(run_id=run_id, stream__startswith="effect-").first()
    assert effect is not None and len(effect.stream) > 40
    page = as_owner.get(f"/runs/{run_id}/?tab=timeline").content.decode()
    row = re.search(
        rf'<tr id="e{effect.position}"[^\n]*\n\s*<td class="num mono" title="([^"]*)">([^<]+)</td>',
        page,
    )
    assert row is not None
    assert row[2] == f"{effect.stream[:18]}… {effect.version}"  # effect-fx- and 8 digits
    assert effect.stream in row[1]  # the whole name, on pointing at it


def test_a_page_of_the_timeline_leads_back_to_the_events_before_it(as_owner, monkeypatch):
    """Jumped to the latest (or any `after`), the timeline leads back a page at a time, with
    its filter, and to the start; it led only forward."""
    run_id = run_of("reject-loop")
    shown = StoredEvent.objects.filter(run_id=run_id, kind="ModelResponded").order_by("position")
    positions = list(shown.values_list("position", flat=True))
    assert len(positions) > 3
    base = f"/runs/{run_id}/?tab=timeline&kind=ModelResponded"
    # With pages of 2 events, the page after the fourth event leads back to the third and
    # fourth, which come after the second.
    monkeypatch.setattr("dashboard.views.runs.EVENTS_PAGE", 2)
    page = as_owner.get(f"{base}&after={positions[3]}").content.decode()
    from_start = as_owner.get(f"{base}&after={positions[1]}").content.decode()
    assert "← from the start" in page
    earlier = re.search(
        r'href="[^"]*after=(\d+)&amp;kind=ModelResponded"[^>]*>← the 2 events', page
    )
    assert earlier is not None and int(earlier.group(1)) == positions[1]
    # Two events back is the start: the start is the only way back.
    assert "← from the start" in from_start and "← the 2 events before" not in from_start
    first_page = as_owner.get(base).content.decode()
    assert "← from the start" not in first_page
