"""`manage.py reviewer NAME` gives a person the reviewer permission; --revoke takes it away."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from dashboard.access import can_decide

pytestmark = pytest.mark.django_db


def fresh(name: str) -> User:
    return User.objects.get(username=name)  # permissions are cached on the instance


def test_the_reviewer_permission_is_given_and_taken_away():
    User.objects.create_user("ada", password="a-long-password-9")
    assert not can_decide(fresh("ada"))
    out = StringIO()
    call_command("reviewer", "ada", stdout=out)
    assert out.getvalue() == "ada may now decide on review items\n"
    assert can_decide(fresh("ada"))
    call_command("reviewer", "ada", "--revoke", stdout=StringIO())
    assert not can_decide(fresh("ada"))


def test_an_unknown_user_is_named():
    with pytest.raises(CommandError, match="no user 'nobody'"):
        call_command("reviewer", "nobody")
