"""A runs list filter the page cannot take, in a real browser: the message is swapped into the
list's place by htmx (a 400, which htmx drops unless told to swap it: templates/base.html), the
form keeps what was asked, and a filter it can take brings the list back."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import settled, shoot

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_the_runs_list_says_which_filter_it_cannot_take_in_place(signed_in, watch):
    page = signed_in
    page.goto("/?sort=newest")  # a hand-edited address: a sort there is none of
    runs = page.locator("#runs")
    expect(runs.get_by_role("alert")).to_contain_text(
        "sort: 'newest' is no sort; one of started, oldest"
    )
    expect(page.locator("#sort")).to_have_value("newest")  # as it was asked
    expect(runs.locator("table")).to_have_count(0)  # no list as if sorted
    shoot(page, "runs-list-bad-sort")

    # Another filter changed in place (htmx): the sort is still none, and the list's place
    # says so again, where htmx would have left the page as it was.
    page.evaluate("document.querySelector('#runs [role=alert]').dataset.drawn = 'with the page'")
    page.locator("#status").select_option("done")
    expect(page).to_have_url(re.compile(r"status=done"))
    settled(page)
    expect(runs.locator("[data-drawn]")).to_have_count(0)  # swapped: the 400's own message
    expect(runs.get_by_role("alert")).to_contain_text("sort: 'newest' is no sort")

    # A sort it takes: the list, filtered by what was chosen.
    page.locator("#sort").select_option("oldest")
    expect(runs.locator("table")).to_be_visible()
    expect(runs.get_by_role("alert")).to_have_count(0)
    expect(page).to_have_url(re.compile(r"sort=oldest"))
    # Chromium logs every 4xx answer to the console; nothing else may have gone wrong.
    refusals = [e for e in watch.errors if "the server responded with a status of 4" in e]
    assert len(refusals) == 2, watch.errors
    assert [e for e in watch.errors if e not in refusals] == [] and watch.dialogs == []


def test_back_and_forward_to_a_filter_it_cannot_take_say_so(signed_in, watch):
    """The runs list keeps no snapshot for Back (hx-history="false"): htmx asks the server for
    the page, and dropped its 400, so Back or Forward to an address with a filter the page
    cannot take showed the list of the address before it, under the refused address."""
    page = signed_in
    page.goto("/?team=repo-fix")
    runs = page.locator("#runs")
    expect(runs.locator("table")).to_be_visible()
    page.locator("#tag").fill("Bad Tag!")
    page.locator("#tag").dispatch_event("change")
    expect(page).to_have_url(re.compile(r"tag=Bad"))
    expect(runs.get_by_role("alert")).to_contain_text("tag: 'Bad Tag!' is not a tag")
    page.locator("#tag").fill("")
    page.locator("#tag").dispatch_event("change")
    expect(page).to_have_url(re.compile(r"tag=&"))
    expect(runs.locator("table")).to_be_visible()
    settled(page)

    page.go_back()
    expect(page).to_have_url(re.compile(r"tag=Bad"))
    expect(runs.get_by_role("alert")).to_contain_text("tag: 'Bad Tag!' is not a tag")
    expect(runs.locator("table")).to_have_count(0)
    expect(page.locator("#tag")).to_have_value("Bad Tag!")
    page.go_forward()
    expect(page).to_have_url(re.compile(r"tag=&"))
    expect(runs.locator("table")).to_be_visible()
    page.go_back()
    expect(runs.get_by_role("alert")).to_contain_text("tag: 'Bad Tag!' is not a tag")
    # Chromium logs every 4xx answer to the console; htmx's own errors are not among them.
    assert [e for e in watch.errors if "the server responded with a status of 4" not in e] == []
    assert watch.dialogs == []
