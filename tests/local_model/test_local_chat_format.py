"""The local model's chat format (services/local_chat.py), without a server.

`readable` alone, then the prompts llama-cpp-python's own chatml-function-calling template
writes from what it makes: the model is a stand-in that keeps the prompt it is given (what the
server's model would read in) and answers "{}".
"""

from __future__ import annotations

import copy
import importlib.util
import json

import pytest

from services import local_chat

CALL = {
    "id": "call-1",
    "type": "function",
    "function": {"name": "lookup_order", "arguments": '{"order_id": "A<4471>"}'},
}
RESULT = '{"status": "shipped", "note": "<div class=\\"x\\">&amp;</div> it\'s here"}'
WINDOW = [
    {"role": "system", "content": "You answer briefly."},
    {"role": "user", "content": "Where is my order A<4471>?"},
    {"role": "assistant", "content": "", "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "call-1", "content": RESULT},
]
PARAMETERS = {
    "type": "object",
    "properties": {"order_id": {"type": "string"}},
    "required": ["order_id"],
}
TOOLS = [{"type": "function", "function": {"name": "lookup_order", "parameters": PARAMETERS}}]
FORCED = {"type": "function", "function": {"name": "lookup_order"}}


def test_a_tool_message_becomes_a_user_message_naming_the_call_it_answers():
    shown = local_chat.readable(WINDOW)
    assert shown[3] == {
        "role": "user",
        "content": "functions.lookup_order returned:\n" + RESULT,
    }
    assert shown[:3] == WINDOW[:3]


def test_a_result_whose_call_is_not_in_the_window_still_arrives_unnamed():
    shown = local_chat.readable([{"role": "tool", "tool_call_id": "gone", "content": "42"}])
    assert shown == [{"role": "user", "content": "A function returned:\n42"}]
    parts = [{"type": "text", "text": "4"}, {"type": "text", "text": "2"}]
    [listed] = local_chat.readable([{"role": "tool", "tool_call_id": "", "content": parts}])
    assert listed["content"].endswith("\n42")


def test_every_text_passes_through_verbatim_and_the_request_is_left_as_it_was():
    before = copy.deepcopy(WINDOW)
    shown = local_chat.readable(WINDOW, lambda text: f"[{text}]")
    assert before == WINDOW
    assert shown[1]["content"] == "[Where is my order A<4471>?]"
    function = shown[2]["tool_calls"][0]["function"]
    assert function == {"name": "[lookup_order]", "arguments": '[{"order_id": "A<4471>"}]'}
    assert shown[2]["tool_calls"][0]["id"] == "call-1"
    assert shown[3]["content"].startswith("[functions.lookup_order returned:")


class Model:
    """Stands in for llama_cpp.Llama: keeps each prompt and grammar, answers "{}"."""

    verbose = False

    def __init__(self) -> None:
        self.prompts: list[str] = []
        self.grammars: list[object] = []

    def create_completion(self, prompt: str, grammar: object = None, **rest: object) -> dict:
        self.prompts.append(prompt)
        self.grammars.append(grammar)
        return {
            "id": "c",
            "object": "text_completion",
            "created": 0,
            "model": "m",
            "choices": [{"text": "{}", "index": 0, "logprobs": None, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }


@pytest.fixture
def prompt():
    """What the server's model reads in for a request, through our registered format."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("local model not available: llama_cpp is not installed")
    from llama_cpp import llama_chat_format

    local_chat.register()
    handler = llama_chat_format.get_chat_completion_handler(local_chat.FORMAT)

    def render(messages: list[dict], **request: object) -> tuple[str, Model]:
        model = Model()
        handler(llama=model, messages=messages, **request)
        return model.prompts[-1], model

    return render


def test_the_model_reads_what_the_tool_returned_as_it_was_written(prompt):
    text, _ = prompt(WINDOW)
    assert text == (
        "<|im_start|>system\nYou answer briefly.<|im_end|>\n"
        "<|im_start|>user\nWhere is my order A<4471>?<|im_end|>\n"
        '<|im_start|>assistant\nfunctions.lookup_order:\n{"order_id": "A<4471>"}<|im_end|>\n'
        f"<|im_start|>user\nfunctions.lookup_order returned:\n{RESULT}<|im_end|>\n"
        "<|im_start|>assistant\n"
    )


def test_a_forced_call_keeps_its_tool_list_grammar_and_opening(prompt):
    text, model = prompt(WINDOW, tools=TOOLS, tool_choice=FORCED)
    assert "\nfunctions.lookup_order:\n" + json.dumps(PARAMETERS, sort_keys=True) + "\n" in text
    assert text.endswith("<|im_start|>assistant\nfunctions.lookup_order:\n")
    assert f"functions.lookup_order returned:\n{RESULT}<|im_end|>" in text
    assert "&" not in text.replace("&amp;</div>", "")  # the result's own &amp; only
    assert model.grammars[-1] is not None


def test_a_longer_window_renders_the_shorter_ones_messages_alike(prompt):
    """The server's prompt cache reuses the longest beginning a prompt shares with one before:
    each step's window is the last one and more, so its prompt must begin with the last's."""
    generation = "<|im_start|>assistant\n"
    shorter, _ = prompt(WINDOW[:2])
    longer, _ = prompt(WINDOW)
    assert longer.startswith(shorter.removesuffix(generation))
    forced_shorter, _ = prompt(WINDOW[:2], tools=TOOLS, tool_choice=FORCED)
    forced_longer, _ = prompt(WINDOW, tools=TOOLS, tool_choice=FORCED)
    opening = forced_shorter.removesuffix(generation + "functions.lookup_order:\n")
    assert forced_longer.startswith(opening)
