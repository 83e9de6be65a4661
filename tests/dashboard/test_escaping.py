"""Agent output is untrusted: it is escaped, kept inside hx-disable containers, and never
becomes a script, a handler, an htmx trigger or a javascript: link."""

from __future__ import annotations

import io
import json
from html.parser import HTMLParser

import pytest

from journal_store import projection
from journal_store.transfer import import_journal

pytestmark = pytest.mark.django_db

HOSTILE = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    '<a href="javascript:alert(1)">x</a>',
    '<div hx-get="/api/runs" hx-trigger="load">x</div>',
]


def hostile_run() -> str:
    text = " ".join(HOSTILE)
    lines = [
        {
            "kind": "TeamStarted",
            "run_id": "r-hostile",
            "team": "repo-fix",
            "scenario": "first-flight",
            "task": text,
            "config": {"allowance": 100},
        },
        {
            "kind": "MessageSent",
            "run_id": "r-hostile",
            "task_id": "T1",
            "message_id": "m-1",
            "performative": "request",
            "sender": "orchestrator",
            "recipient": "coder",
            "payload": {"brief": text},
        },
        {"kind": "RunStarted", "run_id": "r-hostile", "agent": "coder", "task": text},
        {
            "kind": "ModelResponded",
            "v": 2,
            "run_id": "r-hostile",
            "agent": "coder",
            "text": text,
            "tool_calls": [],
            "usage": {"total": 5},
        },
        {
            "kind": "MessageSent",
            "run_id": "r-hostile",
            "task_id": "T1",
            "message_id": "m-2",
            "performative": "reject",
            "sender": "reviewer",
            "recipient": "orchestrator",
            "payload": {"reasons": text},
        },
        {"kind": "TeamFinished", "run_id": "r-hostile", "status": "failed", "reason": text},
    ]
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    import_journal(io.BytesIO(data))
    projection.catch_up()
    return "r-hostile"


class Elements(HTMLParser):
    """Every element of a page, with its attributes, and the hx-disable ancestry of text."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.stack: list[bool] = []
        self.unguarded: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        if tag not in ("meta", "link", "input", "br", "img", "hr", "rect"):
            self.stack.append("hx-disable" in dict(attrs))

    def handle_endtag(self, tag: str) -> None:
        if tag not in ("meta", "link", "input", "br", "img", "hr", "rect") and self.stack:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        if "<script>alert(1)" in data and not any(self.stack):
            self.unguarded.append(data[:80])


@pytest.mark.parametrize(
    "url",
    [
        "/",
        "/runs/r-hostile/",
        "/runs/r-hostile/?tab=threads",
        "/runs/r-hostile/?tab=audit",
        "/runs/r-hostile/?tab=timeline",
        "/runs/r-hostile/?tab=trace",
    ],
)
def test_hostile_output_renders_inert(as_owner, url):
    hostile_run()
    page = as_owner.get(url).content.decode()
    parsed = Elements()
    parsed.feed(page)
    scripts = [attrs.get("src") for tag, attrs in parsed.elements if tag == "script"]
    assert all(src and src.startswith("/static/") for src in scripts)  # only our own htmx
    for tag, attrs in parsed.elements:
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        assert not (attrs.get("href") or "").strip().lower().startswith("javascript:"), attrs
        assert attrs.get("hx-get") != "/api/runs", attrs
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # shown as text
    assert parsed.unguarded == []  # and only inside hx-disable containers


def test_the_page_forbids_inline_script_and_eval(as_owner):
    hostile_run()
    response = as_owner.get("/runs/r-hostile/")
    policy = response["Content-Security-Policy"]
    assert (
        "script-src 'self'" in policy
        and "unsafe-eval" not in policy
        and "unsafe-inline" not in policy
    )
    assert '"allowEval": false' in response.content.decode()
