"""Shared by the sign-in, settings and small-fix tests: people, signing in, and a fresh process."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

from django.contrib.auth.models import Permission, User
from django.test import Client

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "oak-lantern-quarry-71"
FAILURE_LIMIT = 10  # the settings' default (MINUTES_LOGIN_FAILURE_LIMIT)


def person(name: str, decide: bool = False) -> User:
    user = User.objects.create_user(name, f"{name}@example.org", PASSWORD)
    if decide:
        user.user_permissions.add(Permission.objects.get(codename="decide"))
    return user


def sign_in(client: Client, username: str, password: str, address: str = "127.0.0.1"):
    """Post the login form as a browser at `address` would."""
    return client.post("/login", {"username": username, "password": password}, REMOTE_ADDR=address)


def is_signed_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def good_key() -> str:
    return secrets.token_urlsafe(50)


def fresh_process(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    """Run Python in a new process from the project root, with none of our MINUTES_ settings
    but the ones given: what a bare deployment would start with."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("MINUTES_")}
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
