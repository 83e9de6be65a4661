"""Weak passwords are refused: Django's four standard validators are on, so `password` and
`12345678` (which the length check alone let through) cannot be set."""

from __future__ import annotations

import secrets

import pytest
from django.contrib.auth.forms import SetPasswordForm
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError

from tests.security.signin_helpers import PASSWORD, person

pytestmark = pytest.mark.django_db

WEAK = {
    "password": "too common",
    "12345678": "entirely numeric",
    "rosa.example": "too similar to the email address",
}


@pytest.mark.parametrize("weak", list(WEAK))
def test_a_weak_password_is_refused_and_the_old_one_stays(weak):
    rosa = person("rosa")
    before = rosa.password
    with pytest.raises(ValidationError) as refused:
        validate_password(weak, rosa)
    assert WEAK[weak] in " ".join(refused.value.messages)

    # The form every password change goes through (changepassword and createsuperuser run
    # the same validators) refuses it too, naming the field, and stores nothing.
    form = SetPasswordForm(rosa, {"new_password1": weak, "new_password2": weak})
    assert not form.is_valid() and WEAK[weak] in " ".join(form.errors["new_password2"])
    rosa.refresh_from_db()
    assert rosa.password == before and rosa.check_password(PASSWORD)


def test_the_demos_generated_password_and_a_passphrase_pass():
    demo = person("demo")
    # What `manage.py demo` generates (dashboard/management/commands/demo.py), and ours.
    for good in (secrets.token_urlsafe(12), PASSWORD):
        validate_password(good, demo)
    with pytest.raises(ValidationError):
        validate_password("password", demo)
