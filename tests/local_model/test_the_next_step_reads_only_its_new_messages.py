"""The local model server reads in, of a step's forced call, only what its window gained.

A pick then force step's two prompts part at the end of the system text: llama-cpp-python's
chatml-function-calling template writes the tool list into the forced request's system message
and not into the pick's. A server that remembers its last prompt only read the whole window
again at every request; with its prompt cache (services/local_model.py) a forced call starts
from the state the step before's forced call left.
"""

from __future__ import annotations

import json
import re
import urllib.request

import pytest

pytestmark = pytest.mark.slow

TOOL = {
    "type": "function",
    "function": {
        "name": "lookup_order",
        "description": "Look up an order by its id.",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}},
            "required": ["order_id"],
        },
    },
}
FORCED = {"type": "function", "function": {"name": "lookup_order"}}
READ_IN = re.compile(r"prompt eval time = .*/\s*(\d+) tokens")


def ask(base: str, messages: list[dict], forced: bool) -> int:
    """POST one request; the prompt tokens it held."""
    body: dict = {"model": "local", "messages": messages, "max_tokens": 8, "temperature": 0}
    if forced:
        body |= {"tools": [TOOL], "tool_choice": FORCED}
    request = urllib.request.Request(
        base + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=300) as response:
        return int(json.loads(response.read())["usage"]["prompt_tokens"])


def test_a_forced_call_starts_from_the_last_forced_calls_state(local_server) -> None:
    window = [
        {"role": "system", "content": "You help customers with their orders. Be brief."},
        {"role": "user", "content": "Where is my order A-4471? It was due on Monday."},
    ]
    question = {"role": "user", "content": "Which one tool do you call next? lookup_order?"}
    ask(local_server.base, [*window, question], forced=False)
    first = ask(local_server.base, window, forced=True)
    window += [
        {"role": "assistant", "content": "Let me look."},
        {"role": "user", "content": "Thank you."},
    ]
    ask(local_server.base, [*window, question], forced=False)
    second = ask(local_server.base, window, forced=True)
    read_in = [int(n) for n in READ_IN.findall(local_server.log.read_text(errors="replace"))]
    # Less than what the window gained and some: the pick just before it shared only the
    # system text's 20-odd tokens, and a server without the cache read the rest again.
    assert second > first + 10
    assert read_in[-1] < second - first + 20, (read_in[-4:], first, second)
