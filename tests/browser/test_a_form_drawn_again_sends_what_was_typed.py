"""A task holding right-to-left isolates, refused for another box and sent again from the page
drawn with the refusal: the run begins with the task as typed. The pages name such characters
where they show text ("[U+2067]"), and named them in the task box too: the mended form sent
"Fix [U+2067]...[U+2069] parser"."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from journal_store.models import RunSummary

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SHALOM = "\u05e9\u05dc\u05d5\u05dd"  # a Hebrew word (ruff: its letters look Latin)
TYPED = f"Fix \u2067{SHALOM}\u2069 parser"


def test_a_task_refused_for_another_box_is_sent_again_as_typed(signed_in, watch, settings):
    settings.MODEL_BASE_URL = "http://127.0.0.1:9/v1"  # a task of one's own: a model's
    settings.MODELS = {"MINUTES_MODEL": "some-model"}
    page = signed_in
    page.goto("/runs/new")
    # The form is drawn again for the backend: a box filled before the new one lands is lost.
    with page.expect_response(lambda r: "/runs/new?" in r.url):
        page.get_by_label("Model backend").select_option("endpoint")
    page.wait_for_function("() => !document.querySelector('.htmx-request, .htmx-settling')")
    page.get_by_label("Task").fill(TYPED)
    page.get_by_label("Allowance").fill("0")
    page.get_by_role("button", name="Start the run").click()
    expect(page.get_by_text("Ensure this value is greater than or equal to 1")).to_be_visible()
    expect(page.get_by_label("Task")).to_have_value(TYPED)
    expect(page.get_by_text("This text holds U+2067, U+2069")).to_be_visible()
    page.get_by_label("Allowance").fill("")
    page.get_by_role("button", name="Start the run").click()
    expect(page.get_by_text(f"Fix [U+2067]{SHALOM}[U+2069] parser").first).to_be_visible()
    run_id = page.url.rstrip("/").rsplit("/", 1)[-1]
    assert RunSummary.objects.get(run_id=run_id).task == TYPED
    # The one refusal, as the browser logs every 400, and nothing else.
    refusals = [e for e in watch.errors if "the server responded with a status of 400" in e]
    assert len(refusals) == 1, watch.errors
    assert [e for e in watch.errors if e not in refusals] == [] and watch.dialogs == []
