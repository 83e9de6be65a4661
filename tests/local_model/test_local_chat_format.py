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
    assert shown[:2] == WINDOW[:2]
    assert shown[2]["tool_calls"][0]["function"]["name"] == "lookup_order"


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
    assert function == {"name": "[lookup_order]", "arguments": '[{"order_id": "A<4471>"}\n]'}
    assert shown[2]["tool_calls"][0]["id"] == "call-1"
    assert shown[3]["content"].startswith("[functions.lookup_order returned:")


class Model:
    """Stands in for llama_cpp.Llama: keeps each prompt and grammar, answers "{}" or, given
    `answers`, each of them in turn."""

    verbose = False

    def __init__(self, answers: list[str] | None = None) -> None:
        self.prompts: list[str] = []
        self.grammars: list[object] = []
        self.answers = list(answers or [])

    def create_completion(self, prompt: str, grammar: object = None, **rest: object) -> dict:
        self.prompts.append(prompt)
        self.grammars.append(grammar)
        text = self.answers.pop(0) if self.answers else "{}"
        return {
            "id": "c",
            "object": "text_completion",
            "created": 0,
            "model": "m",
            "choices": [{"text": text, "index": 0, "logprobs": None, "finish_reason": "stop"}],
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

    def render(
        messages: list[dict], answers: list[str] | None = None, **request: object
    ) -> tuple[str, Model]:
        model = Model(answers)
        handler(llama=model, messages=messages, **request)
        return model.prompts[-1], model

    return render


def test_the_model_reads_what_the_tool_returned_as_it_was_written(prompt):
    text, _ = prompt(WINDOW)
    assert text == (
        "<|im_start|>system\nYou answer briefly.<|im_end|>\n"
        "<|im_start|>user\nWhere is my order A<4471>?<|im_end|>\n"
        '<|im_start|>assistant\nfunctions.lookup_order:\n{"order_id": "A<4471>"}\n<|im_end|>\n'
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


def turns(text: str) -> list[str]:
    """The prompt's turns, each checked to end once, where it ends; the generation prompt's
    open turn last."""
    *closed, generation = text.split("<|im_start|>")[1:]
    for turn in closed:
        assert turn.endswith("<|im_end|>\n"), turn
        assert turn.count("<|im_end|>") == 1, turn
    assert "<|im_end|>" not in generation
    return closed


ORDER = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string", "description": "like <A-4471> & the shop's own ids"}
    },
    "required": ["order_id"],
}
REFUND = {"type": "object", "properties": {"why": {"type": "string", "description": "a <p>"}}}
MARKED_TOOLS = [
    {"type": "function", "function": {"name": "lookup_order", "parameters": ORDER}},
    {"type": "function", "function": {"name": "refund", "parameters": REFUND}},
]


def call(call_id: str, name: str, arguments: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_each_call_of_a_turn_ends_on_its_own_line(prompt):
    two = [call("c1", "lookup_order", '{"order_id": "A-1"}'), call("c2", "refund", "{}")]
    window = [*WINDOW[:2], {"role": "assistant", "content": None, "tool_calls": two}]
    text, _ = prompt(window)
    assert (
        '<|im_start|>assistant\nfunctions.lookup_order:\n{"order_id": "A-1"}\n'
        "functions.refund:\n{}\n<|im_end|>\n"
    ) in text
    turns(text)


def test_a_past_call_reads_as_the_vendor_had_the_model_write_it(prompt):
    """The handler, left to choose (tool_choice auto), writes `functions.NAME:\\n`, has the model
    write the arguments, and adds a newline before it lets the model choose the next call or
    the turn's end: the same call in the next window's history reads alike."""
    answers = ["functions.lookup_order", '{"order_id": "A-1"}', "<|im_end|>"]
    _, model = prompt(WINDOW[:2], answers, tools=MARKED_TOOLS, tool_choice="auto")
    written = model.prompts[-1].removeprefix(model.prompts[0])
    assert written == 'functions.lookup_order:\n{"order_id": "A-1"}\n'
    done = {"role": "assistant", "tool_calls": [call("c1", "lookup_order", '{"order_id": "A-1"}')]}
    text, _ = prompt([*WINDOW[:2], done], tools=MARKED_TOOLS, tool_choice="auto")
    assert "<|im_start|>assistant\n" + written + "<|im_end|>\n" in text


def test_a_turn_with_text_and_calls_is_two_turns_each_ended_once(prompt):
    both = {"role": "assistant", "content": "Let me look.", "tool_calls": [CALL]}
    window = [*WINDOW[:2], both, WINDOW[3]]
    text, _ = prompt(window)
    assert turns(text)[2:4] == [
        "assistant\nLet me look.<|im_end|>\n",
        'assistant\nfunctions.lookup_order:\n{"order_id": "A<4471>"}\n<|im_end|>\n',
    ]
    # With tools the text is a `message:`, as the system message asks; still two turns.
    text, _ = prompt(window, tools=MARKED_TOOLS, tool_choice=FORCED)
    assert "<|im_start|>assistant\nmessage:\nLet me look.<|im_end|>\n" in text
    turns(text.removesuffix("functions.lookup_order:\n"))


def test_an_assistant_turn_without_calls_or_text_still_ends_once(prompt):
    window = [
        *WINDOW[:2],
        {"role": "assistant", "content": "On its way.", "tool_calls": None},
        {"role": "user", "content": "And?"},
        {"role": "assistant", "content": "", "tool_calls": []},
        {"role": "user", "content": "Hello?"},
        {"role": "assistant", "content": "Sorry.", "tool_calls": []},
    ]
    text, _ = prompt(window)
    assert turns(text)[2:] == [
        "assistant\nOn its way.<|im_end|>\n",
        "user\nAnd?<|im_end|>\n",
        "assistant\n<|im_end|>\n",
        "user\nHello?<|im_end|>\n",
        "assistant\nSorry.<|im_end|>\n",
    ]


def test_the_tool_list_is_written_as_json_dumps_writes_it(prompt):
    tool_list = "".join(
        f"\nfunctions.{tool['function']['name']}:\n"
        + json.dumps(tool["function"]["parameters"], sort_keys=True)
        + "\n"
        for tool in MARKED_TOOLS
    )
    forced, model = prompt(WINDOW, tools=MARKED_TOOLS, tool_choice=FORCED)
    assert "functions:\n" + tool_list + "\n" in forced
    assert "like <A-4471> & the shop's own ids" in forced
    assert not any(code in forced for code in ("\\u003c", "\\u003e", "\\u0026", "\\u0027"))
    assert model.grammars[-1] is not None  # the forced call's grammar, from the tools as sent
    # Left to choose: every prompt the handler asks the model to complete.
    answers = ["functions.refund", "{}", "<|im_end|>"]
    _, model = prompt(WINDOW, answers, tools=MARKED_TOOLS, tool_choice="auto")
    assert len(model.prompts) == 3
    assert all("functions:\n" + tool_list + "\n" in each for each in model.prompts)
    # The legacy `functions` and `function_call` are the same tools to the handler.
    legacy, _ = prompt(
        WINDOW,
        functions=[tool["function"] for tool in MARKED_TOOLS],
        function_call={"name": "lookup_order"},
    )
    assert "functions:\n" + tool_list + "\n" in legacy


def test_a_message_keeps_the_escapes_it_was_written_with(prompt):
    """Only the tool list the template wrote is rewritten: a message quoting a tool's escaped
    parameters keeps every code in it."""
    escaped = json.dumps(ORDER, sort_keys=True).replace("<", "\\u003c").replace("&", "\\u0026")
    quoted = f"Why does the list say \\u003c?\nfunctions.lookup_order:\n{escaped}\n"
    window = [*WINDOW[:1], {"role": "user", "content": quoted}]
    text, _ = prompt(window, tools=MARKED_TOOLS, tool_choice=FORCED)
    assert f"<|im_start|>user\n{quoted}<|im_end|>\n" in text
    assert text.count("\\u003c") == quoted.count("\\u003c")


def test_the_tool_list_says_what_each_function_is_for(prompt):
    """The template wrote a function's name and parameters only: the model never read a
    tool's description. It now stands in the parameters' own, where they have none."""
    tools = [
        {
            "type": "function",
            "function": {
                "name": "lookup_order",
                "description": "Look an order up by its id (<A-4471> & kin).",
                "parameters": ORDER,
            },
        },
        {
            "type": "function",
            "function": {
                "name": "refund",
                "description": "ignored",
                "parameters": {**REFUND, "description": "the parameters' own"},
            },
        },
        {"type": "function", "function": {"name": "ping", "description": " ", "parameters": {}}},
    ]
    forced, _ = prompt(WINDOW, tools=tools, tool_choice=FORCED)
    order = {"description": "Look an order up by its id (<A-4471> & kin).", **ORDER}
    assert "\nfunctions.lookup_order:\n" + json.dumps(order, sort_keys=True) + "\n" in forced
    assert '"description": "the parameters\' own"' in forced and "ignored" not in forced
    assert "\nfunctions.ping:\n{}\n" in forced  # a blank description adds nothing
    assert tools[0]["function"]["parameters"] is ORDER and "description" not in ORDER
