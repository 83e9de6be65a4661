"""python manage.py api_token USER [--name NAME] [--days N] [--read-only]: a bearer token for
scripts (shown once), refused after N days (90 unless told) and, made --read-only, refused
anything but a read.

`--list` shows USER's tokens (number, name, made, last used, its expiry or that a change of
USER's password since revoked it; never the token, which is not kept), and says so when USER
is deactivated (the API refuses their every token until they are active again: a token made
for them says so too); `--revoke N`
(or a name that only one of them has) takes one back: the scripts holding it get 401 from then
on. A leaked token is revoked here without deactivating its person.

`--purge-revoked` deletes USER's tokens that a change of their password revoked, naming each.
They are kept until then, not deleted when refused: a refused request would have to write (on
a read, on a database that may be read-only), the script holding one would be told why it was
refused once and then only that its token is unknown, and one never sent again would stay
anyway. And a revoked token is refused only while the password hash is another: a user's row
restored from a backup made before the change would open it again. Purged, it cannot.
"""

from __future__ import annotations

from argparse import ArgumentParser, ArgumentTypeError
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from config.commandline import refused, said
from dashboard.models import ApiToken
from runtime import written
from runtime.unseen import unseen_reason

NAME_MAX = ApiToken._meta.get_field("name").max_length or 100
# A token is refused this many days after it is made unless told otherwise: a leaked one,
# forgotten in a script or a log, stops opening anything by itself.
DAYS = 90
DAYS_MAX = 3_650
REVOKED = "revoked: password changed since it was made"


def days(text: str) -> int:
    """--days: a whole number of days, 1 to DAYS_MAX, refused naming the flag."""
    if not (text.isascii() and text.isdigit() and len(text) <= 5 and 1 <= int(text) <= DAYS_MAX):
        raise ArgumentTypeError(f"{text[:20]!r} is not a number of days from 1 to {DAYS_MAX:,}")
    return int(text)


class Command(BaseCommand):
    help = (
        "Make an API token for a user (printed once, stored only as a hash); --list shows "
        "the user's tokens, --revoke N takes one back, --purge-revoked deletes those a change "
        "of the user's password revoked."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("user")
        parser.add_argument("--name", default="script", help="what the token is for")
        parser.add_argument(
            "--days", type=days, default=DAYS, help=f"refused after this many days ({DAYS})"
        )
        parser.add_argument(
            "--read-only",
            action="store_true",
            help="it may read (GET) but not start, decide, steer or import anything",
        )
        what = parser.add_mutually_exclusive_group()
        what.add_argument("--list", action="store_true", help="list the user's tokens")
        what.add_argument("--revoke", metavar="N", help="revoke token N (or the one so named)")
        what.add_argument(
            "--purge-revoked",
            action="store_true",
            help="delete the user's tokens that a change of their password revoked",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            user = get_user_model().objects.get(username=options["user"])
        except get_user_model().DoesNotExist:
            raise refused(f"no user {options['user']!r}") from None
        tokens = ApiToken.objects.filter(user=user).order_by("pk")
        if options["list"]:
            self.list(user, tokens)
        elif options["revoke"] is not None:
            self.revoke(user, tokens, options["revoke"])
        elif options["purge_revoked"]:
            self.purge_revoked(user)
        else:
            name = options["name"].strip()
            if not name or len(name) > NAME_MAX:
                raise refused(f"--name: say what the token is for, in 1 to {NAME_MAX} chars")
            # A name --list shows and --revoke takes back by: one holding half a UTF-16 pair (an
            # argument that is not UTF-8) could not be stored, and one of nothing that can be
            # seen could not be told apart, nor typed to revoke.
            if why := written.unwritten_reason(name, "name") or unseen_reason(
                name, "name", "name it"
            ):
                raise refused(f"--name: {why}")
            expires = timezone.now() + timedelta(days=options["days"])
            made, token = ApiToken.issue(user, name, expires, options["read_only"])
            self.stdout.write(token)
            # Beside it, not with it: stdout is the token alone, for scripts.
            self.stderr.write(f"{self.what(made)}; {self.until(made)}")
            if not user.is_active:  # made all the same: it opens once they are active again
                self.stderr.write(
                    f"{said(user.username)} is deactivated: the API refuses this token until "
                    "they are active again"
                )

    def list(self, user: Any, tokens: Any) -> None:
        if not tokens:
            self.stdout.write(f"{user.username} has no API token")
            return
        if not user.is_active:
            # Said first, beside the list (stdout stays one line a token): the API refuses
            # every token of a deactivated person, and the list alone read as tokens that work.
            self.stderr.write(
                f"{said(user.username)} is deactivated: the API refuses all of these tokens "
                "until they are active again"
            )
        revoked_count = 0
        for t in tokens:
            used = f"last used {t.last_used_at:%Y-%m-%d %H:%M} UTC" if t.last_used_at else "unused"
            name = said(t.name)  # typed by whoever made it, through the API too
            made = f"made {t.created_at:%Y-%m-%d %H:%M} UTC"
            # A token its person's password change revoked is listed so, to be revoked here too.
            revoked = t.password_mark != ApiToken.mark(user.password)
            until = REVOKED if revoked else self.until(t)
            revoked_count += revoked
            self.stdout.write(f"{t.pk}\t{name}\t{made}\t{used}\t{until}\t{self.what(t)}")
        if revoked_count:
            # Beside the list, not in it: stdout stays one line a token, for scripts.
            self.stderr.write(
                f"{revoked_count} of them revoked; `api_token {said(user.username)} "
                "--purge-revoked` deletes them"
            )

    @staticmethod
    def until(token: ApiToken) -> str:
        if token.expires_at is None:
            return "never expires"
        past = "expired" if token.expires_at <= timezone.now() else "expires"
        return f"{past} {token.expires_at:%Y-%m-%d %H:%M} UTC"

    @staticmethod
    def what(token: ApiToken) -> str:
        return "read-only" if token.read_only else "reads and writes"

    def revoke(self, user: Any, tokens: Any, which: str) -> None:
        # An ASCII number: '²' is a digit to isdigit() and no number to int().
        number = which.isascii() and which.isdigit() and len(which) < 19  # not an overflow
        by_number = list(tokens.filter(pk=int(which))) if number else []
        by_name = list(tokens.filter(name=which))
        if by_number and by_name and by_number != by_name:
            # Token 2 and a token named "2": the number won, and revoked the other in silence.
            [numbered], named = by_number, ", ".join(str(t.pk) for t in by_name)
            raise refused(
                f"{which!r} is token {numbered.pk} ({numbered.name}) and the name of token "
                f"{named}: rename one, or revoke the one so named by its number"
            )
        found = by_number or by_name
        if not found:
            raise refused(
                f"{user.username} has no token {which!r}; `api_token {user.username} --list` "
                "shows their tokens"
            )
        if len(found) > 1:
            numbers = ", ".join(str(t.pk) for t in found)
            raise refused(f"{len(found)} tokens are named {which!r} ({numbers}): give one")
        [token] = found
        revoked = said(f"revoked token {token.pk} ({token.name}) of {user.username}")
        token.delete()
        self.stdout.write(revoked)

    def purge_revoked(self, user: Any) -> None:
        """Delete the tokens whose mark is not the password hash's as it stands, read under a
        lock of the user's row: a token made just after a change of the password holds the new
        hash's mark, and a hash read before that change would call it revoked."""
        with transaction.atomic():
            model = get_user_model()
            password = (
                model.objects.select_for_update()
                .filter(pk=user.pk)
                .values_list("password", flat=True)
            )
            stale = ApiToken.objects.filter(user_id=user.pk).exclude(
                password_mark=ApiToken.mark(password.get())
            )
            gone = list(stale.order_by("pk").values_list("pk", "name"))
            ApiToken.objects.filter(pk__in=[number for number, _ in gone]).delete()
        if not gone:
            self.stdout.write(said(f"{user.username} has no revoked token"))
            return
        for number, name in gone:
            self.stdout.write(said(f"deleted revoked token {number} ({name}) of {user.username}"))
