"""The local model server reads a tool's result, and every text, as it was written.

Counted, not worded: the prompt tokens the server reports for a request equal the tokens of the
prompt we mean it to read (its own tokenizer counts them, /extras/tokenize/count). Served with
llama-cpp-python's chatml-function-calling as it is, a tool message reached the model as
`<|im_start|>tool` and nothing more, and `<div class="x">` as `&lt;div class=&#34;x&#34;&gt;`
(services/local_chat.py).
"""

from __future__ import annotations

import json
import urllib.request

import pytest

pytestmark = pytest.mark.slow

RESULT = '{"status": "shipped", "note": "<div class=\\"x\\">&amp;</div>"}'
CALL = {
    "id": "call-1",
    "type": "function",
    "function": {"name": "lookup_order", "arguments": '{"order_id": "A-4471"}'},
}
ASKED = [
    {"role": "system", "content": "You answer briefly."},
    {"role": "user", "content": "Where is my order A-4471?"},
    {"role": "assistant", "content": "", "tool_calls": [CALL]},
]
OPENING = (
    "<|im_start|>system\nYou answer briefly.<|im_end|>\n"
    "<|im_start|>user\nWhere is my order A-4471?<|im_end|>\n"
    '<|im_start|>assistant\nfunctions.lookup_order:\n{"order_id": "A-4471"}\n<|im_end|>\n'
)
ANSWER = "<|im_start|>assistant\n"


def post(url: str, body: dict) -> dict:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=300) as response:
        return dict(json.loads(response.read()))


def read_in(base: str, messages: list[dict]) -> int:
    """The prompt tokens the server read for these messages (one token written)."""
    body = {"model": "local", "messages": messages, "max_tokens": 1, "temperature": 0}
    return int(post(base + "/chat/completions", body)["usage"]["prompt_tokens"])


def tokens(base: str, text: str) -> int:
    """The tokens of `text` by the server's own tokenizer."""
    root = base.removesuffix("/v1")
    return int(post(root + "/extras/tokenize/count", {"input": text})["count"])


def test_the_model_reads_what_its_tool_returned(local_server) -> None:
    base = local_server.base
    answered = [*ASKED, {"role": "tool", "tool_call_id": "call-1", "content": RESULT}]
    meant = OPENING + f"<|im_start|>user\nfunctions.lookup_order returned:\n{RESULT}<|im_end|>\n"
    assert read_in(base, answered) == tokens(base, meant + ANSWER)
    # The result is what the prompt gained: all of it, beside the turn that carries it.
    gained = read_in(base, answered) - read_in(base, ASKED)
    assert gained >= tokens(base, RESULT)


def test_the_model_reads_markup_and_quotes_unescaped(local_server) -> None:
    base = local_server.base
    text = 'Is <div class="x">&amp;</div> what it\'s meant to say?'
    asked = [{"role": "user", "content": text}]
    meant = f"<|im_start|>user\n{text}<|im_end|>\n" + ANSWER
    escaped = meant.replace(
        text, "Is &lt;div class=&#34;x&#34;&gt;&amp;amp;&lt;/div&gt; what it&#39;s meant to say?"
    )
    assert tokens(base, meant) != tokens(base, escaped)  # the two are told apart
    assert read_in(base, asked) == tokens(base, meant)


class Prompted:
    """Stands in for llama_cpp.Llama: keeps the prompt it is asked to complete."""

    verbose = False
    prompt = ""

    def create_completion(self, prompt: str, **rest: object) -> dict:
        self.prompt = prompt
        choice = {"text": "{}", "index": 0, "logprobs": None, "finish_reason": "stop"}
        usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        return {"id": "c", "created": 0, "model": "m", "choices": [choice], "usage": usage}


def test_the_server_reads_the_tool_list_unescaped(local_server) -> None:
    """A forced call's prompt, as the server reads it, is the one our format writes without a
    server: its tool list as json.dumps writes it, `<` and `&` where tojson wrote \\u003c."""
    from llama_cpp import llama_chat_format

    from services import local_chat

    parameters = {
        "type": "object",
        "properties": {"order_id": {"type": "string", "description": "like <A-4471> & co"}},
    }
    tools = [{"type": "function", "function": {"name": "lookup_order", "parameters": parameters}}]
    forced = {"type": "function", "function": {"name": "lookup_order"}}
    local_chat.register()
    model = Prompted()
    handler = llama_chat_format.get_chat_completion_handler(local_chat.FORMAT)
    handler(llama=model, messages=ASKED, tools=tools, tool_choice=forced)
    assert "like <A-4471> & co" in model.prompt
    body = {"model": "local", "messages": ASKED, "tools": tools, "tool_choice": forced}
    read = post(local_server.base + "/chat/completions", {**body, "max_tokens": 1})
    escaped = model.prompt.replace("<A-4471> & co", "\\u003cA-4471\\u003e \\u0026 co")
    assert tokens(local_server.base, model.prompt) != tokens(local_server.base, escaped)
    assert read["usage"]["prompt_tokens"] == tokens(local_server.base, model.prompt)
