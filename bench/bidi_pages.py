"""What naming the bidirectional controls costs a page (dashboard/bidi.py, `shown`).

Every HTML response goes through dashboard/bidi.py's middleware, which writes each embedding,
override and isolate (runtime/terminal.BIDI) as its name, "[U+202E]", where the page shows
text, and leaves what the page sends back as it was written (a textarea's text, `value`,
`name` and address attributes): for that it reads the page's markup, up to the last such
character. A page without one, the common case, costs one search of its bytes.

Real pages: a run is built for each of --sizes events as bench/long_run.py builds it (the solo
team's coder calling read_file turn after turn, in a scratch SQLite database), and its run page
and timeline tab are rendered through Django's test client as a signed-in user; so is the
new-run form (a form: a textarea and value attributes). Each page is taken as it was rendered,
and with a right-to-left override (U+202E) put into it:

    none            as rendered: no such character (the common case).
    at the top      one, at the start of the first text of the page (a whole page's skip link).
    at the end      one, at the start of the last text of the page: the whole page is read.
    in every text   a right-to-left isolate (U+2067) at the start of every piece of text that
                    is not blank, a textarea's too (kept as written).

and the new-run form drawn again (from its address) with a task typed with isolates in it, as
rendered: "form, typed isolates".

Figures, in turns within each round, medians of --repeats rounds, each a loop of calls long
enough to be read off the clock (ms a page):

    search          CONTROLS.findall over the page's bytes: a plain regex search of the whole
                    page, what looking for such characters costs at least, and all a page
                    without one cost before (the baseline; `.search` would stop at the first).
    before          the middleware's rewriting before 2026-12-05 (f60642d): one CONTROLS.sub
                    over the whole page, every such character named, forms' text too.
    shown           dashboard/bidi.shown as shipped: CPU time of this process, and wall time.
    html.parser     with --parser, the alternative: the page read whole by Python's
                    html.parser (the test's KeptByParser), where it holds such a character.

and the whole request of each rendered page, for scale: CPU time of Django's test client's
get, the database's included (SQLite, in the process), with bench/long_run.py's settings
(DEBUG on).

    PYTHONPATH=. .venv/bin/python bench/bidi_pages.py [--sizes 100,20000] [--repeats 15]
                                                      [--parser]
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.long_run import TURN_EVENTS, configure, grow, new_run, register_scenario  # noqa: E402

PARSER = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
)
PARSER.add_argument("--sizes", default="100,20000", help="events of each run, comma separated")
PARSER.add_argument("--repeats", type=int, default=15, help="rounds (medians)")
PARSER.add_argument("--parser", action="store_true", help="time html.parser's reading too")

RLO = "\u202e".encode()  # a right-to-left override
RLI = "\u2067".encode()  # a right-to-left isolate
TYPED = "Fix \u2067\u05e9\u05dc\u05d5\u05dd\u2069 parser"  # a Hebrew word between isolates
# A piece of text that is not blank: what follows a ">" up to the next "<".
TEXT = re.compile(rb">(?=[^<]*[^<\t\n\f\r ])")
SAMPLE_S = 0.002  # a figure's loop of calls lasts at least this long


def cases(page: bytes) -> dict[str, bytes]:
    """The page as rendered, and with controls put in it (see the module's doc)."""
    body = page.find(b"<body")
    texts = [found.end() for found in TEXT.finditer(page, max(body, 0))]
    top, end = texts[0], texts[-1]
    return {
        "none": page,
        "at the top": page[:top] + RLO + page[top:],
        "at the end": page[:end] + RLO + page[end:],
        "in every text": TEXT.sub(b">" + RLI, page),
    }


def loop_of(work: Callable[[], object]) -> Callable[[], object]:
    """`work` called enough times in a row to last SAMPLE_S; the count is the loop's `calls`."""
    started = time.perf_counter()
    work()
    once = max(time.perf_counter() - started, 1e-7)
    calls = max(1, round(SAMPLE_S / once))

    def loop() -> None:
        for _ in range(calls):
            work()

    loop.calls = calls  # type: ignore[attr-defined]
    return loop


def timed(works: dict[str, Callable[[], object]], repeats: int) -> dict[str, tuple[float, float]]:
    """Each work's median (CPU ms, wall ms) a call, the works taken in turns in each round."""
    loops = {name: loop_of(work) for name, work in works.items()}
    cpu: dict[str, list[float]] = {name: [] for name in works}
    wall: dict[str, list[float]] = {name: [] for name in works}
    for _ in range(repeats):
        for name, loop in loops.items():
            calls = loop.calls  # type: ignore[attr-defined]
            c, w = time.process_time(), time.perf_counter()
            loop()
            wall[name].append((time.perf_counter() - w) * 1000 / calls)
            cpu[name].append((time.process_time() - c) * 1000 / calls)
    return {name: (statistics.median(cpu[name]), statistics.median(wall[name])) for name in works}


def main() -> None:
    args = PARSER.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    configure(False)
    from django.contrib.auth import get_user_model
    from django.test import Client

    from dashboard import bidi

    kept_by_parser: Callable[[str], object] | None = None
    if args.parser:
        from tests.dashboard.test_bidi_controls_are_shown import KeptByParser

        kept_by_parser = KeptByParser

    def before(content: bytes) -> bytes:
        """dashboard/bidi.shown before 2026-12-05 (f60642d): every such character named."""
        return bidi.CONTROLS.sub(
            lambda found: f"[U+{ord(found.group().decode()):04X}]".encode(), content
        )

    register_scenario(max(sizes) // TURN_EVENTS + 200)
    user = get_user_model().objects.create_superuser("bench", "bench@example.com", "x" * 20)
    client = Client()
    client.force_login(user)
    urls: dict[str, tuple[str, dict[str, str]]] = {}
    for size in sizes:
        run_id = new_run(max(sizes) // TURN_EVENTS + 100)
        started = time.perf_counter()
        grow(run_id, size)
        print(f"built {size:,} events in {time.perf_counter() - started:.1f} s", flush=True)
        urls[f"run page, {size:,} events"] = (f"/runs/{run_id}/", {})
        urls[f"timeline tab, {size:,}"] = (f"/runs/{run_id}/tabs/timeline", {"HX-Request": "true"})
    urls["new-run form"] = ("/runs/new", {})
    typed = f"/runs/new?team=solo&task={quote(TYPED)}"
    urls["form, typed isolates"] = (typed, {})

    def get(url: str, headers: dict[str, str]) -> bytes:
        response = client.get(url, headers=headers)
        assert response.status_code == 200, (url, response.status_code)
        return bytes(response.content)

    pages: dict[str, dict[str, bytes]] = {}
    requests: dict[str, Callable[[], object]] = {}
    for name, (url, headers) in urls.items():
        page = get(url, headers)
        requests[name] = lambda url=url, headers=headers: get(url, headers)
        if name == "form, typed isolates":  # as rendered: the isolates kept in the task's box
            assert page.count(TYPED.encode()) == 1 and bidi.shown(page) == page, page
            pages[name] = {"as rendered": page}
            continue
        assert bidi.CONTROLS.search(page) is None, name
        pages[name] = cases(page)
        for case, content in pages[name].items():
            if case != "none":
                assert bidi.shown(content).count(b"[U+20") >= 1, (name, case)
    served = timed(requests, args.repeats)
    columns = ["search", "before", "shown", "shown/search", "shown wall"]
    if kept_by_parser is not None:
        columns.append("html.parser")
    print(
        f"\nms a page, medians of {args.repeats} rounds; CPU time of this process but 'shown wall'"
    )
    head = "".join(f"{c:>13}" for c in columns)
    print(f"{'page':<24}{'KB':>6}{'request':>9}  {'case':<14}{head}", flush=True)
    for name, by_case in pages.items():
        size_kb = len(next(iter(by_case.values()))) / 1024
        for n, (case, content) in enumerate(by_case.items()):
            works: dict[str, Callable[[], object]] = {
                "search": lambda c=content: bidi.CONTROLS.findall(c),
                "before": lambda c=content: before(c),
                "shown": lambda c=content: bidi.shown(c),
            }
            if kept_by_parser is not None and bidi.CONTROLS.search(content):
                works["html.parser"] = lambda c=content: kept_by_parser(c.decode())
            got = timed(works, args.repeats)
            row = "".join(f"{got[c][0]:>13.3f}" for c in ("search", "before", "shown"))
            row += f"{got['shown'][0] / got['search'][0]:>13.1f}{got['shown'][1]:>13.3f}"
            if "html.parser" in got:
                row += f"{got['html.parser'][0]:>13.2f}"
            lead = f"{name:<24}{size_kb:>6.1f}{served[name][0]:>9.2f}" if n == 0 else " " * 39
            print(f"{lead}  {case:<14}{row}", flush=True)


if __name__ == "__main__":
    main()
