"""A ModelClient for the OpenAI-compatible chat-completions protocol.

`OpenAIClient` POSTs to `{base_url}/chat/completions`, the shape spoken by hosted APIs and by
local servers (Ollama, vLLM, llama.cpp server). It translates our ChatMessage/ToolSpec into the
wire format and the reply back into a ModelResponse (`runtime.openai_wire`), retries what is
worth retrying (429, 5xx, timeouts, dropped connections, a gateway's 200 that is a page or an
error object) with jittered exponential backoff, and
turns everything else into a ModelError subclass with a message a person can act on. A
transient failure that outlasts the retries is EndpointDown (runtime/model.py): an outage, which
parks the run rather than ending it.

HTTP is stdlib only and confined to `OpenAIClient._post`, the one outbound seam, which asks
runtime/http_deadline.py to carry the request; a call ends by its timeout (or the run's ceiling,
the sooner), however slowly the server writes.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from runtime import errors, flat, http_deadline, openai_reply, redact
from runtime.model import (
    ChatMessage,
    EndpointDown,
    ModelClient,
    ModelError,
    ModelResponse,
    ToolSpec,
)
from runtime.openai_key import blanked, kept_out, quoted
from runtime.openai_settings import (
    ModelConfigError,
    api_key_of,
    base_url_of,
    in_the_clear,
    key_problem,
    local_url_of,
    max_tokens_of,
    timeout_of,
)
from runtime.openai_wire import (
    ModelProtocolError,
    add_usage,
    named_tool,
    parse_served,
    recordable,
    snippet,
    wire_message,
    wire_tool,
)
from runtime.tool_names import wire_name

CHAT_PATH = "/chat/completions"
# The system message a pick then force step opens with when its window has none.
TOOLS_OPENING = "You can call the tools listed."
OLD_BACKEND_NAMES = {"openai": "endpoint"}  # what journals recorded before the rename
# How the GenAI semantic conventions name the provider of a server that speaks this protocol
# (`gen_ai.provider.name`), whoever runs it: a trace names the protocol, not our backend.
GENAI_PROVIDER = "openai"
# The local model's completion limit when MINUTES_MODEL_MAX_TOKENS is unset. Without one its
# server may write until its context (8,192 tokens) is full: at the 67-77 tokens/s its log
# shows on 2 cores, about two minutes for one reply. Its replies in the suite's slowest test
# (a tool's name, a tool call's arguments, a short verdict) held at most 152 tokens.
LOCAL_MAX_TOKENS = 512
# The most of a reply's body read. No model writes this much in one reply (the largest
# completion limits, about 128k tokens, are some 512 KB of text); what it becomes in the journal
# is bounded apart (openai_wire.recordable), as it may be larger than it was on the wire.
MAX_REPLY_BYTES = 1024 * 1024
LOCATION_CHARS = 300  # of a redirect's Location, how much to quote
GZIP_MAGIC = b"\x1f\x8b"  # how a gzip stream begins (RFC 1952)
log = logging.getLogger(__name__)
WARNED: set[str] = set()  # the plain-HTTP endpoints this process has warned about


@errors.replayable
class ModelHTTPError(ModelError):
    """The server refused the request, or kept failing until the retries ran out.

    `status` is the last HTTP status seen (None when no answer arrived: a timeout or a
    connection error); `attempts` is how many requests were made.
    """

    def __init__(self, message: str, status: int | None = None, attempts: int = 1) -> None:
        super().__init__(message)
        self.status = status
        self.attempts = attempts


class _Retryable(Exception):
    """One attempt failed in a way worth repeating (429, 5xx, timeout, connection trouble)."""

    def __init__(
        self,
        detail: str,
        status: int | None = None,
        retry_after: float | None = None,
        timed_out: bool = False,
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.status = status
        self.retry_after = retry_after
        self.timed_out = timed_out


def opened(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """A pick then force step's window, opening with a system message (TOOLS_OPENING where it
    has none), as both of its requests send it.

    Some local chat templates put the tool list into the system message, and drop it when there
    is none: the model would be asked to call tools it never saw. The pick is sent it too, so
    that the two requests open alike: a server that reuses the prefix its last prompt shares
    (llama.cpp's) read the window again from the first token, where the forced request alone
    had one.
    """
    if any(m.role == "system" for m in messages):
        return list(messages)
    return [ChatMessage(role="system", content=TOOLS_OPENING), *messages]


class OpenAIClient(ModelClient):
    """Asks an OpenAI-compatible server for chat completions.

    `sleep` and `rng` are injectable so tests can observe backoff without waiting for it.
    `temperature`, `tool_choice` and `max_tokens` (the most tokens one reply may hold) are sent
    only when set, so the server's defaults apply otherwise.

    `pick_then_force` is for small local models that call a tool reliably only when the
    request names it (tool_choice "auto" mostly gets prose back): each turn first asks, in
    plain text, which tool comes next, then asks again with that tool forced, for its
    arguments. Two requests, one response; the usage is the sum of both. A reply that names
    no tool is the model's answer as text, with no tool call.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        timeout: float = 60.0,
        max_retries: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 20.0,
        temperature: float | None = None,
        tool_choice: str | None = None,
        max_tokens: int | None = None,
        pick_then_force: bool = False,
        sleep: Callable[[float], object] = time.sleep,
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if (problem := http_deadline.url_problem(base_url)) is not None:
            # Else found only as the first call was made, and said as an endpoint that did
            # not answer: waited out as an outage, a quarter of an hour on the workers.
            shown = redact.without_userinfo(base_url)
            raise ModelConfigError(f"the model base URL must {problem}, not {shown!r}")
        if not model:
            raise ModelConfigError("no model name given")
        if api_key and (problem := key_problem(api_key)) is not None:
            raise ModelConfigError(f"the API key {problem}; its value is not shown")
        if timeout <= 0:
            raise ModelConfigError(f"the timeout must be positive, not {timeout}")
        if max_retries < 0:
            raise ModelConfigError(f"max_retries must be 0 or more, not {max_retries}")
        if max_tokens is not None and (isinstance(max_tokens, bool) or max_tokens < 1):
            raise ModelConfigError(f"max_tokens must be a positive number, not {max_tokens!r}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key or None
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.temperature = temperature
        self.tool_choice = tool_choice
        self.max_tokens = max_tokens
        self.pick_then_force = pick_then_force
        self.sleep = sleep
        self.rng = rng if rng is not None else random.Random()
        self.clock = clock
        self.deadline: float | None = None  # the run's ceiling, as clock() tells time
        self.url_setting = "MINUTES_MODEL_BASE_URL (or OPENAI_BASE_URL)"  # where base_url is set

    @classmethod
    def local(cls, environ: Mapping[str, str]) -> OpenAIClient:
        """The managed local model server (MINUTES_LOCAL_MODEL_URL in `environ`, the settings its
        host read), with its quirks handled."""
        base_url = local_url_of(environ)
        max_tokens = max_tokens_of(environ) or LOCAL_MAX_TOKENS
        client = cls(
            base_url,
            "local",
            timeout=300.0,
            max_retries=2,
            max_tokens=max_tokens,
            pick_then_force=True,
        )
        client.url_setting = "MINUTES_LOCAL_MODEL_URL"
        return client

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> OpenAIClient:
        """Build a client from MINUTES_MODEL_* settings, falling back to OPENAI_*: `environ` is
        what the host read (the command line its environment, the workers Django's settings).

        MINUTES_MODEL_BASE_URL (or OPENAI_BASE_URL) and MINUTES_MODEL (or OPENAI_MODEL) are
        required; MINUTES_MODEL_API_KEY (or OPENAI_API_KEY) is optional because local servers
        need none; MINUTES_MODEL_TIMEOUT is seconds as a number; MINUTES_MODEL_MAX_TOKENS caps
        each reply (unset: the server's own limit). Empty values count as unset.
        """
        base_url = base_url_of(environ)
        if not base_url:
            raise ModelConfigError(
                "MINUTES_MODEL_BASE_URL is not set (nor OPENAI_BASE_URL): the server's URL, "
                "e.g. http://localhost:11434/v1"
            )
        model = environ.get("MINUTES_MODEL") or environ.get("OPENAI_MODEL")
        if not model:
            raise ModelConfigError("MINUTES_MODEL is not set (nor OPENAI_MODEL): the model name")
        api_key = api_key_of(environ)
        if api_key and in_the_clear(base_url) and base_url not in WARNED:
            WARNED.add(base_url)  # once a process: every step builds its client again
            log.warning(
                "the model API key is sent in plain text to %s (http://, not on this machine): "
                "anyone on the way can read it; use https:// unless the network is yours",
                base_url,
            )
        return cls(
            base_url,
            model,
            api_key,
            timeout=timeout_of(environ),
            max_tokens=max_tokens_of(environ),
        )

    # --- the ModelClient interface -------------------------------------------------------------

    def complete(self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ModelResponse:
        """Send the window and the tools; the model's text, tool calls and usage."""
        try:
            if self.pick_then_force and tools:
                response = self._pick_then_force(messages, tools)
            else:
                response = self._ask(messages, tools, self.tool_choice)
            # The reply is journalled as it is returned: a gateway may echo our key in it.
            return recordable(kept_out(response, self.api_key))
        except ModelProtocolError as error:
            # Its words are about the body alone: say whose body, as an HTTP failure does.
            error.args = (f"POST {self.base_url}{CHAT_PATH} (model {self.model!r}): {error}",)
            error.args = tuple(self.scrub(a) if isinstance(a, str) else a for a in error.args)
            raise
        except (ModelError, EndpointDown) as error:
            # A failure's message is journalled for good, shown on pages and exported, and it
            # quotes the server's answer, which may echo our key ("Incorrect API key provided:
            # sk-..."): the key never leaves in it.
            error.args = tuple(self.scrub(a) if isinstance(a, str) else a for a in error.args)
            raise

    def scrub(self, text: str) -> str:
        """`text` with the API key blanked out wherever it appears (runtime/openai_key.py)."""
        return blanked(text, self.api_key)

    def _ask(
        self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec], tool_choice: Any
    ) -> ModelResponse:
        wire = [wire_message(m) for m in messages]
        body: dict[str, Any] = {"model": self.model, "messages": wire, "stream": False}
        if tools:
            # Some servers reject an empty "tools" array, so none means no key at all.
            body["tools"] = [wire_tool(t) for t in tools]
        if tool_choice is not None:
            body["tool_choice"] = tool_choice
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.max_tokens is not None:
            # "max_tokens", not OpenAI's newer "max_completion_tokens": the name every
            # compatible server reads (llama.cpp, vLLM, Ollama), as do OpenAI's chat models
            # (its reasoning models refuse it: leave the setting unset for those).
            body["max_tokens"] = self.max_tokens
        reply = self._post_with_retries(CHAT_PATH, body)
        # A reply that cannot be used fails with what it cost: it was paid for all the same.
        text, calls, usage = openai_reply.read(reply, messages, tools, self.max_tokens)
        served = parse_served(reply, self.base_url, self.model)
        return ModelResponse(text=text, tool_calls=calls, usage=usage, served=served)

    def _pick_then_force(
        self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]
    ) -> ModelResponse:
        names = [t["name"] for t in tools]
        messages = opened(messages)
        question = ChatMessage(
            role="user",
            content="Which one tool do you call next? Answer with its name only, one of: "
            + ", ".join(names),
        )
        pick = self._ask([*messages, question], (), None)
        name = named_tool(pick.text, names)
        if name is None:
            return pick
        try:
            forced = self._ask(
                messages, tools, {"type": "function", "function": {"name": wire_name(name)}}
            )
        except ModelError as error:  # the pick was paid for too: the call cost both
            error.usage = add_usage(pick.usage, error.usage) if error.usage else pick.usage
            raise
        except EndpointDown as error:  # an outage after the pick: the pick was still paid for
            error.usage = pick.usage
            raise
        # The server may still answer with another tool or none; keep only the forced one.
        calls = [c for c in forced.tool_calls if c.name == name][:1]
        return ModelResponse(
            text=forced.text if calls else pick.text,
            tool_calls=calls,
            usage=add_usage(pick.usage, forced.usage),
            served=forced.served if calls else pick.served,
        )

    # --- HTTP ----------------------------------------------------------------------------------

    def give_up_at(self, when: float | None) -> None:
        self.deadline = when

    def _post_with_retries(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """`_post`, repeated on transient failures with exponential backoff and full jitter,
        and never waiting past the run's ceiling (`deadline`)."""
        attempts = self.max_retries + 1
        for attempt in range(attempts):
            timeout = self.timeout
            if self.deadline is not None:
                # At most what is left: the session ends the run at its next turn boundary.
                timeout = min(timeout, max(self.deadline - self.clock(), 0.001))
            try:
                return self._post(path, body, timeout)
            except _Retryable as failure:
                made = attempt + 1
                # The run's ceiling cut the wait short: that is the run's end, not an outage.
                ceiling = failure.timed_out and timeout < self.timeout
                if made == attempts:
                    why = ""
                elif failure.retry_after is not None and failure.retry_after > self.max_backoff:
                    # Coming back sooner than asked only earns another refusal, and spends
                    # the retries (and the vendor's patience) that a shorter wait would use.
                    why = (
                        f": the server asked to wait {failure.retry_after:g} s (Retry-After), "
                        f"longer than this client waits ({self.max_backoff:g} s)"
                    )
                else:
                    delay = self._delay(attempt, failure.retry_after)
                    if self.deadline is None or self.clock() + delay < self.deadline:
                        self.sleep(delay)
                        continue
                    why = ": the run's wall-clock ceiling falls before the next try"
                    ceiling = True
                if ceiling and not why:
                    # The last wait was cut to what the run had left: say so, or the reason
                    # read as a model that failed (MINUTES_MODEL_TIMEOUT is not what ran out).
                    why = (
                        f": the run's wall-clock ceiling left {timeout:.3g} s for the last try "
                        f"(of {self.timeout:g} s)"
                    )
                said = (
                    f"gave up on POST {self.base_url}{path} after {made} attempt"
                    f"{'' if made == 1 else 's'}{why}; the last failed with {failure.detail}"
                )
                if ceiling:
                    raise ModelHTTPError(said, status=failure.status, attempts=made) from None
                raise EndpointDown(
                    said, status=failure.status, attempts=made, retry_after=failure.retry_after
                ) from None
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _hint(self, status: int) -> str:
        """What to check for a refusal a setting can cause, before the server's own words:
        vendors word these differently, and a bare 404 says nothing at all."""
        if status in (401, 403):
            if not self.api_key:
                return " (no API key was sent: set MINUTES_MODEL_API_KEY, or OPENAI_API_KEY)"
            return " (the API key was not accepted: check MINUTES_MODEL_API_KEY, or OPENAI_API_KEY)"
        if status == 404:
            return (
                f" (check the model name {self.model!r}, MINUTES_MODEL, and that the base URL is "
                "the API's root, which usually ends in /v1)"
            )
        return ""

    def _redirected(self, url: str, moved: http_deadline.Redirected) -> str:
        """What a redirect means for the settings: the API is elsewhere, so say where."""
        said = f"POST {url} was redirected with HTTP {moved.status}"
        if moved.location is None:
            return f"{said} (to no Location), which is not followed: check {self.url_setting}"
        location = redact.without_userinfo(moved.location)  # a URL is never quoted with one
        parts = urlsplit(location)
        if parts.path.endswith(CHAT_PATH) and not parts.query and not parts.fragment:
            # The whole API moved: its root is the address without the path this client adds.
            root = snippet(location[: -len(CHAT_PATH)][:LOCATION_CHARS])
        else:
            root = f"its root (the address before {CHAT_PATH})"
        return (
            f"{said} to {snippet(location[:LOCATION_CHARS])}, which is not followed (the "
            f"request and its API key would go where no setting says): if the API is there, set "
            f"{self.url_setting} to {root}"
        )

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number `attempt + 1`."""
        if retry_after is not None:
            # The server knows when it will take us again; trust it, within our own patience.
            return min(self.max_backoff, retry_after)
        # Full jitter: clients that failed together should not all come back together.
        return self.rng.uniform(0, min(self.max_backoff, self.backoff * 2**attempt))

    def _post(self, path: str, body: dict[str, Any], timeout: float) -> dict[str, Any]:
        """POST `body` as JSON to base_url + path and return the reply's JSON object.

        The one place this module touches the network. One attempt only: transient failures
        raise _Retryable for the caller's retry loop (a gateway's 200 that is a page or an error
        object too: _gateway_error); other 4xx raise ModelHTTPError; a 2xx whose body is not a
        JSON object raises ModelProtocolError.
        """
        url = self.base_url + path
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        data = json.dumps(body).encode("utf-8")
        try:
            raw = http_deadline.post(url, data, headers, timeout, MAX_REPLY_BYTES)
        except http_deadline.Redirected as moved:
            # Not followed (http_deadline): the address is the setting's to change, not ours.
            raise ModelHTTPError(self._redirected(url, moved), moved.status) from None
        except http_deadline.Refused as refused:
            said = quoted(refused.body, self.api_key)
            detail = f"HTTP {refused.status}: {said}"
            if refused.status == 429 or refused.status >= 500:
                raise _Retryable(detail, refused.status, refused.retry_after) from None
            raise ModelHTTPError(
                f"POST {url} was refused with HTTP {refused.status}{self._hint(refused.status)}: "
                f"{said}",
                refused.status,
            ) from None
        except http_deadline.Unresolved as unresolved:
            # Within the same deadline as the connect: a hanging resolver is an outage too.
            raise _Retryable(
                f"a timeout (the address of {unresolved.host} was not looked up within "
                f"{timeout:.3g} s: the name resolver did not answer)",
                timed_out=True,
            ) from None
        except TimeoutError:
            # The whole call, not one read: a server writing a byte at a time runs out too.
            raise _Retryable(
                f"a timeout (no answer within {timeout:.3g} s)", timed_out=True
            ) from None
        except http_deadline.Untrusted as untrusted:
            raise ModelConfigError(
                f"POST {url} was not sent: the certificate of {untrusted.host} did not verify "
                f"({untrusted.reason}). A setting, not an outage, so it is not tried again: "
                "where the server's certificate is signed by an authority of your own, set "
                f"SSL_CERT_FILE to a file holding that authority's; else check {self.url_setting}"
            ) from None
        except http_deadline.Unreachable as trouble:
            raise _Retryable(f"a connection error ({trouble})") from None
        except http_deadline.Unsendable as unsendable:
            # Nothing was sent and no later try goes otherwise: not an outage to wait out.
            setting = "MINUTES_MODEL_API_KEY" if unsendable.header else self.url_setting
            raise ModelConfigError(
                f"POST {url} was not sent: {unsendable}; check {setting}"
            ) from None
        if len(raw) > MAX_REPLY_BYTES:
            raise openai_reply.too_large(raw, data, MAX_REPLY_BYTES)
        if raw.startswith(GZIP_MAGIC):
            # Quoted, it read as escaped binary. Asked again, the same proxy compresses again.
            raise ModelProtocolError(
                "the reply is compressed (Content-Encoding: gzip), which this client neither "
                "asks for nor reads: something on the way compresses it; have it pass the reply "
                "as the server wrote it"
            )
        try:
            decoded = json.loads(raw)
            if flat.may_hold_surrogates(raw):
                decoded = flat.mended(decoded)  # half an emoji: no event could hold it
        except (json.JSONDecodeError, UnicodeDecodeError):
            if raw.lstrip()[:1] == b"<":  # a page (HTML, XML): a gateway's, see _gateway_error
                said = quoted(raw, self.api_key)
                raise _Retryable(f"HTTP 200 with a page, not the API's JSON: {said}", 200) from None
            raise ModelProtocolError(
                f"the reply is not JSON: {snippet(raw) or '(empty body)'}"
            ) from None
        except ValueError:  # JSON, but a whole number in it has more digits than Python reads
            raise ModelProtocolError(
                f"the reply is not JSON we can read ({flat.NUMBER_TOO_LONG} in it): "
                f"{snippet(raw[:1000])}"
            ) from None
        except RecursionError:
            raise ModelProtocolError(
                f"the reply is nested too deeply for JSON to read: {snippet(raw[:1000])}"
            ) from None
        if not isinstance(decoded, dict):
            raise ModelProtocolError(
                f"the reply is not a JSON object but {type(decoded).__name__}: {snippet(raw)}"
            )
        if "choices" not in decoded and decoded.get("error"):
            raise self._gateway_error(url, decoded["error"])
        return decoded

    def _gateway_error(self, url: str, error: Any) -> Exception:
        """What a 200 carrying an error object instead of choices means.

        A 200 that is not the API's answer but an error object or a page (_post) is what a
        gateway, load balancer or proxy in front of the server says when the server behind it
        failed or is not up yet: a gateway answers an upstream's failure mid-answer as 200
        {"error": {"code": 502, ...}}, a proxy serves its maintenance page with 200. Taken as
        the model's failure, it ended the run for good. Taken as transient, as a 502 is, the
        worst case (a gateway that always answers so) costs the outage's wait before the dead
        letter, whose reason quotes the answer, and a retry there once it is fixed takes the run
        on from where it was. An error whose code is a refusal (a 4xx, but 408 and 429) is what
        that refusal would be: the run's end, with its hint.
        """
        code = error.get("code", error.get("status")) if isinstance(error, dict) else None
        if isinstance(code, str) and code.isascii() and code.isdecimal():
            code = int(code)
        if isinstance(code, bool) or not isinstance(code, int) or not 100 <= code <= 599:
            code = None
        said = quoted(json.dumps(error, ensure_ascii=False).encode(), self.api_key)
        if code is not None and 400 <= code < 500 and code not in (408, 429):
            return ModelHTTPError(
                f"POST {url} was answered HTTP 200 with an error of code {code}"
                f"{self._hint(code)}: {said}",
                code,
            )
        of = f" of code {code}" if code is not None else ""
        return _Retryable(f"HTTP 200 with an error{of}: {said}", 200)
