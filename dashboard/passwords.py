"""A change of a person's password revokes their API tokens; a new hash of the same password
at sign-in does not.

How: a token keeps a digest of its person's password hash as it was when made (password_mark)
and TokenAuth refuses it, saying why, once the hash in their row is another. Compared at each
request rather than acted on when the password changes, because every way a password changes
ends as another hash in that row: set_password and save (`manage.py changepassword`, Django's
password forms, an admin if one is added), and also QuerySet.update, a raw UPDATE, loaddata, a
row restored from a backup. A receiver of the user's save that deleted the tokens would see
the first only (update() and SQL send no signal; loaddata's save is raw), each new path would
have to remember it, and a deleted token could not tell its script why it was refused. The
cost is one SHA-256 per request, of a row read with the token anyway.

What that would take back unasked: Django hashes a right password again when its hasher or
iteration count has changed (check_password, at sign-in; e.g. after an upgrade of Django):
another hash, the same password. Django saves it alone (update_fields=["password"]) with the
raw password forgotten first, as it says, so that "hash upgrades shouldn't be considered
password changes"; the save's hash it replaces is noted on the user, and the sign-in it was
for moves the tokens marked with it onto the new hash. Nothing is moved unless that same user
object signs in: a hash written some other way revokes.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_in
from django.db.models.signals import pre_save

from dashboard.models import ApiToken

# Set on the user object by a save that rehashed its password, for the sign-in after it.
REHASHED_FROM = "_minutes_rehashed_from"


def noted_rehash(sender: Any, instance: Any, raw: bool = False, **kwargs: Any) -> None:
    """A save of the password hash alone, its raw password unset (check_password's rehash):
    note the hash it replaces."""
    fields = kwargs.get("update_fields")
    if raw or instance.pk is None or fields is None or set(fields) != {"password"}:
        return
    if getattr(instance, "_password", None) is not None:
        return  # set_password's own save: a change, whatever the hash was
    stored = sender._default_manager.filter(pk=instance.pk).values_list("password", flat=True)
    before = stored.first()
    if before is not None and before != instance.password:
        setattr(instance, REHASHED_FROM, before)


def carried_over(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    """Signed in with the password whose hash was just made again: its tokens go on."""
    before = user.__dict__.pop(REHASHED_FROM, None)
    if before is not None:
        ApiToken.objects.filter(user=user, password_mark=ApiToken.mark(before)).update(
            password_mark=ApiToken.mark(user.password)
        )


def connect() -> None:
    pre_save.connect(noted_rehash, sender=get_user_model(), dispatch_uid="minutes-rehash")
    user_logged_in.connect(carried_over, dispatch_uid="minutes-rehash-tokens")
