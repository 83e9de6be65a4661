"""An API token made with `manage.py api_token` is refused once its days are up (90 unless
told), and one made --read-only is refused anything but a read, a reviewer's included; each
refusal says why without the token, from the moment it applies, and writes nothing. A token
never expired and did all its person could."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from axes.models import AccessAttempt
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from dashboard.models import ApiToken
from journal_store.models import StoredEvent

pytestmark = pytest.mark.django_db

BODY = {"team": "repo-fix", "scenario": "first-flight"}


def made(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("api_token", "reviewer", *args, stdout=out, stderr=err)
    return out.getvalue().strip(), err.getvalue()


def api(token: str) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {token}", raise_request_exception=False)


def test_a_token_is_refused_once_its_days_are_up(reviewer):
    token, said = made("--name", "nightly", "--days", "30")
    issued = ApiToken.objects.get(name="nightly")
    assert issued.expires_at - issued.created_at == pytest.approx(
        timedelta(days=30), abs=timedelta(minutes=1)
    )
    assert "expires" in said and token not in said
    assert api(token).get("/api/runs").status_code == 200

    # Its time is up: the expiry is put in the past, as thirty days passing would.
    ApiToken.objects.filter(pk=issued.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    used = ApiToken.objects.get(pk=issued.pk).last_used_at
    for answer in (
        api(token).get("/api/runs"),
        api(token).post("/api/runs", BODY, "application/json"),
    ):
        assert answer.status_code == 401
        assert "this token expired at" in answer.json()["detail"]
        assert token not in answer.content.decode()
    assert api(token).get("/api/openapi.json").status_code == 401
    assert ApiToken.objects.get(pk=issued.pk).last_used_at == used
    assert StoredEvent.objects.count() == 0
    assert AccessAttempt.objects.get().failures_since_start == 3  # counted as a wrong token


def test_a_token_expires_in_ninety_days_unless_told(reviewer):
    made("--name", "ci")
    issued = ApiToken.objects.get(name="ci")
    assert issued.expires_at - issued.created_at == pytest.approx(
        timedelta(days=90), abs=timedelta(minutes=1)
    )
    assert not issued.read_only
    listed, _ = StringIO(), None
    call_command("api_token", "reviewer", "--list", stdout=listed)
    assert "expires " in listed.getvalue() and "reads and writes" in listed.getvalue()


def test_a_read_only_token_reads_and_changes_nothing(reviewer):
    token, said = made("--name", "watcher", "--read-only")
    assert "read-only" in said
    reader = api(token)
    assert reader.get("/api/runs").status_code == 200
    assert reader.head("/api/runs").status_code == 200
    for path, body in [
        ("/api/runs", BODY),
        ("/api/review/dead-letters/decide", {"letters": ["x"], "decision": "retry", "reason": "r"}),
        ("/api/review/conflicts/c-1/resolve", {"choice": "none", "reason": "r"}),
        ("/api/journals", {}),
    ]:
        answer = reader.post(path, body, "application/json")
        assert answer.status_code == 403, (path, answer.content)
        assert answer.json()["detail"].startswith("this token is read-only"), path
        assert token not in answer.content.decode()
    assert StoredEvent.objects.count() == 0
    listed = StringIO()
    call_command("api_token", "reviewer", "--list", stdout=listed)
    assert "read-only" in listed.getvalue()

    # The same person's other token still writes: read-only is the token's, not theirs.
    writer, _ = made("--name", "ci")
    assert api(writer).post("/api/runs", BODY, "application/json").status_code == 201


def test_the_schema_lists_the_read_only_refusal_on_what_changes(as_owner):
    schema = as_owner.get("/api/openapi.json").json()
    for methods in schema["paths"].values():
        for method, operation in methods.items():
            assert ("403" in operation["responses"]) or method == "get", operation["operationId"]


@pytest.mark.parametrize("days", ["0", "-1", "3651", "1.5", "soon", "²", "9" * 40])
def test_days_out_of_range_are_refused_naming_the_flag(reviewer, days):
    with pytest.raises(CommandError, match="--days"):
        made("--days", days)
    assert ApiToken.objects.count() == 0
