"""Each metric is named in words a person reads, in one place (runtime.metrics.TITLES): the
run's Metrics tab heads each row with that name, its key (docs/metrics.md's, the API's) beneath
it, and /metrics heads its columns and its definitions with the same names. The tab had headed
its rows with the keys alone ("duplicate_work_rate") where /metrics read "Duplicate"."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from dashboard.views.metrics import RATE_COLUMNS
from journal_store import projection
from journal_store.models import RunSummary
from journal_store.transfer import import_journal
from runtime.metrics import DEFINITIONS, NAMES, TITLES, title

pytestmark = pytest.mark.django_db
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "journals"


@pytest.fixture
def run_id():
    with (FIXTURES / "repo-fix.v1.jsonl").open("rb") as source:
        import_journal(source, name="repo-fix.v1.jsonl")
    projection.catch_up()
    return RunSummary.objects.get(team="repo-fix").run_id


def text(fragment: str) -> str:
    """What a reader sees of an HTML fragment: its text, tags dropped, spaces collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def tab_headings(page: str) -> dict[str, tuple[str, str]]:
    """Each row of the Metrics tab by its id's key: (its name, the key shown beneath it)."""
    rows = re.findall(
        r'<tr id="metric-([a-z_]+)"><th scope="row">(.*?)<br><code[^>]*>(.*?)</code></th>',
        page,
        flags=re.S,
    )
    return {key: (text(name), text(shown)) for key, name, shown in rows}


def test_every_metric_has_a_full_and_a_short_name_beside_its_definition():
    assert set(TITLES) == set(NAMES) == set(DEFINITIONS)
    for key, named in TITLES.items():
        for name in named:
            assert name and "_" not in name and name[0].isupper(), key
        assert len(named.short) <= len(named.full), key
    assert len({n.full for n in TITLES.values()}) == len(TITLES)  # no two read alike


def test_a_metric_without_a_name_is_read_by_its_key():
    assert title("a_later_metric") == ("a_later_metric", "a_later_metric")


def test_the_tab_heads_each_row_with_its_name_and_shows_its_key_beneath(as_owner, run_id):
    page = as_owner.get(f"/runs/{run_id}/?tab=metrics").content.decode()
    headings = tab_headings(page)
    assert set(headings) == set(NAMES)  # every metric the tab shows, each named
    for key, (name, shown) in headings.items():
        assert name == TITLES[key].full and shown == key
    assert page.count('<tr id="metric-') == len(NAMES)  # none left out of the pattern above


def test_the_metrics_page_names_the_metrics_as_the_tab_does(as_owner, run_id):
    tab = tab_headings(as_owner.get(f"/runs/{run_id}/?tab=metrics").content.decode())
    page = as_owner.get("/metrics").content.decode()
    # The definitions at the foot: every metric, by the name its row on the tab has.
    defined = re.findall(
        r'<dt id="definition-([a-z_]+)">(.*?) <code[^>]*>(.*?)</code></dt>', page, flags=re.S
    )
    assert {key: (text(name), text(shown)) for key, name, shown in defined} == tab
    # The rates' columns: the short name, the full one (the tab's) in its title.
    columns = re.findall(
        r'<th scope="col" class="num" id="rate-([a-z_]+)"><abbr title="([^"]*)">(.*?)</abbr>',
        page,
    )
    assert [key for key, _, _ in columns] == list(RATE_COLUMNS)
    for key, full, short in columns:
        assert html.unescape(full) == tab[key][0] and text(short) == TITLES[key].short
    # The other headings that name a metric read from the same place.
    overhead = TITLES["coordination_overhead_ratio"].short
    assert f"<dt>{html.escape(overhead)}</dt>" in page
    assert f'title="{html.escape(TITLES["ownership_conflict_rate"].full)}: ' in page
