"""What a model's reply becomes in the journal is measured as it is written, not as it came: a
reply under the 1 MiB the client reads made a ModelResponded line of 3.8 MB (a number such as
9e15 is 4 bytes on the wire and 9000000000000000.0 in the journal), and the run's own export did
not import again (an import reads lines of at most 1 MiB). A call whose arguments are more than
MAX_ARGS_BYTES as written goes back to the model refused, as unreadable arguments do; a reply
whose whole record would still outgrow a line is refused."""

from __future__ import annotations

import pytest

from runtime import flight
from runtime.events import LINE_BYTES, ModelResponded, ToolReturned
from runtime.jsonl import JsonlJournal
from runtime.model import UNREADABLE_ARGS, ChatMessage
from runtime.openai_client import ModelProtocolError, OpenAIClient
from runtime.openai_wire import MAX_ARGS_BYTES, MAX_RECORD_BYTES
from runtime.team import Services
from runtime.tools import InvalidArguments, Tool, Toolbox
from tests.fakellm import FakeServer, Reply, completion, wire_call

ASK = [ChatMessage(role="user", content="hello")]
NUMBERS = {"type": "object", "properties": {"n": {"type": "array"}}}


def numbers(count: int) -> str:
    """Arguments of `count` numbers: 5 bytes each on the wire, 19 as the journal writes them."""
    return '{"n": [' + ",".join(["9e15"] * count) + "]}"


@pytest.mark.parametrize(
    "arguments",
    [numbers(20_000), '{"n": ["' + "\x01" * 60_000 + '"]}'],  # \u0001 when written
    ids=["short-numbers", "raw-control-characters"],
)
def test_arguments_that_outgrow_the_bound_as_written_go_back_to_the_model_refused(
    server: FakeServer, arguments: str
) -> None:
    assert len(arguments) < MAX_ARGS_BYTES  # within the bound as they came
    client = OpenAIClient(server.url, "m")
    server.queue(Reply(completion(None, [wire_call("count", arguments, "c1")])))

    response = client.complete(ASK, [])

    (call,) = response.tool_calls
    said = call.args[UNREADABLE_ARGS]
    assert said.startswith("too large to keep (")
    assert f"more than the {MAX_ARGS_BYTES:,} one call's may be: send less at a time)" in said
    assert len(said) < 3000  # the start of what was sent, its controls escaped
    toolbox = Toolbox([Tool("count", "Count.", NUMBERS, lambda n: len(n))])
    with pytest.raises(InvalidArguments, match="the arguments sent are too large to keep"):
        toolbox.check(call, "coder")


@pytest.mark.parametrize(
    "reply",
    [
        completion(None, [wire_call("count", numbers(13_000), f"c{i}") for i in range(5)]),
        completion("A" * (MAX_RECORD_BYTES + 1)),
    ],
    ids=["five-large-calls", "text"],
)
def test_a_reply_whose_record_would_outgrow_a_journal_line_is_refused(
    server: FakeServer, reply: dict
) -> None:
    client = OpenAIClient(server.url, "m")
    server.queue(Reply(reply))

    with pytest.raises(ModelProtocolError) as caught:
        client.complete(ASK, [])

    message = str(caught.value)
    assert "bytes as the journal writes it (its text and tool calls)" in message
    assert f"more than the {MAX_RECORD_BYTES:,} one event may hold" in message


def test_a_run_given_such_arguments_writes_lines_an_import_reads_and_replays(
    server: FakeServer, tmp_path
) -> None:
    models = {"MINUTES_MODEL_BASE_URL": server.url, "MINUTES_MODEL": "some-model"}
    big = numbers(50_000)  # 250 KB on the wire, 950 KB written
    server.queue(
        Reply(completion(None, [wire_call("list_files", big, "c1")])),
        Reply(completion("ok", [wire_call("done", '{"summary": "ok"}', "c2")])),
    )
    journal = JsonlJournal(tmp_path / "j.jsonl")
    config = flight.plan("solo", "solo-fix", "r-grow", model="endpoint")

    outcome = flight.fly(journal, config, "r-grow", tmp_path, services=Services(models=models))

    assert outcome.status != "escalated", outcome.reason
    records = [r.event for r in journal.read("run-r-grow")]
    answered = [e for e in records if isinstance(e, ModelResponded)]
    assert UNREADABLE_ARGS in answered[0].tool_calls[0].args
    refused = next(e for e in records if isinstance(e, ToolReturned))
    assert refused.error is not None and refused.error.type == "InvalidArguments"
    lines = (tmp_path / "j.jsonl").read_bytes().splitlines()
    assert max(len(line) for line in lines) < LINE_BYTES // 8
    assert flight.replay(journal, "r-grow").identical
