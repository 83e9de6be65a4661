"""A running run whose model endpoint is down says so in its header, in Chromium: since when,
how many steps failed and the endpoint's last answer (escaped), until when it is waited out,
and that nothing is lost; at 390 px too, without widening the page. The header keeps saying
it across its polls, and stops once a step goes through."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from services import runs, steps
from tests.browser.conftest import SHOTS, overflow, shoot
from tests.fakellm import Reply, completion, wire_call

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_the_header_says_the_model_is_down_and_then_that_it_is_not(
    signed_in, nowhere, server, settings, watch
):
    page = signed_in
    settings.MODELS = {"MINUTES_MODEL_BASE_URL": server.url, "MINUTES_MODEL": "some-model"}
    settings.MODEL_BASE_URL = server.url
    said = b"<b>upstream</b> overloaded, see https://status.vendor.invalid/incidents/0123456789"
    server.queue(*[Reply(said, 503, {"Retry-After": "0"})] * 10)
    run_id = runs.start_run("solo", "solo-fix", by="rosa", model="endpoint")
    assert [steps.drive_step(run_id, "test") for _ in range(2)] == ["failed-step"] * 2

    page.goto(f"/runs/{run_id}/")
    note = page.locator("#run-header .trouble-note")
    expect(note).to_contain_text("The model endpoint has not answered since")
    expect(note).to_contain_text("(2 failed steps)")
    expect(note).to_contain_text("<b>upstream</b> overloaded")  # shown as text, not markup
    expect(note.locator("b")).to_have_count(0)
    expect(note).to_contain_text("Nothing of the run is lost.")
    with page.expect_response(lambda r: r.url.endswith(f"/runs/{run_id}/header")):
        pass  # a poll of the header comes and goes
    expect(note).to_contain_text("(2 failed steps)")
    shoot(page, "run-model-down")
    expect(note).to_contain_text(re.compile(r"until \d\d:\d\d:\d\d UTC"))
    page.locator("#run-header").screenshot(path=SHOTS / "readme-run-header-model-down.png")
    page.set_viewport_size({"width": 390, "height": 800})
    assert overflow(page) <= 1, f"wider than 390 px by {overflow(page)} px"

    server.replies.clear()
    server.queue(
        Reply(completion(None, [wire_call("list_files", '{"path": "."}', "c1")])),
        Reply(completion(None, [wire_call("done", '{"summary": "looked"}', "c2")])),
    )
    assert steps.drive_step(run_id, "test") not in ("failed-step", "dead-lettered")
    with page.expect_response(lambda r: r.url.endswith(f"/runs/{run_id}/header")):
        pass
    expect(note).to_have_count(0)
    watch.assert_clean()
