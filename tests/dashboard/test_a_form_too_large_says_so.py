"""A form too large for a page to read says so, naming the limit: a body past
DATA_UPLOAD_MAX_MEMORY_SIZE is a 413 (as the API's), and more fields than a page reads a 400
saying that, where both were the 400 page's "a header, the address or the body is malformed",
and htmx put that whole page inside the card whose button was pressed."""

from __future__ import annotations

from html import unescape

import pytest

from journal_store.models import StoredEvent
from tests.security.test_small_decision_reasons import letter

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
LIMIT = "1,048,576"  # the settings' DATA_UPLOAD_MAX_MEMORY_SIZE


def test_a_decision_too_large_to_read_is_a_413_naming_the_limit(as_reviewer):
    letter_id = letter()
    events = StoredEvent.objects.count()
    big = {"reason": "x" * (1024 * 1024 + 1)}
    page = as_reviewer.post(f"/review/dead-letters/{letter_id}/retry", big)
    assert page.status_code == 413
    said = unescape(page.content.decode())
    assert f"the form sent more than {LIMIT} bytes of fields, the most a page reads" in said
    assert "malformed" not in said
    assert '<nav aria-label="Main">' in said  # a page of its own, with the way back

    fragment = as_reviewer.post(f"/review/dead-letters/{letter_id}/retry", big, **HTMX)
    assert fragment.status_code == 413
    said = unescape(fragment.content.decode())
    assert said.startswith(
        f'<p class="message error" role="status">The form sent more than {LIMIT}'
    )
    assert "<html" not in said and "<nav" not in said  # the sentence alone, for the card
    assert StoredEvent.objects.count() == events


def test_a_form_of_too_many_fields_says_so(as_owner):
    many = "&".join(f"f{i}=1" for i in range(1_001))
    page = as_owner.post(
        "/runs/new", many, content_type="application/x-www-form-urlencoded", **HTMX
    )
    assert page.status_code == 400
    said = unescape(page.content.decode())
    assert "The request holds more than 1,000 fields or parameters, the most a page reads" in said
    assert "<html" not in said
