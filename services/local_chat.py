"""The local model's chat format: llama-cpp-python's chatml-function-calling, shown what each
tool answered, as it was written.

`python -m services.local_chat <llama_cpp.server's arguments>` runs llama-cpp-python's server
with one more chat format registered, FORMAT, which services/local_model.py names with
--chat_format. It hands every request to the vendor's `chatml_function_calling` (tools,
tool_choice, the grammar of a forced call: all its own) after `readable` has rewritten the
messages around two defects of its template:

- A message of role `tool` (a tool's result, as every OpenAI-compatible client sends it) renders
  as `<|im_start|>tool` and nothing else: the template writes the body of system, user and
  assistant messages only. An agent on the local model never saw what any of its calls returned.
- The template renders with Jinja's autoescape on, so `<`, `>`, `&`, `"` and `'` in a message or
  in a call's arguments reached the model as `&lt;`, `&#34;` and the like: code and JSON mangled.

Run as a process only, by whoever starts the server (the demo, a worker, the suite's fixture):
llama_cpp and markupsafe (which comes with it, through jinja2) are imported in `main`, since
every services module is imported where they are not installed (tests/test_layering.py).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

FORMAT = "minutes-chatml-function-calling"
VENDOR_FORMAT = "chatml-function-calling"


def _text(content: object) -> str:
    """A message's content as text: a string, or the text parts of a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return str(content)


def result_text(name: str | None, content: object) -> str:
    """What a tool message becomes: a user message naming the call it answers.

    A user turn, since the template writes the body of system, user and assistant messages
    only, and a result is neither the assistant's words nor its instructions: it comes from
    outside, as a user's message does. `functions.NAME` is how the template writes the call
    itself (`functions.NAME:` then the arguments, in the assistant's turn), so the result reads
    as that call's answer. Without a name (a window that kept a result and dropped its call)
    it still arrives, unnamed: the model is better off seeing it than not.
    """
    head = f"functions.{name} returned:" if name else "A function returned:"
    return f"{head}\n{_text(content)}"


def readable(
    messages: Sequence[Mapping[str, Any]], verbatim: Callable[[str], str] = str
) -> list[dict[str, Any]]:
    """The messages as the vendor template renders them in full: each `tool` message a user
    message carrying the tool's name and its content, and every text the template writes out
    (contents, the calls' names and arguments) passed through `verbatim`, which `main` makes
    markupsafe.Markup, as Jinja does not escape Markup. The request's own messages are left as
    they were; each message's rendering depends on it and the calls before it only, so a
    window that grows keeps its beginning (the server's prompt cache reuses it)."""
    names: dict[str, str] = {}  # tool_call_id -> the name of the call it answers
    shown: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role == "tool":
            name = names.get(str(message.get("tool_call_id") or ""))
            shown.append(
                {"role": "user", "content": verbatim(result_text(name, message.get("content")))}
            )
            continue
        copy = dict(message)
        if isinstance(copy.get("content"), str):
            copy["content"] = verbatim(copy["content"])
        calls = copy.get("tool_calls")
        if isinstance(calls, list):
            copy["tool_calls"] = [_call(call, names, verbatim) for call in calls]
        shown.append(copy)
    return shown


def _call(
    call: Mapping[str, Any], names: dict[str, str], verbatim: Callable[[str], str]
) -> dict[str, Any]:
    """One of an assistant's tool calls, its name and arguments verbatim; notes its name."""
    function = dict(call.get("function") or {})
    name = function.get("name")
    if isinstance(name, str):
        if call.get("id"):
            names[str(call["id"])] = name
        function["name"] = verbatim(name)
    if isinstance(function.get("arguments"), str):
        function["arguments"] = verbatim(function["arguments"])
    return {**call, "function": function}


def register() -> None:
    """Register FORMAT with llama_cpp: the vendor's handler, given `readable` messages."""
    # Imported by name: mypy then reads this module alike where llama_cpp is not installed.
    formats = importlib.import_module("llama_cpp.llama_chat_format")
    markup = importlib.import_module("markupsafe").Markup
    vendor = formats.get_chat_completion_handler(VENDOR_FORMAT)

    def handler(*, messages: Sequence[Mapping[str, Any]], **rest: Any) -> Any:
        return vendor(messages=readable(messages, markup), **rest)

    registry = formats.LlamaChatCompletionHandlerRegistry()
    registry.register_chat_completion_handler(FORMAT, handler, overwrite=True)


def main() -> None:
    """llama-cpp-python's server, with FORMAT registered; the arguments are its own."""
    register()
    sys.argv[0] = "llama_cpp.server"  # what its --help and errors call it
    importlib.import_module("llama_cpp.server.__main__").main()


if __name__ == "__main__":
    main()
