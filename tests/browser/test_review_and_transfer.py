"""A reviewer resolves a parked claim conflict and finds the decision in the run's audit trail;
a run's journal goes out through Export JSONL and back in through the import page."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from journal_store.models import RunSummary, StoredEvent
from runtime.events import ConflictParked
from services import review
from tests.browser.conftest import shoot

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_a_resolved_conflict_shows_in_the_runs_audit_with_who_and_why(signed_in, flown_run, watch):
    review.park(
        ConflictParked(
            run_id=flown_run,
            conflict_id="c-parser-owner",
            subject="textparse/parser.py",
            predicate="owner",
            conflict_type="value",
            claims=[
                {
                    "claim_id": "k1",
                    "value": "coder",
                    "agent": "coder",
                    "run_id": flown_run,
                    "based_on": 3,
                    "evidence": {"commit": "6186f02"},
                },
                {
                    "claim_id": "k2",
                    "value": "reviewer",
                    "agent": "reviewer",
                    "run_id": flown_run,
                    "based_on": 3,
                    "evidence": {"message": "m-005"},
                },
            ],
        )
    )
    page = signed_in
    page.get_by_role("link", name="Conflicts").click()
    conflict = page.locator("section.card", has_text="c-parser-owner")
    expect(conflict).to_contain_text("textparse/parser.py · owner")
    expect(conflict.locator(".claims > .card")).to_have_count(2)
    shoot(page, "conflicts")

    why = "the reviewer signed off on the change, so the reviewer owns it"
    conflict.get_by_label('commit "reviewer" (claimed by reviewer in run').check()
    conflict.get_by_label("Why").fill(why)
    conflict.get_by_role("button", name="Record the decision").click()
    expect(conflict.get_by_role("status")).to_have_text("resolution recorded for c-parser-owner")
    # Decided in place: the card's status and the chosen claim, without a reload.
    expect(conflict.locator("h2 .badge")).not_to_have_text("open")
    expect(conflict.locator(".claims > .card.chosen")).to_contain_text("claimed by reviewer")
    shoot(page, "conflicts-resolved")

    page.goto("/review/conflicts?status=decided")
    decided = page.locator("section.card", has_text="c-parser-owner")
    expect(decided).to_contain_text("Resolved by rosa on")
    expect(decided).to_contain_text(f'chose "reviewer" — {why}')
    expect(decided.locator(".claims > .card.chosen")).to_contain_text("claimed by reviewer")
    shoot(page, "conflicts-decided")

    decided.get_by_role("link", name=flown_run).click()
    page.get_by_role("tab", name="Audit").click()
    row = page.locator("#tab tbody tr", has=page.locator(".badge.ConflictResolved"))
    expect(row).to_have_count(1)
    expect(row.locator(".badge", has_text="human")).to_be_visible()
    expect(row.locator("td").nth(2)).to_have_text("rosa")
    expect(row).to_contain_text(why)
    expect(row).to_contain_text("chose k2: reviewer")
    shoot(page, "run-audit-conflict-resolved")
    watch.assert_clean()


def test_an_exported_journal_imports_back_as_nothing_new_and_a_bad_copy_imports_nothing(
    signed_in, flown_run, tmp_path, watch
):
    page = signed_in
    page.goto(f"/runs/{flown_run}/")
    with page.expect_download() as download:
        page.get_by_role("link", name="Export JSONL").click()
    assert download.value.suggested_filename == f"{flown_run}.jsonl"
    exported = tmp_path / download.value.suggested_filename
    download.value.save_as(exported)
    lines = exported.read_text().splitlines()
    # The run's events, without this server's note that it imported them (not exported).
    total = StoredEvent.objects.filter(run_id=flown_run).exclude(kind="JournalImported").count()
    assert len(lines) == total
    assert all(f'"run_id":"{flown_run}"' in line for line in lines)

    page.get_by_role("link", name="Import").click()
    expect(page.get_by_role("heading", name="Import a journal")).to_be_visible()
    shoot(page, "import")
    page.get_by_label("JSONL journal").set_input_files(exported)
    page.get_by_role("button", name="Import").click()
    # The import's report (the page's outage region is a status too, empty while all is well).
    report = page.get_by_role("status").filter(has=page.get_by_role("heading"))
    # The run was flown here: its export is all in this store already, and nothing is added.
    expect(report.get_by_role("heading")).to_have_text("Nothing added")
    expect(report).to_contain_text(f"All {total} events of this file are in this store already.")
    expect(report.get_by_role("link", name=flown_run)).to_be_visible()
    shoot(page, "import-again")

    # A copy under another run id would add a run, but its fifth line is no longer JSON.
    events_before = StoredEvent.objects.count()
    copy = [line.replace(flown_run, "r-copied") for line in lines]
    copy[4] = copy[4][:40]
    bad = tmp_path / "copied.jsonl"
    bad.write_text("\n".join(copy) + "\n")
    page.get_by_label("JSONL journal").set_input_files(bad)
    page.get_by_role("button", name="Import").click()
    refused = page.get_by_role("alert")
    expect(refused.get_by_role("heading")).to_have_text("Nothing was imported")
    problems = refused.locator("ul.errorlist li")
    expect(problems.first).to_have_text(re.compile(r"^line 5: not JSON: Unterminated string"))
    expect(problems).to_have_count(1)  # one bad line is one problem, not one per later line
    expect(page.get_by_role("status").filter(has=page.get_by_role("heading"))).to_have_count(0)
    shoot(page, "import-errors")

    assert StoredEvent.objects.count() == events_before
    assert not RunSummary.objects.filter(run_id="r-copied").exists()
    response = page.goto("/runs/r-copied/")
    assert response.status == 404
    watch.errors.clear()  # the 404 page's console message is the point here
    watch.assert_clean()
