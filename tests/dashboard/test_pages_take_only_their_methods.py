"""Every page answers a method it does not take with the 405 saying which it takes: the import
page and the new-run form answered PUT, PATCH, DELETE and OPTIONS as a GET (200), where every
other page refused them."""

from __future__ import annotations

import pytest

from journal_store.models import StoredEvent

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path", ["/import", "/runs/new"])
@pytest.mark.parametrize("method", ["put", "patch", "delete", "options"])
def test_a_form_page_refuses_a_method_it_does_not_take(as_owner, path, method):
    answer = getattr(as_owner, method)(path, "team=solo&scenario=first-flight")
    assert answer.status_code == 405
    assert answer["Allow"] == "GET, HEAD, POST"
    said = answer.content.decode()
    assert f'{method.upper()} is not one of the methods <span class="mono">{path}</span>' in said
    assert StoredEvent.objects.count() == 0  # nothing started, nothing imported


@pytest.mark.parametrize("path", ["/import", "/runs/new"])
def test_a_form_page_still_answers_get_and_head(as_owner, path):
    assert as_owner.get(path).status_code == 200
    assert as_owner.head(path).status_code == 200
