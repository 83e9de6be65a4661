"""`.env.example` is the list of settings people copy: every variable Minutes reads is in it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Where the environment is read: the settings, and the model client (used without Django too).
READERS = ["config/settings.py", "config/env.py", "runtime/openai_client.py"]
NAME = re.compile(r'"((?:MINUTES|OPENAI|CELERY|DATABASE|POSTGRES)_[A-Z_]+)"')


def test_every_variable_minutes_reads_is_in_env_example():
    read = {name for path in READERS for name in NAME.findall((ROOT / path).read_text())}
    listed = (ROOT / ".env.example").read_text()
    assert len(read) > 30  # the pattern still finds what the settings read
    missing = sorted(name for name in read if not re.search(rf"\b{name}=", listed))
    assert missing == [], f"not in .env.example: {', '.join(missing)}"
