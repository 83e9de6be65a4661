"""What `manage.py demo` refuses before it starts anything: a --port or --workers out of range,
a second demo from the same home (whose lock it then holds), the local model's port or a busy
one, a broker of the person's own that does not answer; and how it says where those are (paths,
a broker's address without its password).
"""

from __future__ import annotations

import fcntl
import os
import socket
from argparse import ArgumentTypeError
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.management.base import CommandError

from config.commandline import refused
from services import local_model

# Held by the demo running from a MINUTES_HOME for as long as it runs (the kernel lets it go
# when the process ends, however it ends): says which one, to a second.
LOCK = "demo.lock"


def refused_credentials(exc: BaseException) -> bool:
    """Whether kombu's connection error is Redis refusing the password (or asking for one)."""
    from redis.exceptions import AuthenticationError

    return isinstance(exc.__cause__ or exc.__context__, AuthenticationError)


def sanitized(url: str) -> str:
    """A broker URL without its password; as_uri() would show ":**@" where the URL has none."""
    from kombu.utils.url import maybe_sanitize_url

    return str(maybe_sanitize_url(url))


def shown_path(path: Path) -> str:
    """A path as short as it can be said: relative to where the command runs, if under it."""
    # absolute(), not resolve(): the virtualenv's python is a link to the system's, and
    # `.venv/bin/python` is the one to type.
    try:
        return str(Path(path).absolute().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def refuse_a_second_demo() -> None:
    """Another demo running from this home (a second `make run` in the same checkout, on
    another port): refused before anything starts. Both would use one database, broker and
    logs, a second beat would revive the same runs, and stopping the second stopped the
    broker the first was using."""
    path = settings.HOME / LOCK
    if not path.exists():
        return  # no home yet, so nothing runs from it (and nothing is made here to say so)
    with path.open("r") as lock:
        if not locked(lock):
            raise refused(second_demo(lock.read()))


def locked(file: Any) -> bool:
    """Whether this process now holds `file`'s lock (False: another one does)."""
    try:
        fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def second_demo(held: str) -> str:
    pid, _, port = held.strip().partition(" ")
    where = f"http://127.0.0.1:{port}/, " if port.isdigit() else ""
    return (
        f"Minutes is already running from {shown_path(settings.HOME)}/ ({where}process "
        f"{pid or 'unknown'}): open that one, or stop it first (Ctrl-C where it runs). A "
        "second one here would share its database, broker and logs, and stopping it would "
        "stop the broker the first one uses; another Minutes needs a clone of its own"
    )


def refuse_the_local_models_port(port: int) -> None:
    """The port the local model's server listens on (MINUTES_LOCAL_MODEL_URL, 8765 unless
    set) is not Minutes' own: on it, a run on the local backend asked Minutes for answers,
    and the new-run form said the local model was not answering at Minutes' address."""
    model = urlsplit(local_model.url())
    if model.port == port and model.hostname in ("127.0.0.1", "localhost"):
        raise refused(
            f"port {port} is where the local model's server listens "
            f"(MINUTES_LOCAL_MODEL_URL={local_model.url()}): choose another port for "
            f"Minutes: {next_port(port)}, or set MINUTES_LOCAL_MODEL_URL to another port"
        )


def next_port(port: int) -> str:
    """How to start on the port after this one, as a refusal of this one says it."""
    other = port + 1
    return f"make run PORT={other} (or manage.py demo --port {other})"


def refuse_a_busy_port(port: int) -> None:
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", port)) == 0:
            raise refused(
                f"port {port} is in use (another Minutes?): stop it, or choose another "
                f"port: {next_port(port)}"
            )


def refuse_a_silent_broker() -> None:
    """A broker of the person's own (CELERY_BROKER_URL) that does not answer: said before
    anything starts. Otherwise the first screen said Minutes was running while the workers
    retried in their logs and the sample run waited for a step nobody could queue.
    Exit status 1, as for a database that does not answer or refuses its password
    (config/commandline.NO_DATABASE): no argument of the command was wrong."""
    if settings.EMBEDDED_BROKER:
        return
    from kombu.exceptions import OperationalError

    from config.celery import app

    shown = sanitized(settings.CELERY_BROKER_URL)
    with app.connection_for_write() as connection:
        try:
            connection.ensure_connection(
                max_retries=1, interval_start=0, interval_step=0, timeout=5
            )
        except OperationalError as exc:
            if refused_credentials(exc):
                # It runs: "start it" sent people to start a second Redis.
                raise CommandError(
                    f"the broker at CELERY_BROKER_URL ({shown}) answers but refused its "
                    f"authentication ({str(exc).rstrip('.')}): put the password it expects "
                    "in CELERY_BROKER_URL (redis://:PASSWORD@HOST:PORT/DB, percent-encoded), "
                    "or unset CELERY_BROKER_URL for the embedded one"
                ) from None
            raise CommandError(
                f"the broker at CELERY_BROKER_URL ({shown}) does not answer "
                f"({str(exc).rstrip('.')}): start "
                "it (a Redis server: redis-server --port PORT), or unset CELERY_BROKER_URL "
                "for the embedded one, which needs no server"
            ) from None


def hold_the_home(port: int) -> IO[str]:
    """Take the home's lock (to be held for as long as the demo runs), and say who holds it."""
    lock = (settings.HOME / LOCK).open("a+")
    if not locked(lock):
        # Taken between the check and here by a demo started at the same moment.
        lock.seek(0)
        raise refused(second_demo(lock.read()))
    lock.seek(0)
    lock.truncate()
    lock.write(f"{os.getpid()} {port}\n")
    lock.flush()
    return lock


def port(text: str) -> int:
    """--port: a TCP port a web server can listen on (the probe raised on one past 65535)."""
    number = int(text)  # not a number: argparse says "invalid port value"
    if not 1 <= number <= 65535:
        raise ArgumentTypeError(f"{number} is not a port (1 to 65535)")
    return number


WORKERS_MAX = 32  # each is a process of its own (some 100 MB): a typo's 10,000 took the machine


def workers(text: str) -> int:
    """--workers: with none, the sample run and every run started would wait for nobody."""
    number = int(text)
    if number < 1:
        raise ArgumentTypeError(f"{number}: at least one worker drives the runs")
    if number > WORKERS_MAX:
        raise ArgumentTypeError(
            f"{number}: at most {WORKERS_MAX} (each worker is a process of its own)"
        )
    return number
