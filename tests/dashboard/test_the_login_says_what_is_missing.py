"""The login page says what is wrong: a box left empty was "Your username and password did
not match", as if a password had been tried; a wrong pair still says that."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.dashboard.conftest import make_user

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "form, said",
    [
        ({"username": "", "password": ""}, "Enter your username and your password."),
        ({"username": "rosa", "password": ""}, "Enter your password."),
        ({"username": "", "password": "x"}, "Enter your username."),
        (
            {"username": "rosa", "password": "not hers"},
            "Your username and password did not match. Try again.",
        ),
    ],
)
def test_the_login_names_what_is_missing_or_wrong(form, said):
    make_user("rosa")
    page = Client().post("/login", form)
    assert page.status_code == 200
    assert f'<p class="message error" role="alert">{said}</p>' in page.content.decode()
