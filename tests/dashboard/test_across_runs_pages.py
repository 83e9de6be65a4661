"""The pages that join runs: a fork's lineage both ways with links to compare them, tags from
the run page filtering the list, two ticked rows opening the comparison, fork links on the
timeline."""

from __future__ import annotations

import pytest

from journal_store.journal import DjangoJournal
from tests.dashboard.conftest import drive, run_of

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("recorded_runs")]


def test_a_forks_page_and_its_parents_link_each_other_and_their_comparison(as_owner, owner):
    parent = run_of("premature-done")
    at = next(
        r.position for r in DjangoJournal().read(f"run-{parent}") if r.event.kind == "ToolReturned"
    )
    timeline = as_owner.get(f"/runs/{parent}/").content.decode()
    assert f'href="/runs/{parent}/fork?at={at}"' in timeline
    response = as_owner.post(f"/runs/{parent}/fork", {"at": at})
    child = response["Location"].split("/")[2]
    drive(child)
    page = as_owner.get(f"/runs/{child}/").content.decode()
    said = f'Forked from <a id="head-parent" class="mono" href="/runs/{parent}/">{parent}</a>'
    assert said in page
    assert f"/runs/compare?a={parent}&amp;b={child}" in page
    back = as_owner.get(f"/runs/{parent}/").content.decode()
    assert f'href="/runs/{child}/"' in back and "Forks:" in back
    compared = as_owner.get(f"/runs/compare?a={parent}&b={child}").content.decode()
    assert "No divergence" in compared  # the scripted agents did as the parent's did
    assert "assignment_handoff_count" in compared  # the coordination metrics, side by side
    # The fork alone opens on its parent beside it.
    default = as_owner.get(f"/runs/compare?a={child}").content.decode()
    assert f'value="{parent}"' in default and f'value="{child}"' in default


def test_tags_from_the_run_page_filter_the_list(as_owner, owner):
    tagged, other = run_of("premature-done"), run_of("premature-done")
    response = as_owner.post(f"/runs/{tagged}/tags", {"add": "nightly"})
    assert response.status_code == 302
    assert 'href="/?tag=nightly">#nightly</a>' in as_owner.get(f"/runs/{tagged}/").content.decode()
    listed = as_owner.get("/?tag=nightly").content.decode()
    assert f"row-{tagged}" in listed and f"row-{other}" not in listed
    refused = as_owner.post(f"/runs/{tagged}/tags", {"add": "Not A Tag!"}, follow=True)
    assert "Tag &#x27;Not A Tag!&#x27; was not added: a tag is" in refused.content.decode()


def test_two_ticked_rows_open_their_comparison(as_owner, owner):
    a, b = run_of("premature-done"), run_of("first-flight")
    listing = as_owner.get("/").content.decode()
    assert f'name="run" value="{a}" form="compare-form"' in listing
    assert 'id="compare-form" method="get" action="/runs/compare"' in listing
    compared = as_owner.get(f"/runs/compare?run={a}&run={b}")
    assert compared.status_code == 200 and "First divergence" in compared.content.decode()
