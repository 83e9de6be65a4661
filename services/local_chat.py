"""The local model's chat format: llama-cpp-python's chatml-function-calling, shown what each
tool answered, as it was written, in turns that are well formed.

`python -m services.local_chat <llama_cpp.server's arguments>` runs llama-cpp-python's server
with one more chat format registered, FORMAT, which services/local_model.py names with
--chat_format. It hands every request to the vendor's `chatml_function_calling` (tools,
tool_choice, the grammar of a forced call: all its own) after `readable` has rewritten the
messages around four defects of its template, and gives it the model behind `PlainToolList`
for two more:

- A message of role `tool` (a tool's result, as every OpenAI-compatible client sends it) renders
  as `<|im_start|>tool` and nothing else: the template writes the body of system, user and
  assistant messages only. An agent on the local model never saw what any of its calls returned.
- The template renders with Jinja's autoescape on, so `<`, `>`, `&`, `"` and `'` in a message or
  in a call's arguments reached the model as `&lt;`, `&#34;` and the like: code and JSON mangled.
- An assistant turn's calls ran together (`functions.a:\n{...}functions.b:\n{...}`): each
  call's arguments are now followed by a newline, as the vendor's handler itself writes the
  calls it asks the model for (it adds "\n" after each one's arguments, then lets the model
  choose another call or `<|im_end|>`), and as the system message's example shows them. So
  the model reads its past calls in the form it writes them.
- A turn with both text and calls was written `message:\ntext<|im_end|>\nfunctions.a:...
  <|im_end|>`: two ends in one turn, the calls outside any. It is now two assistant turns, the
  text and then the calls. Not one turn with both, since the system message tells the model to
  answer with "either a single message or one or more function calls", and the vendor's
  handler lets it write one or the other, never both: two turns each read as a reply the model
  could have written. (An assistant message with neither text nor calls, which the template
  left open, is closed as an empty turn.)
- The tool list in the system message is written with Jinja's `tojson`, which writes `<`, `>`,
  `&` and `'` as `\u003c`, `\u003e`, `\u0026`, `\u0027`: valid JSON, but a small model reads
  the codes (tool descriptions in the parameters hold code and markup). `PlainToolList` stands
  between the handler and the model and replaces, in each prompt the handler asks it to
  complete, exactly the tool list the template wrote (computed from the request's own tools,
  from its opening sentence to the instructions after it) with the same list written by
  json.dumps. Nothing else in the prompt is touched: a message holding the text `\u003c` keeps
  it, as it would have to hold that whole list, escapes and all, to be mistaken for it.
- The same list wrote each function's name and parameters, never its description: the model
  read what arguments a tool takes but not what it does. The list PlainToolList writes gives
  each function's description as its parameters' own (`described`).

Every change is a function of one message (and the calls before it) or of the request's tools,
so a window that grows renders its beginning alike and the server's prompt cache reuses it.

Run as a process only, by whoever starts the server (the demo, a worker, the suite's fixture):
llama_cpp, jinja2 and markupsafe (both come with it) are imported in `register`, since every
services module is imported where they are not installed (tests/test_layering.py).
"""

from __future__ import annotations

import importlib
import json
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
    """The messages as the vendor template renders them in full and well formed: each `tool`
    message a user message carrying the tool's name and its content, each call's arguments
    ended by a newline, an assistant message with text and calls two turns (the text, then the
    calls), and every text the template writes out (contents, the calls' names and arguments)
    passed through `verbatim`, which `register` makes markupsafe.Markup, as Jinja does not
    escape Markup. The request's own messages are left as they were; each message's rendering
    depends on it and the calls before it only, so a window that grows keeps its beginning
    (the server's prompt cache reuses it)."""
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
        # Whether the template writes a text, asked of the text itself: `verbatim`'s may differ.
        has_text = bool(message.get("content"))
        copy = dict(message)
        if isinstance(copy.get("content"), str):
            copy["content"] = verbatim(copy["content"])
        if role == "assistant":
            shown.extend(_assistant(copy, has_text, names, verbatim))
        else:
            shown.append(copy)
    return shown


def _assistant(
    message: dict[str, Any], has_text: bool, names: dict[str, str], verbatim: Callable[[str], str]
) -> list[dict[str, Any]]:
    """An assistant message as the turns the template closes once each.

    The template ends the turn after the text, if any, and again after the calls whenever the
    message has the key `tool_calls` (even None or []): text with calls, or text with an empty
    key, got two ends; no text and no calls got none, and the next turn began inside it."""
    calls = message.pop("tool_calls", None)
    calls = calls if isinstance(calls, list) else []
    if not calls:
        # An empty list of calls writes nothing but the turn's end: a turn with no text closes.
        return [message] if has_text else [{**message, "content": "", "tool_calls": []}]
    written = [_call(call, names, verbatim) for call in calls]
    if not has_text:
        return [{**message, "content": "", "tool_calls": written}]
    return [message, {"role": "assistant", "content": "", "tool_calls": written}]


def _call(
    call: Mapping[str, Any], names: dict[str, str], verbatim: Callable[[str], str]
) -> dict[str, Any]:
    """One of an assistant's tool calls, its name and arguments verbatim, the arguments ended
    by a newline (the template writes the next call, or the turn's end, right after them);
    notes its name."""
    function = dict(call.get("function") or {})
    name = function.get("name")
    if isinstance(name, str):
        if call.get("id"):
            names[str(call["id"])] = name
        function["name"] = verbatim(name)
    if isinstance(function.get("arguments"), str):
        function["arguments"] = verbatim(function["arguments"] + "\n")
    return {**call, "function": function}


# The template's words around its tool list: from the first to the second is the list alone.
TOOL_LIST_OPENS = "\n\nYou have access to the following functions:\n"
TOOL_LIST_CLOSES = "\n\nYou can respond to users messages"


def tool_list(tools: Sequence[Any], name: Callable[[str], str], dumps: Callable[[Any], str]) -> str:
    """The tool list as the template writes it, each tool's name through `name` and its
    parameters through `dumps`, between the words that open and close it."""
    lines = "".join(
        f"\nfunctions.{name(tool['function']['name'])}:\n{dumps(tool['function']['parameters'])}\n"
        for tool in tools
    )
    return TOOL_LIST_OPENS + lines + TOOL_LIST_CLOSES


def plain_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def described(tools: Sequence[Any]) -> list[Any]:
    """The tools with each function's description written into its parameters' own (where
    they have none): the template writes a function's name and parameters only, so the model
    never read what a tool is for. JSON Schema's `description` of the arguments object is
    where a reader of the list looks for it, and the list stays the JSON it was."""
    shown = []
    for tool in tools:
        function = tool["function"]
        about = function.get("description")
        parameters = function["parameters"]
        has_own = not isinstance(parameters, Mapping) or "description" in parameters
        if isinstance(about, str) and about.strip() and not has_own:
            parameters = {"description": about.strip(), **parameters}
            tool = {**tool, "function": {**function, "parameters": parameters}}
        shown.append(tool)
    return shown


def request_tools(rest: Mapping[str, Any]) -> list[Any] | None:
    """The request's tools as the vendor's handler reads them (legacy `functions` win), or
    None when any is not one it can write (it then reports them itself, or writes no list)."""
    functions = rest.get("functions")
    if functions is not None:
        tools = [{"type": "function", "function": function} for function in functions]
    else:
        tools = rest.get("tools") or []
    for tool in tools:
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            return None
        if "parameters" not in function:
            return None
    return list(tools)


class PlainToolList:
    """The vendor's model, as its handler is given it: each prompt it is asked to complete has
    its tool list (`escaped`, as the template wrote it) replaced with `plain`, the same list
    written by json.dumps. All else is the model's own."""

    def __init__(self, llama: Any, escaped: str, plain: str) -> None:
        self.llama = llama
        self.escaped = escaped
        self.plain = plain

    def __getattr__(self, name: str) -> Any:
        return getattr(self.llama, name)

    def create_completion(self, *args: Any, **kwargs: Any) -> Any:
        if isinstance(kwargs.get("prompt"), str):
            kwargs["prompt"] = kwargs["prompt"].replace(self.escaped, self.plain)
        elif args and isinstance(args[0], str):
            args = (args[0].replace(self.escaped, self.plain), *args[1:])
        return self.llama.create_completion(*args, **kwargs)


def register() -> None:
    """Register FORMAT with llama_cpp: the vendor's handler, given `readable` messages and
    the model behind PlainToolList."""
    # Imported by name: mypy then reads this module alike where llama_cpp is not installed.
    formats = importlib.import_module("llama_cpp.llama_chat_format")
    markupsafe = importlib.import_module("markupsafe")
    jinja_utils = importlib.import_module("jinja2.utils")
    vendor = formats.get_chat_completion_handler(VENDOR_FORMAT)

    def tojson(value: Any) -> str:
        # The template's `tojson`: Jinja's default policy sorts the keys, as json.dumps is
        # told to below, so the two lists differ in the escapes only.
        return str(jinja_utils.htmlsafe_json_dumps(value, dumps=json.dumps, sort_keys=True))

    def handler(*, llama: Any, messages: Sequence[Mapping[str, Any]], **rest: Any) -> Any:
        tools = request_tools(rest)
        if tools:
            escaped = tool_list(tools, lambda name: str(markupsafe.escape(name)), tojson)
            plain = tool_list(described(tools), str, plain_json)
            if escaped != plain:
                llama = PlainToolList(llama, escaped, plain)
        return vendor(llama=llama, messages=readable(messages, markupsafe.Markup), **rest)

    registry = formats.LlamaChatCompletionHandlerRegistry()
    registry.register_chat_completion_handler(FORMAT, handler, overwrite=True)


def main() -> None:
    """llama-cpp-python's server, with FORMAT registered; the arguments are its own."""
    register()
    sys.argv[0] = "llama_cpp.server"  # what its --help and errors call it
    importlib.import_module("llama_cpp.server.__main__").main()


if __name__ == "__main__":
    main()
