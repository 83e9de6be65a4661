"""What a worker logs of an exception it did not raise itself: without the secrets this host
was given, and on the lines it means.

An exception from a model client or a tool carries what they put in it: a header echoed back
(the API key), a URL with a user name and password, an agent's own text with line breaks that
would read as log lines of their own. `said` and `traced` pass each message through
runtime/redact.py's `for_log`, blanking the secrets in this host's settings and escaping
control characters; the traceback's frames are this code's, and are kept as they are.
"""

from __future__ import annotations

import traceback

from django.conf import settings

from runtime import redact
from runtime.otel import push


def secrets() -> list[str]:
    """The secrets in this host's settings an exception could quote: the model endpoint's API
    key, the trace collector's headers, Django's secret key."""
    keys = [settings.MODELS.get(name) for name in ("MINUTES_MODEL_API_KEY", "OPENAI_API_KEY")]
    found = [key for key in keys if key]
    found += push.secrets(settings.OTLP_HEADERS)
    found.append(settings.SECRET_KEY)
    return found


def line(text: str) -> str:
    """`text` fit for one log line, this host's secrets blanked."""
    return redact.for_log(text, secrets())


def recorded(text: str) -> str:
    """`text` fit for the journal (a step's failure, which the run page, its dead letter and
    its export show), this host's secrets blanked; its line breaks kept."""
    return redact.for_record(text, secrets())


def said(exc: BaseException) -> str:
    """`Type: message` of `exc`, fit for one log line."""
    return line(f"{type(exc).__name__}: {exc}")


def traced(exc: BaseException) -> str:
    """`exc`'s traceback as `log.exception` writes it, each message of its chain (its causes,
    the exceptions it was raised while handling) as `said` writes it: what the frames say is
    code, what the messages say is whatever the exception was given."""
    parts: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        frames = "".join(traceback.format_tb(current.__traceback__))
        parts.append(f"Traceback (most recent call last):\n{frames}{said(current)}")
        if current.__cause__ is not None:
            parts.append("The above was the direct cause of:")
            current = current.__cause__
        elif current.__context__ is not None and not current.__suppress_context__:
            parts.append("The above was raised while handling:")
            current = current.__context__
        else:
            current = None
    # Python prints the innermost first: the same reading order.
    return "\n".join(reversed(parts))
