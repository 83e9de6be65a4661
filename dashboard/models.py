"""Who may do what: API tokens for scripts, and the permission to decide on review items."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import models, transaction


class ApiToken(models.Model):
    """A bearer token for scripts. Only its hash is stored; the token is shown once."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="tokens"
    )
    name = models.CharField(max_length=100)
    digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True)
    # Refused from this moment on (None: never, as every token made before expiry was kept).
    expires_at = models.DateTimeField(null=True)
    # Reads only: a script that watches runs needs no power to decide, start or import, and a
    # leak of its token should not give that power away.
    read_only = models.BooleanField(default=False)
    # A digest of the person's password hash when the token was made (ApiToken.mark): the
    # token is refused once the hash is another, i.e. once their password has changed
    # (dashboard/passwords.py says why it is checked this way). Blank is never a digest, so a
    # row made without issue() is refused, not let through.
    password_mark = models.CharField(max_length=64, default="")

    class Meta:
        permissions = [
            ("decide", "Can retry or discard dead letters and resolve claim conflicts"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.user})"

    @staticmethod
    def hash(token: str) -> str:
        return hashlib.sha256(token.encode()).hexdigest()

    @staticmethod
    def mark(password_hash: str) -> str:
        """The password hash's digest. Not keyed by the secret key, as Django's session hash
        is: rotating MINUTES_SECRET_KEY would then revoke every token, saying the password
        changed. Unkeyed it tells nothing of the password either: a guess is tested against
        the hash's salt and its slow digest, which this one-way digest of them does not give."""
        return hashlib.sha256(password_hash.encode()).hexdigest()

    @classmethod
    def issue(
        cls,
        user: Any,
        name: str,
        expires_at: datetime | None = None,
        read_only: bool = False,
    ) -> tuple[ApiToken, str]:
        token = "mt_" + secrets.token_urlsafe(32)
        # The hash as stored, not as this object holds it: one read before a password change
        # elsewhere would mark the token with the old hash, and it would be refused at once.
        # Read under a lock of the user's row, held until the token is stored (as
        # --purge-revoked reads it): a change committed between the read and the insert gave a
        # token made after it the old hash's mark, revoked from the start. Now a change waits
        # for the token, and revokes it as any made before it.
        people = type(user)._default_manager.select_for_update()
        with transaction.atomic():
            stored = people.filter(pk=user.pk).values_list("password", flat=True)
            made = cls.objects.create(
                user=user,
                name=name,
                digest=cls.hash(token),
                expires_at=expires_at,
                read_only=read_only,
                password_mark=cls.mark(stored.get()),
            )
        return made, token
