"""The embedded broker's folder is its owner's alone, and a socket path too long for a unix
socket in bytes is refused before a server starts (config/broker.py).

The folder was made with the process's umask (0755 under the usual 022): the socket was its
owner's, but the append-only file, which holds every queued step's message, was readable by
every local user. A path of 107 characters or fewer but more bytes (a MINUTES_HOME with
non-ASCII letters) passed the check on characters: redis-server cut it short, listened on
another path, and the start failed 15 s later saying only that the broker did not start, the
server left running."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

from config.broker import MAX_SOCKET_PATH, BrokerError, EmbeddedRedis

pytestmark = pytest.mark.slow


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("made_before", [False, True])
def test_the_folder_and_what_the_server_writes_are_its_owners_alone(made_before):
    home = Path(tempfile.mkdtemp(prefix="mnb-"))  # short: a socket path's limit
    folder = home / "broker"
    if made_before:  # by a version that made it with the umask
        folder.mkdir(mode=0o755)
        os.chmod(folder, 0o755)
    broker = EmbeddedRedis(folder)
    try:
        assert broker.ensure()
        assert mode(folder) & 0o077 == 0, oct(mode(folder))
        assert (folder / "appendonly.aof").exists()
    finally:
        broker.stop()
        shutil.rmtree(home)


def test_a_socket_path_too_long_in_bytes_is_refused_before_a_start(tmp_path):
    tail = len(os.fsencode(tmp_path)) + len("/x/redis.sock")
    folder = tmp_path / ("\u00e9" * ((MAX_SOCKET_PATH - tail) // 2 + 1) + "x")
    socket = folder / "redis.sock"
    assert len(str(socket)) <= MAX_SOCKET_PATH < len(os.fsencode(socket))
    with pytest.raises(BrokerError, match=r"longer than 107 bytes.*MINUTES_HOME"):
        EmbeddedRedis(folder)
    assert not folder.exists()
