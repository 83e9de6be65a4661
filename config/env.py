"""Settings from the environment, failing loudly on values that cannot be right."""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

TRUE = {"1", "true", "yes", "on"}
FALSE = {"0", "false", "no", "off", ""}


def text(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def flag(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    if raw.strip().lower() in TRUE:
        return True
    if raw.strip().lower() in FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name} must be one of 1/0, true/false, yes/no, on/off; got {raw!r}"
    )


def choice(name: str, choices: tuple[str, ...], default: str) -> str:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    if raw.strip().lower() not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}; got {raw!r}")
    return raw.strip().lower()


def number(name: str, default: int, minimum: int | None = None, maximum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ImproperlyConfigured(f"{name} must be at most {maximum}, got {value}")
    return value


def items(name: str) -> list[str]:
    """A comma-separated list, each item stripped: `localhost, 127.0.0.1` is two host names,
    where the second was " 127.0.0.1", which no request's Host ever matched."""
    return [item.strip() for item in os.environ.get(name, "").split(",") if item.strip()]


def pairs(name: str) -> dict[str, str]:
    """`key=value,key=value` (values URL-encoded), as OTEL_EXPORTER_OTLP_HEADERS writes them."""
    raw = os.environ.get(name, "")
    out: dict[str, str] = {}
    for item in raw.split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            # The value may be a credential: name the variable and the item's place, not it.
            place = len(out) + 1
            raise ImproperlyConfigured(f"{name}: item {place} is not key=value")
        value = unquote(value.strip())
        if not plain(value):
            # Sent as it is, it would fail every push (http.client refuses it, quoting it):
            # said at start, naming the header, never its value.
            raise ImproperlyConfigured(
                f"{name}: the value of {key.strip()!r} holds a control character (a newline "
                "once URL-decoded?) or a character outside Latin-1; HTTP headers cannot carry it"
            )
        out[key.strip()] = value
    return out


def plain(value: str) -> bool:
    """Whether a header value can be sent: Latin-1, no control characters (tab allowed)."""
    return all(c == "\t" or (" " <= c <= "\xff" and c != "\x7f") for c in value)


# .env.example's stand-in, refused like any other key that was never chosen.
PLACEHOLDER_KEY = "change-me-to-50-random-characters"
MIN_KEY_LENGTH = 50  # what Django's own deployment check asks for


def secret_key(name: str, required: bool) -> str:
    """The secret key from `name`; when `required` (production), one that a person chose.

    Django only warns about a weak key (`check --deploy`); a production start refuses it here:
    a short or guessable key lets anyone who guesses it sign sessions and password resets.
    """
    key = os.environ.get(name, "")
    if not required:
        return key
    hint = "make one with: python3 -c 'import secrets; print(secrets.token_urlsafe(50))'"
    if not key:
        raise ImproperlyConfigured(
            f"{name} must be set when MINUTES_DEBUG=0 (the default; a development machine sets "
            f"MINUTES_DEBUG=1, as `make run` does); {hint}"
        )
    if key.strip() == PLACEHOLDER_KEY:
        raise ImproperlyConfigured(f"{name} is the placeholder from .env.example; {hint}")
    if len(key) < MIN_KEY_LENGTH or len(set(key)) < 5:
        raise ImproperlyConfigured(
            f"{name} is {len(key)} characters of {len(set(key))} kinds; production needs at "
            f"least {MIN_KEY_LENGTH} characters of 5 kinds or more; {hint}"
        )
    return key


# Every append takes one advisory lock (journal_store/journal.py), so a process that stops
# inside a transaction (a worker frozen, swapped out, SIGSTOPped) held every run's writes until
# it went on. PostgreSQL now ends such a session after this long idle in a transaction: the
# lock is let go and the stalled writer's run is taken over as a dead worker's is. Nothing of
# ours waits between two statements of a transaction for more than a moment (a model call or
# a tool run happens outside any). A URL's own `?options=` replaces it.
IDLE_IN_TRANSACTION = "-c idle_in_transaction_session_timeout=30s"
# No parallel plans: every statement of ours is a seek of a few rows, and where PostgreSQL
# guessed thousands (the claims since a stream's last note, 0 to 3 there) it planned a
# parallel bitmap scan and spent 8 to 14 ms starting two workers for no row; without them the
# claims' reads are flat from 100 to 20,000 (bench/whole_reads.py --postgres: after a ruling
# 1.81 -> 1.83 ms where it was 2.16 -> 15.5, after supersessions 1.58 -> 1.46 where 2.59 ->
# 10.8). A URL's own `?options=` replaces both.
SESSION_OPTIONS = IDLE_IN_TRANSACTION + " -c max_parallel_workers_per_gather=0"

# A connection that goes silent (the server's host gone, a NAT or a load balancer in between
# that forgot it, packets dropped without a reset) left its query waiting until TCP gave up:
# about 15 minutes for a query the server never acknowledged (tcp_retries2), and for good for
# one it had acknowledged before it went, since an idle socket sends nothing. A worker's step,
# a page, the beat's round waited that long. libpq's keepalives probe a connection quiet for
# 30 s, and TCP_USER_TIMEOUT gives one up when neither its data nor a probe is acknowledged
# for 60 s: the query fails with OperationalError (a page answers 503, a step is retried) a
# minute after the server was last heard (tests/test_a_silent_database_connection.py). A
# server that is only slow answers the probes from its kernel, so a long query is not cut.
# The next connection, to a host still gone, is given up after 10 s (connect_timeout), where
# TCP's user timeout alone took the minute and TCP without it about two (its SYN retries): a
# server that answers at all answers a connection in far less.
# A URL's own values win (`?keepalives_idle=10&tcp_user_timeout=20000`).
SILENCE_BOUND = {
    "connect_timeout": "10",
    "keepalives": "1",
    "keepalives_idle": "30",
    "keepalives_interval": "10",
    "keepalives_count": "3",
    "tcp_user_timeout": "60000",
}
# How long a SQLite connection waits for another's write before it says the database is busy.
BUSY_SECONDS = 30
DATABASE_URL = "sqlite:///var/minutes.sqlite3"  # the embedded default


def longest_wait(url: str) -> int | None:
    """The seconds a query may wait on the database `url` names before it is told the database
    did not answer (and a page answers 503): SQLite's busy timeout, or PostgreSQL's silence
    bound as the URL leaves it. None where nothing bounds it, or where the URL is one
    `database` refuses, which says why as Minutes starts."""
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        return BUSY_SECONDS
    if parts.scheme not in ("postgres", "postgresql"):
        return None
    options = {**SILENCE_BOUND, **dict(parse_qsl(parts.query))}
    # Keepalives alone bound only a connection that looks idle: a query still unacknowledged
    # waits for TCP's retries (about 15 minutes) unless TCP's user timeout is set.
    unheard = options["tcp_user_timeout"]
    if not (unheard.isascii() and unheard.isdigit()) or unheard == "0":
        return None
    return -(-int(unheard) // 1000)


# The URL's options libpq reads as whole numbers, and what each counts, to refuse anything else.
WHOLE_NUMBERS = {
    "connect_timeout": "a whole number of seconds",
    "keepalives": "1 (on) or 0 (off)",
    "keepalives_idle": "a whole number of seconds",
    "keepalives_interval": "a whole number of seconds",
    "keepalives_count": "a whole number of probes",
    "tcp_user_timeout": "a whole number of milliseconds",
}


def database(url: str, base: Path, name: str = "DATABASE_URL") -> dict[str, Any]:
    """Django's DATABASES entry for `sqlite:///relative/path`, `sqlite:////absolute/path` or
    `postgres://user:password@host:port/name?option=value`."""
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        path = unquote(parts.path)[1:] if parts.path.startswith("/") else unquote(parts.path)
        if not path:
            raise ImproperlyConfigured(f"{name}: a sqlite URL needs a file path, got {url!r}")
        file = Path(path) if Path(path).is_absolute() else base / path
        # On a fresh clone `var/` does not exist yet, and SQLite will not make a folder:
        # `manage.py migrate` must work first thing, before anything else has run.
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ImproperlyConfigured(
                f"{name}: cannot create the database's folder {file.parent}: {exc.strerror}"
            ) from None
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(file),
            # A file, not memory, for the test database: the concurrency tests open several
            # connections (threads and processes) that must see one database.
            "TEST": {"NAME": str(file.with_name("test-" + file.name))},
            "OPTIONS": {
                # One writer at a time, taking the lock when the transaction begins, so a
                # reader never sees positions commit out of order; WAL lets readers go on
                # while the writer writes; FULL sync because a journal is evidence.
                "transaction_mode": "IMMEDIATE",
                "timeout": BUSY_SECONDS,
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;",
            },
        }
    if parts.scheme in ("postgres", "postgresql"):
        # Errors quote the URL without its password: they end up in logs and on screens.
        shown = masked(url)
        refuse_unencoded_userinfo(url, name)
        if not parts.path.strip("/"):
            raise ImproperlyConfigured(
                f"{name}: a postgres URL needs a database name, got {shown!r}"
            )
        try:
            port = str(parts.port or "")
        except ValueError:
            raise ImproperlyConfigured(
                f"{name}: the port is not a number between 0 and 65535, in {shown!r}"
            ) from None
        options = dict(parse_qsl(parts.query))
        # libpq takes whole numbers; anything else ended in a traceback at the first query.
        for key, what in WHOLE_NUMBERS.items():
            value = options.get(key)
            if value is None:
                continue
            whole = value.isascii() and value.isdigit()
            if not (value in ("0", "1") if key == "keepalives" else whole):
                raise ImproperlyConfigured(f"{name}: {key} must be {what}, got {value!r}")
        # Django says only "Error loading psycopg2 or psycopg module", at the first query: the
        # driver is an extra that `make run` does not install, so say which.
        if not driver_installed():
            raise ImproperlyConfigured(
                f"{name} names PostgreSQL ({shown!r}), but its driver is not installed: "
                ".venv/bin/pip install -e '.[postgres]'"
            )
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": unquote(parts.path.strip("/")),
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": parts.hostname or "",
            "PORT": port,
            # Server-side binding: psycopg's client-side binding formats every parameter into
            # the SQL text in Python, which made a 100-event append 3x slower.
            "OPTIONS": {
                "server_side_binding": True,
                "options": SESSION_OPTIONS,
                **SILENCE_BOUND,
                **options,
            },
            "CONN_MAX_AGE": 60,
        }
    raise ImproperlyConfigured(
        f"{name} must start with sqlite:// or postgres://, got {url.split(':', 1)[0]!r}"
    )


# Characters that end a URL's user:password part where they stand, unless percent-encoded.
URL_DELIMITERS = {"/": "%2F", "?": "%3F", "#": "%23"}


def masked(url: str) -> str:
    """`url` with everything between `//` and its last `@` hidden but the user name (`***`),
    however the URL parses: a password holding `/`, `?` or `#` cuts a parser's user:password
    part short, and what it then takes for the password is not the password."""
    head, sep, rest = url.partition("//")
    if not sep:  # no scheme: all of it may be user:password@host
        head, rest = "", url
    userinfo, at, tail = rest.rpartition("@")
    if not at:
        return url
    user, colon, _ = userinfo.partition(":")
    if not colon or any(c in user for c in URL_DELIMITERS):
        return f"{head}{sep}***@{tail}"
    return f"{head}{sep}{user}:***@{tail}"


def refuse_unencoded_userinfo(url: str, name: str) -> None:
    """Refuse a URL whose user:password part (before its last `@`) holds a character that ends
    it early: parsers then read a port or a path out of the password, and blame those."""
    userinfo = url.partition("//")[2].rpartition("@")[0]
    found = [c for c in URL_DELIMITERS if c in userinfo]
    if found:
        said = ", ".join(f"{c!r} as {URL_DELIMITERS[c]}" for c in found)
        raise ImproperlyConfigured(
            f"{name}: the password (or user name) holds {' and '.join(map(repr, found))}, which "
            f"must be percent-encoded in a URL ({said}, and a '%' as %25), in "
            f"{masked(url)!r}"
        )


# What CELERY_BROKER_URL may name: a Redis server over TCP, over TLS, or on a unix socket (as
# the embedded broker is). kombu takes anything else for another transport (a URL without a
# scheme for AMQP: "Cannot connect to amqp://guest:**@127.0.0.1%3A56379:5672//"), and those are
# not supported (docs/broker.md). memory:// is kombu's in-process queue, for tests and benches.
BROKER_SCHEMES = ("redis", "rediss", "redis+socket", "memory")


def broker(name: str) -> str:
    """The broker URL in `name` ("" when unset), refused unless it names a Redis server."""
    url = os.environ.get(name, "")
    if not url:
        return ""
    scheme = url.partition("://")[0].lower() if "://" in url else ""
    if scheme not in BROKER_SCHEMES:
        bare = f" (it has no scheme: did you mean 'redis://{masked(url)}'?)" if not scheme else ""
        raise ImproperlyConfigured(
            f"{name} must name a Redis server: redis://HOST:PORT/DB, rediss://HOST:PORT/DB (TLS) "
            f"or redis+socket:///path/to/redis.sock; got {masked(url)!r}{bare}"
        )
    if scheme in ("redis", "rediss"):
        refuse_unencoded_userinfo(url, name)
    return url


def driver_installed() -> bool:
    """Whether PostgreSQL's driver imports, tried as Django tries it (psycopg 3, then 2)."""
    for driver in ("psycopg", "psycopg2"):
        try:
            importlib.import_module(driver)
        except ImportError:
            continue
        return True
    return False
