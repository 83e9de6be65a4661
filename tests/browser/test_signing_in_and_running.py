"""A person signs in through the form, starts a run from the New run form, and watches it
finish on its page without reloading it (htmx polls the header)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from dashboard import queries
from dashboard.views import runs as pages
from tests.browser.conftest import log_in, shoot

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_a_reviewer_signs_in_through_the_login_form(page, reviewer, watch):
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/login\?next=/$"))
    shoot(page, "login")

    log_in(page, reviewer.username, "not the password")
    expect(page.get_by_text("Your username and password did not match")).to_be_visible()
    shoot(page, "login-refused")

    log_in(page, reviewer.username)
    expect(page).to_have_url(re.compile(r"/$"))
    expect(page.get_by_role("heading", name="Runs")).to_be_visible()
    expect(page.get_by_role("navigation", name="Main")).to_contain_text(reviewer.username)
    expect(page.get_by_role("button", name="Log out")).to_be_visible()
    shoot(page, "runs-signed-in")
    watch.assert_clean()


def test_a_run_started_from_the_form_finishes_live_on_its_page(
    signed_in, worker, watch, monkeypatch
):
    page = signed_in
    # Pages of five rows, so the live tail falls more than a page behind between its polls
    # and has to catch up on its own (the server runs in this process).
    monkeypatch.setattr(pages, "EVENTS_PAGE", 5)
    page.get_by_role("link", name="New run").click()
    expect(page.get_by_role("heading", name="New run")).to_be_visible()
    page.get_by_label("Team").select_option("repo-fix")
    page.get_by_label("Scenario").select_option("first-flight")
    shoot(page, "new-run")
    page.get_by_role("button", name="Start the run").click()

    expect(page).to_have_url(re.compile(r"/runs/r-[0-9a-f]+/$"))
    run_id = re.search(r"/runs/(r-[0-9a-f]+)/", page.url).group(1)
    status = page.locator("#run-header h1 > span.badge")
    expect(status).to_have_text("running")
    expect(page.locator("#run-header h1")).to_contain_text(run_id)
    shoot(page, "run-running")

    # Only now does a worker exist to take the queued first step: the page saw "running".
    page.evaluate("window.__sameDocument = true")
    worker.start()
    try:
        expect(status).to_have_text("done", timeout=45_000)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\nworker log:\n{worker.logs()}") from None

    assert page.evaluate("window.__sameDocument === true"), "the page was reloaded"
    assert re.search(rf"/runs/{run_id}/$", page.url)
    # The timeline's live tail brings the worker's events in as well (it polls on its own).
    expect(page.locator("#events tr.event").nth(1)).to_be_attached()
    expect(page.locator("#run-header")).to_contain_text("reviewed, integrated")
    # Polling stopped with the run: the header no longer asks to be refreshed.
    expect(page.locator("#run-header [hx-trigger]")).to_have_count(0)
    # The tail's last answer drew the filters and the resume point again: they offered what
    # the run held when the page opened (its start), and said it would resume from there.
    expect(page.locator("#tail")).to_have_count(0)
    # It kept up: every one of the run's own events is on the page, none twice.
    own = queries.events(run_id, infra=False, limit=queries.EVENTS_MAX)
    expect(page.locator("#events tr.event")).to_have_count(len(own))
    expect(page.locator("#kind option[value=TeamFinished]")).to_have_count(1)
    expect(page.locator("#agent option[value=reviewer]")).to_have_count(1)
    expect(page.locator("#resume-point")).to_contain_text("stage complete")
    page.locator("#kind").select_option("TeamFinished")  # and the redrawn filters filter
    expect(page.locator("#events tr.event")).to_have_count(1)
    expect(page.locator("#events tr.event")).to_contain_text("TeamFinished")
    shoot(page, "run-done-live")
    watch.assert_clean()
