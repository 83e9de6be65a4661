"""A model's reply may hold half a UTF-16 pair: an escape such as "\\ud83d" with no partner,
as a reply cut in the middle of an emoji has it. Python's json reads it and keeps it, and no
event holding it could be written (UTF-8 has no such character): the step failed at its
append, on every try, until the run was dead-lettered. The client now keeps such a reply with
U+FFFD in the half's place, in its text and in a tool call's arguments; the run goes on and
replays to the same journal. The half may also come as the three bytes UTF-8's scheme would give
it (ED A0 BD), not an escape: json reads bytes letting those through, and the look for escapes
missed them, so the run stopped at its ModelResponded, and every resume there too."""

from __future__ import annotations

from runtime import flat, flight
from runtime.events import ModelResponded, ToolDispatched
from runtime.jsonl import JsonlJournal
from runtime.team import Services
from tests.fakellm import Reply, completion, wire_call


def flown(server, tmp_path, run_id: str, first: Reply, second: Reply) -> list[str]:
    """A solo run answered `first` (a reply with text and a list_files call whose path holds
    half a pair) and `second`: what the model said, as the journal keeps it, once the half
    in the path is seen kept as U+FFFD, the run gone on, replayed identically, and every line
    read back as an import reads it (which refuses a lone surrogate)."""
    models = {"MINUTES_MODEL_BASE_URL": server.url, "MINUTES_MODEL": "some-model"}
    server.queue(first, second)
    journal = JsonlJournal(tmp_path / "j.jsonl")
    config = flight.plan("solo", "solo-fix", run_id, model="endpoint")

    outcome = flight.fly(journal, config, run_id, tmp_path, services=Services(models=models))

    records = journal.read(f"run-{run_id}")
    called = [r.event for r in records if isinstance(r.event, ToolDispatched)]
    assert called[0].args == {"path": "a\ufffd"}
    assert outcome.status != "escalated", outcome.reason
    assert flight.replay(journal, run_id).identical
    for n, line in enumerate((tmp_path / "j.jsonl").read_bytes().splitlines(), 1):
        flat.loads(line, n)
    return [r.event.text for r in records if isinstance(r.event, ModelResponded)]


def test_the_half_is_kept_as_a_replacement_character_and_the_run_goes_on(server, tmp_path):
    said = flown(
        server,
        tmp_path,
        "r-half",
        Reply(completion("cut \ud83d", [wire_call("list_files", '{"path": "a\\ud800"}', "c1")])),
        Reply(completion("whole \ud83d\ude00", [wire_call("done", '{"summary": "ok"}', "c2")])),
    )
    assert said[:2] == ["cut \ufffd", "whole \U0001f600"]  # a whole pair is one character


def test_the_half_as_raw_bytes_is_kept_as_a_replacement_character_too(server, tmp_path):
    call = b'{"id":"c1","type":"function","function":{"name":"list_files","arguments":'
    call += b'"{\\"path\\": \\"a\xed\xb0\x80\\"}"}}'
    raw = Reply(
        b'{"choices":[{"message":{"role":"assistant","content":"cut \xed\xa0\xbd",'
        b'"tool_calls":[' + call + b']},"finish_reason":"tool_calls"}]}'
    )
    done = Reply(completion("ok", [wire_call("done", '{"summary": "ok"}', "c2")]))
    assert flown(server, tmp_path, "r-raw", raw, done)[0] == "cut \ufffd"


def test_mended_leaves_text_without_halves_alone_and_reaches_keys():
    assert flat.mended({"k\udc00": ["ok", {"x": "\ud800y"}], "n": 1}) == {
        "k\ufffd": ["ok", {"x": "\ufffdy"}],
        "n": 1,
    }
    assert not flat.may_hold_surrogates(b'{"a": "\\u00e9"}')
    assert flat.may_hold_surrogates(b'{"a": "\\uD83D"}')
    assert flat.may_hold_surrogates(b'{"a": "\xed\xa0\xbd"}')  # UTF-8's form of \ud83d
    # Whole characters either side of the surrogates' block, and a pair, hold no half.
    assert not flat.may_hold_surrogates('{"a": "\ud7ff \ue000 \U0001f600"}'.encode())
    # json reads UTF-16 too, where a half is two bytes like any other character.
    assert flat.may_hold_surrogates('{"a": "x"}'.encode("utf-16-le"))
