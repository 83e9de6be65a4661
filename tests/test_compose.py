"""docker-compose.yml is a valid Compose file (checked by docker-compose itself), run as
docs/workers.md says: beside a .env copied from .env.example, whose settings reach the containers."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        shutil.which("docker-compose") is None,
        reason="docker-compose is not available here (apt-get install docker-compose)",
    ),
]

ROOT = Path(__file__).resolve().parents[1]


def compose(tmp_path: Path, env_lines: list[str], *args: str) -> subprocess.CompletedProcess:
    """`docker-compose config ARGS` on a copy of the compose file, with this .env beside it
    and no MINUTES_ setting of ours in the environment."""
    shutil.copy(ROOT / "docker-compose.yml", tmp_path / "docker-compose.yml")
    (tmp_path / ".env").write_text("\n".join(env_lines) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MINUTES_", "POSTGRES_"))}
    return subprocess.run(
        ["docker-compose", "-f", "docker-compose.yml", "config", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def example(key: str | None) -> list[str]:
    """.env.example as people copy it, its key replaced (None: its line left out)."""
    lines = (ROOT / ".env.example").read_text().splitlines()
    kept = [line for line in lines if not line.startswith("MINUTES_SECRET_KEY=")]
    return kept + ([f"MINUTES_SECRET_KEY={key}"] if key is not None else [])


def test_the_compose_file_validates_and_names_every_service(tmp_path):
    check = compose(tmp_path, example("x" * 50), "--services")
    assert check.returncode == 0, check.stderr
    assert set(check.stdout.split()) == {"postgres", "redis", "web", "worker", "beat"}


def test_the_compose_file_refuses_to_start_without_a_secret_key(tmp_path):
    check = compose(tmp_path, example(None), "-q")
    assert check.returncode != 0 and "set MINUTES_SECRET_KEY" in check.stderr


def test_every_setting_in_env_reaches_the_containers_and_the_stacks_own_win(tmp_path):
    lines = [
        *example("k" * 50),
        "MINUTES_SSL_REDIRECT=0",
        "MINUTES_STEP_TURNS=50",
        "DATABASE_URL=sqlite:///elsewhere.sqlite3",
    ]
    check = compose(tmp_path, lines)
    assert check.returncode == 0, check.stderr
    for service in ("web", "worker", "beat"):
        # the service's block: its lines indented deeper than its name's two spaces
        block = re.split(r"\n  (?=\S)", check.stdout.split(f"\n  {service}:\n", 1)[1])[0]
        assert "MINUTES_SSL_REDIRECT: '0'" in block, service
        assert "MINUTES_STEP_TURNS: '50'" in block, service
        assert "DATABASE_URL: postgres://minutes:minutes@postgres:5432/minutes" in block


def test_a_health_check_that_reads_a_variable_runs_in_a_shell():
    """Compose turns `$$` into `$` and leaves it there: only a shell (CMD-SHELL) reads a
    variable. The worker's check asked `--destination celery@$HOSTNAME` in exec form, so celery
    was given those very characters, no worker answered, and it never passed."""
    import yaml

    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    checks = {name: s["healthcheck"]["test"] for name, s in services.items() if "healthcheck" in s}
    assert {"web", "worker", "beat"} <= set(checks)
    exec_form_with_a_variable = {
        name: test
        for name, test in checks.items()
        if test[0] != "CMD-SHELL" and any("$" in part for part in test[1:])
    }
    assert exec_form_with_a_variable == {}
    worker = checks["worker"]
    assert worker[0] == "CMD-SHELL" and "celery@$$HOSTNAME" in worker[1]


def test_the_beats_health_check_looks_where_the_beat_keeps_its_schedule():
    """The beat keeps its schedule in MINUTES_HOME (config/settings.py), under a name Python's
    dbm may add a suffix to: the check takes any of them."""
    import yaml

    stack = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    home = stack["x-minutes"]["environment"]["MINUTES_HOME"]
    check = stack["services"]["beat"]["healthcheck"]["test"]
    assert check[0] == "CMD-SHELL" and f"ls {home}/celerybeat-schedule* " in check[1]
