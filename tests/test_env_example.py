"""`.env.example` is the list of settings people copy: every variable Minutes reads is in it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Where the environment is read: the settings, and the model client (used without Django too).
READERS = [
    "config/settings.py",
    "config/env.py",
    "runtime/openai_client.py",
    "runtime/openai_settings.py",
]
NAME = re.compile(r'"((?:MINUTES|OPENAI|CELERY|DATABASE|POSTGRES)_[A-Z_]+)"')


def test_every_variable_minutes_reads_is_in_env_example():
    read = {name for path in READERS for name in NAME.findall((ROOT / path).read_text())}
    listed = (ROOT / ".env.example").read_text()
    assert len(read) > 30  # the pattern still finds what the settings read
    missing = sorted(name for name in read if not re.search(rf"\b{name}=", listed))
    assert missing == [], f"not in .env.example: {', '.join(missing)}"


def test_the_numbers_env_example_gives_are_the_defaults(monkeypatch):
    """A commented `# MINUTES_X=N` in .env.example tells people the default: when a default
    moves (snapshots went from every 25 turns to every 5), the list must move with it."""
    import importlib.util

    from config import env

    defaults: dict[str, int] = {}
    number = env.number

    def noting(
        name: str, default: int, minimum: int | None = None, maximum: int | None = None
    ) -> int:
        defaults[name] = default
        return number(name, default, minimum, maximum)

    monkeypatch.setattr(env, "number", noting)
    spec = importlib.util.spec_from_file_location(
        "settings_read_again", ROOT / "config/settings.py"
    )
    assert spec is not None and spec.loader is not None
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    listed = re.findall(r"^# (MINUTES_[A-Z_]+)=(\d+)\b", (ROOT / ".env.example").read_text(), re.M)
    assert len(defaults) > 15 and len(listed) > 15
    wrong = {
        name: f"listed {value}, default {defaults[name]}"
        for name, value in listed
        if name in defaults and int(value) != defaults[name]
    }
    assert wrong == {}
