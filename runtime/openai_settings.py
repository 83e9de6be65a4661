"""The model client's settings, read and checked: what the hosts check at start
(`check_settings`) and what `OpenAIClient.from_env` builds a client from (runtime/openai_client.py).

Kept apart from the client so a host can check its settings without building one, and so each
check is made one way wherever it is made.
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Mapping
from urllib.parse import urlsplit

from runtime import errors, http_deadline, redact
from runtime.model import ModelError

LOCAL_URL = "http://127.0.0.1:8765/v1"  # where the managed local model server listens
# MINUTES_MODEL_TIMEOUT's bounds, in seconds. Below a second no model answers: 1e-300 had every
# call time out, waited out as an outage. Past a day the socket's timeout overflows.
TIMEOUT_RANGE = (1.0, 86_400.0)


@errors.replayable
class ModelConfigError(ModelError):
    """The client cannot be built (a setting is missing or malformed), or a call cannot be made
    as the settings have it (the server's certificate does not verify): asking again will not
    help."""


def in_the_clear(base_url: str) -> bool:
    """Whether requests to `base_url` cross a network unencrypted: http:// to a host that is
    not this machine (a local server, the usual plain-HTTP endpoint, keeps its traffic here)."""
    parts = urlsplit(base_url)
    if parts.scheme != "http":
        return False
    host = parts.hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return True  # a name: somewhere else


def base_url_of(environ: Mapping[str, str]) -> str:
    """MINUTES_MODEL_BASE_URL (or OPENAI_BASE_URL), without surrounding spaces or a trailing
    slash; "" when unset. One an HTTP request could not be made to is refused, naming the
    setting: it was taken, and every call to it failed as an endpoint that did not answer."""
    name = "MINUTES_MODEL_BASE_URL" if environ.get("MINUTES_MODEL_BASE_URL") else "OPENAI_BASE_URL"
    raw = (environ.get(name) or "").strip()
    if raw and (problem := http_deadline.url_problem(raw)) is not None:
        if problem == http_deadline.USERINFO:
            problem += "; an API key goes in MINUTES_MODEL_API_KEY"
        # Quoted without its user name and password: the message is shown and logged.
        raise ModelConfigError(f"{name} must {problem}, not {redact.without_userinfo(raw)!r}")
    return raw.rstrip("/")


def api_key_of(environ: Mapping[str, str]) -> str | None:
    """MINUTES_MODEL_API_KEY (or OPENAI_API_KEY) without surrounding spaces and line breaks (a
    key read from a file often ends in one); None when unset or blank. One no header could
    carry is refused, naming the setting and never quoting its value: http.client refused it as
    the first call was made, in a ValueError quoting the whole key, which no blanking caught
    (it is not a model's failure), so it was shown on the run's page and in its dead letter."""
    name = "MINUTES_MODEL_API_KEY" if environ.get("MINUTES_MODEL_API_KEY") else "OPENAI_API_KEY"
    key = (environ.get(name) or "").strip() or None
    if key is not None and (problem := key_problem(key)) is not None:
        raise ModelConfigError(f"{name} {problem}; its value is not shown")
    return key


def key_problem(key: str) -> str | None:
    """What stops `key` from being sent as the API key, said to follow its name, or None. An API
    key is printable ASCII: a line break inside it is a file of more than the key read into it,
    a character past ASCII a quotation mark or a dash an editor made of one."""
    what = http_deadline.header_problem(key)
    if what == "a line break":
        return (
            "holds a line break inside it, which no HTTP header may carry (a file of more than "
            "the key, read into it?)"
        )
    if what == "a control character":
        return "holds a control character, which no HTTP header may carry"
    if not key.isascii():  # outside Latin-1 it cannot be sent; inside, no key holds it
        return (
            "holds a character outside ASCII, which no API key holds (a quotation mark or a dash "
            "an editor made?)"
        )
    return None


def timeout_of(environ: Mapping[str, str]) -> float:
    """MINUTES_MODEL_TIMEOUT in seconds, from TIMEOUT_RANGE; 60 when unset or empty."""
    raw = environ.get("MINUTES_MODEL_TIMEOUT")
    if not raw:
        return 60.0
    try:
        timeout = float(raw)
    except ValueError:
        raise ModelConfigError(
            f"MINUTES_MODEL_TIMEOUT must be a number of seconds, not {raw!r}"
        ) from None
    least, most = TIMEOUT_RANGE
    if not (math.isfinite(timeout) and least <= timeout <= most):
        raise ModelConfigError(
            f"MINUTES_MODEL_TIMEOUT must be a number of seconds from {least:g} to {most:g}, "
            f"not {raw!r}"
        )
    return timeout


def check_settings(environ: Mapping[str, str]) -> None:
    """Raise ModelConfigError if a number, an address or the API key is malformed: hosts call
    this at start, so a typo is named there rather than in the first run that asks a model."""
    base_url_of(environ)
    api_key_of(environ)
    timeout_of(environ)
    max_tokens_of(environ)
    local_url_of(environ)


def local_url_of(environ: Mapping[str, str]) -> str:
    """MINUTES_LOCAL_MODEL_URL (LOCAL_URL when unset): an http(s) address with a host and a
    port whose path is /v1, where llama.cpp's server answers. Without /v1 the server answered
    every request 404, and `demo --model local` waited two minutes to say it did not answer."""
    raw = (environ.get("MINUTES_LOCAL_MODEL_URL") or "").strip()
    if not raw:
        return LOCAL_URL
    # The one check of an address first: urlsplit raised on a bracket left open.
    parts = urlsplit(raw) if http_deadline.url_problem(raw) is None else None
    if (
        parts is None
        or parts.port is None
        or parts.path.rstrip("/") != "/v1"
        or parts.query
        or parts.fragment
    ):
        raise ModelConfigError(
            "MINUTES_LOCAL_MODEL_URL must be the local model server's address with its port "
            f"and the path /v1, where its API answers (as {LOCAL_URL}), not "
            f"{redact.without_userinfo(raw)!r}"
        )
    return raw.rstrip("/")


def max_tokens_of(environ: Mapping[str, str]) -> int | None:
    """MINUTES_MODEL_MAX_TOKENS as a positive whole number; None when unset or empty."""
    raw = (environ.get("MINUTES_MODEL_MAX_TOKENS") or "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ModelConfigError(
            f"MINUTES_MODEL_MAX_TOKENS must be a positive whole number of tokens, not {raw!r}"
        )
    return value
