"""A test an agent wrote runs as untrusted code: it sees none of the worker's secrets, cannot
write outside its workspace (nor into its .git, where git would run what it left), cannot read
another run's workspace, and has no network."""

from __future__ import annotations

import socket

import pytest

from tests.security.sandboxing import fresh_workspace, needs_bwrap, tool

pytestmark = needs_bwrap

SECRETS = {
    "OPENAI_API_KEY": "sk-fake-0123456789abcdef",
    "MINUTES_MODEL_API_KEY": "sk-fake-model-key",
    "DATABASE_URL": "postgres://minutes:hunter2@db.internal:5432/minutes",
}


def run_agent_test(root, body: str) -> dict:
    """Write one agent test that asserts its attack worked, run it as the agent would."""
    (root / "tests" / "test_attack.py").write_text(
        "import os, pathlib, socket\n\n\ndef test_attack():\n" + body
    )
    return tool(root, "run_tests", target="tests/test_attack.py")


def test_an_agents_test_does_not_see_the_workers_secrets(tmp_path, monkeypatch):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    _, root = fresh_workspace(tmp_path)
    result = run_agent_test(
        root,
        "    seen = {k: os.environ.get(k) for k in ('OPENAI_API_KEY', 'MINUTES_MODEL_API_KEY', "
        "'DATABASE_URL')}\n"
        "    assert any(seen.values()), 'no secret in sight'\n",
    )["result"]
    assert (result["passed"], result["failed"]) == (0, 1)
    assert "no secret in sight" in result["trace"]
    assert not any(value in result["trace"] for value in SECRETS.values())


def test_an_agents_test_cannot_write_outside_its_workspace(tmp_path):
    _, root = fresh_workspace(tmp_path)
    outside = tmp_path / "outside.txt"
    result = run_agent_test(root, f"    pathlib.Path({str(outside)!r}).write_text('pwned')\n")
    assert (result["result"]["passed"], result["result"]["failed"]) == (0, 1)
    assert "Read-only file system" in result["result"]["trace"]
    assert not outside.exists()


def test_an_agents_test_cannot_plant_a_git_hook_for_the_harness_to_run(tmp_path):
    _, root = fresh_workspace(tmp_path)
    hook = root / ".git" / "hooks" / "post-commit"
    result = run_agent_test(root, "    pathlib.Path('.git/hooks/post-commit').write_text('x')\n")
    assert (result["result"]["passed"], result["result"]["failed"]) == (0, 1)
    assert not hook.exists()


def test_an_agents_test_cannot_read_another_runs_workspace(tmp_path):
    workspaces, root = fresh_workspace(tmp_path)
    other = workspaces / "r-other.workspace"
    other.mkdir()
    (other / "notes.txt").write_text("another run's work")
    result = run_agent_test(
        root, f"    print(pathlib.Path({str(other / 'notes.txt')!r}).read_text())\n"
    )
    assert (result["result"]["passed"], result["result"]["failed"]) == (0, 1)
    assert "No such file or directory" in result["result"]["trace"]


def test_an_agents_test_cannot_open_a_socket(tmp_path):
    _, root = fresh_workspace(tmp_path)
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        port = server.getsockname()[1]
        result = run_agent_test(
            root, f"    socket.create_connection(('127.0.0.1', {port}), timeout=5).close()\n"
        )
        assert (result["result"]["passed"], result["result"]["failed"]) == (0, 1)
        assert "Connection refused" in result["result"]["trace"]
        with pytest.raises(BlockingIOError):
            server.accept()  # nobody ever came
