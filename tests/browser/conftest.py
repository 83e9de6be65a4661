"""The dashboard in a real headless Chromium: fixtures for the browser tests.

The web process is pytest-django's `live_server` (a thread of this process, on the suite's
SQLite test database file). Runs that must really execute get a Celery worker subprocess on an
embedded broker of the test's own (config/broker.py: a Redis server on a unix socket); this
process's Celery app is pointed at the same socket, so the live server enqueues where the
worker listens. Runs that
only need to exist are flown in-process once per session (about a second) and imported.

Every page a test visits is saved as a full-page screenshot under var/screenshots/.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import connections

from config.broker import EmbeddedRedis
from config.celery import worker_command

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "var" / "screenshots"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
WIDE = {"width": 1280, "height": 900}
NARROW = {"width": 390, "height": 844}
TABLET = {"width": 768, "height": 1024}  # an iPad held upright
PASSWORD = "correct horse battery staple"
ASYNC_UNSAFE = "DJANGO_ALLOW_ASYNC_UNSAFE"
# Each tab of a run's page, and what shows that its content arrived.
TABS_SHOWN = {
    "timeline": "#events tr.event",
    "trace": "#tab svg.trace a.trace-bar",
    "threads": "#tab section.lane",
    "bill": "#tab svg.chart",
    "audit": "#tab tbody tr",
    "findings": "#tab",
    "metrics": "#tab table.metrics",
}

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")


# --- the browser ------------------------------------------------------------------------------


@pytest.fixture(scope="package")
def browser() -> Iterator[sync_api.Browser]:
    """One Chromium for the browser tests; gone, with what it needed, when they are done."""
    if not CHROMIUM.exists():
        pytest.skip("Chromium is not available here (apt-get install chromium)")
    SHOTS.mkdir(parents=True, exist_ok=True)
    # Playwright's sync API keeps an event loop running in this thread, so Django refuses the
    # (synchronous, safe) ORM calls that the tests and pytest-django make meanwhile. Allow them
    # for these tests only: the rest of the suite keeps Django's check.
    allowed = os.environ.get(ASYNC_UNSAFE)
    os.environ[ASYNC_UNSAFE] = "true"
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            try:
                yield browser
            finally:
                browser.close()
    finally:
        if allowed is None:
            os.environ.pop(ASYNC_UNSAFE, None)
        else:
            os.environ[ASYNC_UNSAFE] = allowed


@dataclass
class Watch:
    """What a page did that it should not: dialogs, script errors, CSP reports, and requests."""

    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def assert_clean(self) -> None:
        assert self.dialogs == [], f"dialogs fired: {self.dialogs}"
        assert self.errors == [], f"script errors or blocked content: {self.errors}"


# Say which element broke the Content-Security-Policy, not only that something did.
REPORT_CSP_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (e) => {
  const where = e.target && e.target.outerHTML ? e.target.outerHTML.slice(0, 300) : String(e.target);
  console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || "inline"}` +
                ` ${JSON.stringify(e.sample)} on ${where}`);
}, true);
"""


@pytest.fixture
def watch() -> Watch:
    return Watch()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        item.failed_call = report.failed
    return report


@pytest.fixture
def page(request, browser, live_server, watch) -> Iterator[sync_api.Page]:
    context = browser.new_context(
        base_url=live_server.url, viewport=WIDE, accept_downloads=True, locale="en-GB"
    )
    context.set_default_timeout(10_000)
    page = context.new_page()

    def on_dialog(dialog):
        watch.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def on_console(message):
        if message.type == "error":
            where = message.location
            watch.errors.append(f"{message.text} ({where.get('url')}:{where.get('lineNumber')})")

    page.add_init_script(REPORT_CSP_VIOLATIONS)
    page.on("dialog", on_dialog)
    page.on("console", on_console)
    page.on("pageerror", lambda exc: watch.errors.append(str(exc)))
    page.on("request", lambda request: watch.requests.append(request.url))
    try:
        yield page
        if getattr(request.node, "failed_call", False):
            with contextlib.suppress(sync_api.Error):
                shoot(page, f"FAILED-{request.node.name}")
    finally:
        context.close()


def shoot(page: sync_api.Page, name: str) -> None:
    """A full-page screenshot of what the page shows now: var/screenshots/<name>.png.

    caret="initial": hiding the caret leaves `style=""` on the focused input, which htmx then
    copies onto that input's replacement when it settles a swap, and the CSP blocks that.
    """
    page.screenshot(path=SHOTS / f"{name}.png", full_page=True, caret="initial")


def readme_shot(page: sync_api.Page, name: str, full_page: bool = False) -> None:
    """A picture for the README's tour or a docs/ page: var/screenshots/readme-<name>.png, of
    the window only unless the caption needs the whole page (docs/screenshots/<name>.png is its
    copy)."""
    page.screenshot(path=SHOTS / f"readme-{name}.png", full_page=full_page, caret="initial")


def settled(page: sync_api.Page) -> None:
    """Wait until htmx has finished swapping: content it swapped in keeps the class htmx-added
    until it settles (20 ms later), and only then does htmx attach that content's triggers. A
    change made before that (a person cannot be that quick; a test can) is lost."""
    page.wait_for_function(
        "() => !document.querySelector('.htmx-request, .htmx-swapping, .htmx-added')"
    )


def overflow(page: sync_api.Page) -> int:
    """How many pixels the document is wider than the viewport (0 when it fits)."""
    return int(page.evaluate("document.documentElement.scrollWidth - window.innerWidth"))


# Every element shown that is wider inside than it shows (a box that scrolls sideways, or content
# spilling out of it), and the document when it is wider than the window, each named with its
# overflow in pixels. An SVG's parts are left out: they have no box of their own to scroll; and
# so are the boxes `meant` selects (those made to scroll, on a phone) and what is inside them.
SIDEWAYS = """
(meant) => {
  const name = (e) => {
    const label = e.getAttribute('aria-label') || e.querySelector('caption')?.textContent;
    return e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
      [...e.classList].map((c) => '.' + c).join('') +
      (label ? ` (${label.trim().slice(0, 50)})` : '');
  };
  const found = [];
  const page = document.documentElement.scrollWidth - window.innerWidth;
  if (page > 1) found.push(`the document: ${page} px`);
  for (const e of document.querySelectorAll('body *')) {
    if (!e.getClientRects().length || !e.clientWidth || e.closest('svg')) continue;
    if (meant && e.closest(meant)) continue;
    const over = e.scrollWidth - e.clientWidth;
    if (over > 1) found.push(`${name(e)}: ${over} px`);
  }
  return found;
}
"""


def sideways(page: sync_api.Page, meant: str = "") -> list[str]:
    """What scrolls sideways on the page: the document, or any element inside it (a table in
    its box), named with by how many pixels; [] when everything fits. `meant`: a CSS selector
    of the boxes made to scroll sideways (a wide drawing in its box on a phone), left out."""
    return list(page.evaluate(SIDEWAYS, meant))


# --- people -----------------------------------------------------------------------------------


@pytest.fixture
def reviewer(transactional_db):
    """A reviewer (a superuser, so with dashboard.decide), who signs in through the form."""
    from django.contrib.auth.models import User

    return User.objects.create_superuser("rosa", "rosa@example.org", PASSWORD)


def log_in(page: sync_api.Page, username: str, password: str = PASSWORD) -> None:
    page.goto("/login")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()


@pytest.fixture
def signed_in(page, reviewer) -> sync_api.Page:
    log_in(page, reviewer.username)
    sync_api.expect(page.get_by_role("heading", name="Runs")).to_be_visible()
    return page


# --- runs that exist without a worker ---------------------------------------------------------


def import_text(text: str, name: str = "journal.jsonl"):
    """Import JSONL text into the store (as `manage.py import` would), then catch up."""
    from journal_store import projection
    from journal_store.transfer import import_journal

    data = text.encode()
    report = import_journal(io.BytesIO(data), name=name, size=len(data))
    projection.catch_up()
    return report


def renamed(text: str, old: str, new: str, edit: Callable[[dict], None] | None = None) -> str:
    """The journal moved to run `new`, every event with a fresh id; `edit` may change each."""
    lines = []
    for raw in text.splitlines():
        event = json.loads(raw)
        event["id"] = uuid.uuid4().hex
        event["run_id"] = new
        if event.get("stream") == f"run-{old}":
            event["stream"] = f"run-{new}"
        if edit:
            edit(event)
        lines.append(json.dumps(event, ensure_ascii=False))
    return "\n".join(lines) + "\n"


@pytest.fixture
def flown_run(fly_team, transactional_db) -> str:
    """A finished repo-fix first-flight run in the store (flown once per session, imported)."""
    flown = fly_team("first-flight")
    import_text(flown.path.read_text(), name=flown.path.name)
    return flown.run_id


@pytest.fixture
def journal_of(fly_team) -> Callable[[str], str]:
    """The first-flight journal's text, moved to the given run id."""

    def journal(run_id: str, edit: Callable[[dict], None] | None = None) -> str:
        flown = fly_team("first-flight")
        return renamed(flown.path.read_text(), flown.run_id, run_id, edit)

    return journal


# --- a real worker ----------------------------------------------------------------------------


@dataclass
class Worker:
    """A Celery worker on the test's own broker and the test database, started on demand."""

    home: Path
    broker: str
    proc: subprocess.Popen | None = None

    @property
    def log(self) -> Path:
        return self.home.parent / "worker.log"

    def env(self) -> dict[str, str]:
        env = {
            **os.environ,
            "DATABASE_URL": f"sqlite:///{connections['default'].settings_dict['NAME']}",
            "MINUTES_HOME": str(self.home),
            "CELERY_BROKER_URL": self.broker,
            "PYTHONUNBUFFERED": "1",
        }
        env.pop(ASYNC_UNSAFE, None)
        return env

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [*worker_command(1), "--without-heartbeat"],
            cwd=ROOT,
            env=self.env(),
            start_new_session=True,
            stdout=self.log.open("wb"),
            stderr=subprocess.STDOUT,
        )

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        # SIGKILL: the run is over and nothing is in flight, and Celery's own warm shutdown
        # takes seconds. The worker has its own process group.
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(5)

    def logs(self) -> str:
        return self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""


@pytest.fixture
def worker(tmp_path, transactional_db) -> Iterator[Worker]:
    """A worker, not yet started; the live server enqueues into its broker meanwhile."""
    from tests.tasks.conftest import use_broker

    home = tmp_path / "home"
    # A short folder of its own: a unix socket's path must stay under 108 bytes.
    folder = Path(tempfile.mkdtemp(prefix="minutes-broker-"))
    broker = EmbeddedRedis(folder)
    broker.start()
    use_broker(broker.url, {"visibility_timeout": 60})
    worker = Worker(home, broker.url)
    try:
        yield worker
    finally:
        worker.stop()
        broker.stop()
        shutil.rmtree(folder, ignore_errors=True)
        use_broker(
            django_settings.CELERY_BROKER_URL, django_settings.CELERY_BROKER_TRANSPORT_OPTIONS
        )


def parked_letter(run_id: str) -> str:
    """A dead letter of run `run_id` waiting for a person, projected; its id."""
    from journal_store import projection
    from journal_store.journal import DjangoJournal
    from runtime.events import DeadLettered

    letter_id = f"{run_id}:1"
    letter = DeadLettered(
        run_id=run_id, letter_id=letter_id, reason="no reply by turn 9", attempts=2
    )
    DjangoJournal().append(f"run-{run_id}", [letter], 0)
    projection.catch_up()
    return letter_id
