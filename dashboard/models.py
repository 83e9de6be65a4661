"""Who may do what: API tokens for scripts, and the permission to decide on review items."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime

from django.conf import settings
from django.db import models


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

    class Meta:
        permissions = [
            ("decide", "Can retry or discard dead letters and resolve claim conflicts"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.user})"

    @staticmethod
    def hash(token: str) -> str:
        return hashlib.sha256(token.encode()).hexdigest()

    @classmethod
    def issue(
        cls,
        user: object,
        name: str,
        expires_at: datetime | None = None,
        read_only: bool = False,
    ) -> tuple[ApiToken, str]:
        token = "mt_" + secrets.token_urlsafe(32)
        made = cls.objects.create(
            user=user,
            name=name,
            digest=cls.hash(token),
            expires_at=expires_at,
            read_only=read_only,
        )
        return made, token
