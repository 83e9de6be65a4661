"""`manage.py api_token`: a token is made for a person, listed without itself (it is not
kept), and revoked, after which the scripts holding it are refused; mistakes name what was
wrong and change nothing."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client

from dashboard.models import ApiToken

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command("api_token", *args, stdout=out)
    return out.getvalue()


def test_made_listed_used_and_revoked():
    get_user_model().objects.create_user("rosa", password="a long pass phrase 7")
    first = run("rosa", "--name", "nightly").strip()
    second = run("rosa", "--name", "laptop").strip()
    assert Client().get("/api/runs", HTTP_AUTHORIZATION=f"Bearer {first}").status_code == 200

    listed = run("rosa", "--list")
    assert "nightly" in listed and "laptop" in listed and "last used" in listed
    assert first not in listed and second not in listed  # never shown again
    nightly = ApiToken.objects.get(name="nightly")

    assert run("rosa", "--revoke", str(nightly.pk)).startswith(f"revoked token {nightly.pk}")
    assert Client().get("/api/runs", HTTP_AUTHORIZATION=f"Bearer {first}").status_code == 401
    assert Client().get("/api/runs", HTTP_AUTHORIZATION=f"Bearer {second}").status_code == 200
    run("rosa", "--revoke", "laptop")  # by its name, when only one has it
    assert run("rosa", "--list").strip() == "rosa has no API token"


def test_a_deactivated_persons_list_says_their_tokens_are_refused():
    rosa = get_user_model().objects.create_user("rosa", password="a long pass phrase 7")
    token = run("rosa", "--name", "nightly").strip()
    run("rosa", "--name", "laptop")
    rosa.is_active = False
    rosa.save(update_fields=["is_active"])
    assert Client().get("/api/runs", HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 401
    out, err = StringIO(), StringIO()
    call_command("api_token", "rosa", "--list", stdout=out, stderr=err)
    assert len(out.getvalue().splitlines()) == 2  # one line a token, as ever
    assert "rosa is deactivated: the API refuses all of these tokens" in err.getvalue()

    rosa.is_active = True
    rosa.save(update_fields=["is_active"])
    assert Client().get("/api/runs", HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 200
    err = StringIO()
    call_command("api_token", "rosa", "--list", stdout=StringIO(), stderr=err)
    assert "deactivated" not in err.getvalue()


def test_a_token_made_for_a_deactivated_person_says_it_opens_nothing_yet():
    rosa = get_user_model().objects.create_user("rosa", password="a long pass phrase 7")
    rosa.is_active = False
    rosa.save(update_fields=["is_active"])
    out, err = StringIO(), StringIO()
    call_command("api_token", "rosa", "--name", "nightly", stdout=out, stderr=err)
    token = out.getvalue().strip()  # stdout is the token alone, as ever
    assert "rosa is deactivated: the API refuses this token" in err.getvalue()
    assert Client().get("/api/runs", HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 401

    rosa.is_active = True
    rosa.save(update_fields=["is_active"])
    assert Client().get("/api/runs", HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 200
    err = StringIO()
    call_command("api_token", "rosa", "--name", "laptop", stdout=StringIO(), stderr=err)
    assert "deactivated" not in err.getvalue()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("nobody", "--list"), "no user 'nobody'"),
        (("rosa", "--revoke", "99"), "rosa has no token '99'"),
        (("rosa", "--revoke", "9" * 40), "rosa has no token"),
        (("rosa", "--revoke", "twin"), "2 tokens are named 'twin'"),
        (("rosa", "--name", " "), "--name: say what the token is for"),
        (("rosa", "--name", "x" * 101), "--name: say what the token is for"),
        (
            ("rosa", "--name", "ci\x1b[2J"),
            "--name: the name holds a control character \\(U\\+001B\\)",
        ),
        (
            ("rosa", "--name", "a\udcffb"),
            "--name: the name holds half a UTF-16 surrogate pair \\(U\\+DCFF",
        ),
        (("rosa", "--name", "\u200b"), "--name: the name holds no character that can be seen"),
    ],
)
def test_mistakes_are_named_and_change_nothing(args, says):
    rosa = get_user_model().objects.create_user("rosa", password="a long pass phrase 7")
    ApiToken.issue(rosa, "twin")
    ApiToken.issue(rosa, "twin")
    with pytest.raises(CommandError, match=says):
        run(*args)
    assert ApiToken.objects.count() == 2


def test_another_persons_token_is_not_theirs_to_revoke():
    rosa = get_user_model().objects.create_user("rosa", password="a long pass phrase 7")
    get_user_model().objects.create_user("sam", password="a long pass phrase 8")
    theirs, _ = ApiToken.issue(rosa, "nightly")
    with pytest.raises(CommandError, match="sam has no token"):
        run("sam", "--revoke", str(theirs.pk))
    assert ApiToken.objects.filter(pk=theirs.pk).exists()


def test_a_tokens_name_is_listed_and_revoked_plain():
    """A name is whoever made the token's words; listed raw, its escapes reached the terminal."""
    rosa = get_user_model().objects.create_user("rosa", password="a long pass phrase 7")
    ApiToken.issue(rosa, "ci\x1b[2J")
    listed = run("rosa", "--list")
    assert "\x1b" not in listed and "ci\\x1b[2J" in listed
    revoked = run("rosa", "--revoke", "ci\x1b[2J")
    assert "\x1b" not in revoked and "(ci\\x1b[2J)" in revoked


def test_a_number_that_is_one_tokens_and_anothers_name_is_refused():
    """Token 2 and a token named "2": `--revoke 2` revoked token 2 in silence, and the scripts
    holding it were refused, where its person meant the one named so."""
    rosa = get_user_model().objects.create_user("rosa", password="a long pass phrase 7")
    named, _ = ApiToken.issue(rosa, "x")
    numbered, _ = ApiToken.issue(rosa, "deploy")
    named.name = str(numbered.pk)
    named.save()
    with pytest.raises(CommandError) as refused:
        run("rosa", "--revoke", str(numbered.pk))
    assert str(refused.value) == (
        f"'{numbered.pk}' is token {numbered.pk} (deploy) and the name of token {named.pk}: "
        "rename one, or revoke the one so named by its number"
    )
    assert ApiToken.objects.count() == 2
    assert "revoked token" in run("rosa", "--revoke", str(named.pk))  # its number: one token


def test_a_digit_that_is_no_ascii_number_is_a_name_not_a_traceback():
    get_user_model().objects.create_user("rosa", password="a long pass phrase 7")
    with pytest.raises(CommandError, match=r"rosa has no token '²'"):
        run("rosa", "--revoke", "²")
