"""A right-to-left override (and the other embeddings, overrides and isolates) in what agents
and people write is shown on the pages as its name, "[U+202E]", where it made "\u202eexe.live"
read "evil.exe"; the API's JSON and the export keep the character as it was written. So do the
pages' forms: what a box, a hidden field or a button sends back is left as it was written,
where a form drawn again sent "Fix [U+2067]...[U+2069] parser" for the task typed."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from dashboard.bidi import KEPT, shown
from journal_store.models import RunSummary
from services import runs
from tests.dashboard.conftest import run_of
from tests.dashboard.test_deciding_several_letters import three  # noqa: F401 (a fixture)
from tests.dashboard.test_fork_page import at

pytestmark = pytest.mark.django_db

SPOOF = "report\u202eexe.txt \u2067isolated\u2069"
SHALOM = "\u05e9\u05dc\u05d5\u05dd"  # a Hebrew word (ruff: its letters look Latin)
TYPED = f"Fix \u2067{SHALOM}\u2069 parser"
CONTROL = re.compile("[\u202a-\u202e\u2066-\u2069]")


@pytest.fixture
def spoofed(owner):
    """A run whose task holds an override and an isolate (as an agent or a person wrote it)."""
    return runs.start_run("repo-fix", "first-flight", by="owner", task=SPOOF)


class Fields(HTMLParser):
    """What each form of a page sends, by its action, as a browser reads the page: its boxes'
    text, its fields' values (a box ticked only when it is), the option chosen of a list."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.forms: dict[str, dict[str, list[str]]] = {}
        self.form: dict[str, list[str]] = {}
        self.box: tuple[str, list[str]] | None = None
        self.listing: tuple[str, list[str]] | None = None  # a select: its name, its options
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.form = self.forms.setdefault(a.get("action", ""), {})
        elif tag == "input" and a.get("name") and a.get("type") != "submit":
            if a.get("type") not in ("checkbox", "radio") or "checked" in a:
                self.form.setdefault(a["name"], []).append(a.get("value", ""))
        elif tag == "textarea":
            self.box = (a["name"], [])
        elif tag == "select":
            self.listing = (a["name"], [])
        elif tag == "option" and self.listing:
            self.listing[1].append(a.get("value", ""))
            if "selected" in a:
                self.form.setdefault(self.listing[0], []).append(a.get("value", ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "textarea" and self.box:
            text = "".join(self.box[1])
            self.form.setdefault(self.box[0], []).append(text.removeprefix("\n"))  # as read
            self.box = None
        elif tag == "select" and self.listing:
            name, options = self.listing
            if name not in self.form and options:  # none chosen: the first
                self.form[name] = [options[0]]
            self.listing = None

    def handle_data(self, data: str) -> None:
        if self.box:
            self.box[1].append(data)


def sent(page: bytes, action: str) -> dict[str, list[str]]:
    return Fields(page.decode()).forms[action]


def test_the_pages_name_them_where_they_stand(as_owner, spoofed):
    for address in (f"/runs/{spoofed}/", "/", f"/search?q=report&run={spoofed}"):
        page = as_owner.get(address)
        assert page.status_code == 200, address
        body = page.content.decode()
        assert "\u202e" not in body and "\u2067" not in body and "\u2069" not in body, address
    run_page = as_owner.get(f"/runs/{spoofed}/")
    assert "report[U+202E]exe.txt [U+2067]isolated[U+2069]" in run_page.content.decode()
    assert int(run_page["Content-Length"]) == len(run_page.content)  # the page as sent


def test_the_api_and_the_export_keep_what_was_written(as_owner, spoofed):
    assert as_owner.get(f"/api/runs/{spoofed}").json()["task"] == SPOOF
    exported = b"".join(as_owner.get(f"/api/runs/{spoofed}/export").streaming_content)
    assert SPOOF.encode() in exported or b"\\u202e" in exported


def test_every_such_character_is_named_and_nothing_else_changes():
    page = "a\u202ab\u202bc\u202cd\u202de\u202ef\u2066g\u2067h\u2068i\u2069j … — ←".encode()
    assert shown(page).decode() == (
        "a[U+202A]b[U+202B]c[U+202C]d[U+202D]e[U+202E]f[U+2066]g[U+2067]h[U+2068]i[U+2069]j … — ←"
    )
    assert shown(b"plain ascii") == b"plain ascii"


def test_what_a_page_sends_back_is_left_as_written_and_what_it_shows_is_named():
    o = "\u202e"
    page = (
        f'<!DOCTYPE html><title>t{o}</title><p title="a{o}b" class=x{o}>x{o}y</p>'
        f'<textarea name="task" rows=3>\nFix {o} it</textarea>'
        f'<input type=hidden name="q{o}" value="{o}x"><INPUT VALUE={o}y data-x="{o}">'
        f'<option value=\'{o}o\' label="{o}">{o}o</option><button name=remove value="{o}">'
        f'<a href="/s?q={o}" hx-get="/t?q={o}">{o}</a><form action="/f{o}"><!-- {o} -->'
        f'<input value = "{o}"/><input value="a"title="{o}"><input placeholder="{o}">'
        f"<TEXTAREA>a {o} </textareax> b {o} </TextArea > after {o}<textarea>{o} to the end"
    )
    n = "[U+202E]"
    assert shown(page.encode()).decode() == (
        f'<!DOCTYPE html><title>t{n}</title><p title="a{n}b" class=x{n}>x{n}y</p>'
        f'<textarea name="task" rows=3>\nFix {o} it</textarea>'
        f'<input type=hidden name="q{o}" value="{o}x"><INPUT VALUE={o}y data-x="{n}">'
        f'<option value=\'{o}o\' label="{n}">{n}o</option><button name=remove value="{o}">'
        f'<a href="/s?q={o}" hx-get="/t?q={o}">{n}</a><form action="/f{o}"><!-- {n} -->'
        f'<input value = "{o}"/><input value="a"title="{n}"><input placeholder="{n}">'
        f"<TEXTAREA>a {o} </textareax> b {o} </TextArea > after {n}<textarea>{o} to the end"
    )
    # A tag that never ends, quoted or not, is text: named, and read at once.
    for never in (f'<input value="{o}', f"<input value={o} " + "a " * 20_000):
        assert shown(never.encode()).decode() == never.replace(o, n)


def test_the_new_run_form_sends_the_task_as_it_was_typed(as_owner, settings):
    """Drawn from an address (a link, or htmx drawing it again for another team) or again after
    a refused post, the task box holds the task as typed, says that it holds such characters,
    and the run mended and started has that task."""
    settings.MODEL_BASE_URL = "http://127.0.0.1:9/v1"  # a task of one's own: a model's
    settings.MODELS = {"MINUTES_MODEL": "some-model"}
    asked = {"team": "repo-fix", "model": "endpoint", "task": TYPED}
    drawn = as_owner.get("/runs/new", asked, HTTP_HX_REQUEST="true")
    form = sent(drawn.content, "/runs/new")
    assert form["task"] == [TYPED]
    said = "This text holds U+2067, U+2069: characters that change the order text is shown in"
    assert said in drawn.content.decode()
    form["allowance"] = ["0"]  # refused: at least 1
    refused = as_owner.post("/runs/new", form)
    assert refused.status_code == 400
    form = sent(refused.content, "/runs/new")
    assert form["task"] == [TYPED] and said in refused.content.decode()
    form["allowance"] = [""]
    started = as_owner.post("/runs/new", form)
    assert started.status_code == 302, started.content.decode()[:2000]
    run_id = started.url.rstrip("/").rsplit("/", 1)[-1]
    assert RunSummary.objects.get(run_id=run_id).task == TYPED
    assert f"Fix [U+2067]{SHALOM}[U+2069] parser" in as_owner.get(started.url).content.decode()
    assert said not in as_owner.get("/runs/new", {"task": "Fix it"}).content.decode()


def test_the_search_boxes_send_the_words_as_typed(as_owner, spoofed):
    words = "report\u202e"
    page = as_owner.get("/search", {"q": words, "run": spoofed})
    assert sent(page.content, "/search") == {"q": [words], "run": [spoofed]}
    queue = as_owner.get("/review/dead-letters", {"q": words, "status": "open"})
    assert sent(queue.content, "/review/dead-letters") == {"q": [words], "status": ["open"]}


@pytest.mark.django_db
def test_a_reason_refused_is_drawn_again_as_typed(as_reviewer, three):  # noqa: F811
    reason = f"the tool is back \u2067{SHALOM}\u2069"
    answer = as_reviewer.post(
        "/review/dead-letters/decide", {"decision": "retry", "reason": reason}
    )
    assert answer.status_code == 400
    assert sent(answer.content, "/review/dead-letters/decide")["reason"] == [reason]


@pytest.mark.django_db
def test_a_fork_refused_keeps_the_message_as_typed(as_owner, owner):
    parent = run_of("premature-done")
    where = at(parent, "ToolReturned")
    message = "Keep it \u202esmall"
    answer = as_owner.post(f"/runs/{parent}/fork", {"at": where, "message": message})
    assert answer.status_code == 400 and "choose who the message is for" in answer.content.decode()
    assert sent(answer.content, "")["message"] == [message]


class KeptByParser(HTMLParser):
    """Where Python's HTML parser reads a page's textarea texts and its sent attributes (value,
    name, the addresses): what dashboard/bidi.py is to agree with on the pages."""

    SENT = {name.decode() for name in KEPT}

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.lines = [0, *(m.end() for m in re.finditer("\n", page))]
        self.kept: set[int] = set()
        self.since: int | None = None
        self.page = page
        self.feed(page)
        self.close()

    def here(self) -> int:
        line, column = self.getpos()
        return self.lines[line - 1] + column

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        start, raw = self.here(), self.get_starttag_text() or ""
        if tag == "textarea":
            self.since = start + len(raw)
        for name, value in attrs:
            if name in self.SENT and value and CONTROL.search(value):
                for quoted in re.finditer(rf'\s{re.escape(name)}="([^"]*)"', raw, re.I):
                    self.kept |= {
                        start + quoted.start(1) + m.start()
                        for m in CONTROL.finditer(quoted.group(1))
                    }

    def handle_endtag(self, tag: str) -> None:
        if tag == "textarea" and self.since is not None:
            self.kept |= {
                self.since + m.start()
                for m in CONTROL.finditer(self.page[self.since : self.here()])
            }
            self.since = None


def test_the_pages_are_read_as_pythons_html_parser_reads_them(as_owner, spoofed):
    """Every attribute value and every text of the pages with forms, an override put at its
    start: those the parser reads as a box's text or a sent attribute are left, the rest
    named, as the parser would have them."""
    for address in (
        f"/runs/{spoofed}/",
        "/runs/new?task=x",
        f"/search?q=report&run={spoofed}",
        "/review/dead-letters?q=x&team=repo-fix",
        "/",
    ):
        page = as_owner.get(address).content.decode()
        spiked = page.replace('="', '="\u202e').replace(">", ">\u202e")
        kept = KeptByParser(spiked).kept
        assert kept, address  # each has a field or a link
        expected = "".join(
            c if not CONTROL.match(c) or i in kept else f"[U+{ord(c):04X}]"
            for i, c in enumerate(spiked)
        )
        assert shown(spiked.encode()).decode() == expected, address
