"""OTLP/JSON written straight to text: the same bytes as `json.dumps` of encode.py's dicts.

Building a dict per attribute and value, then dumping them, spends most of its time in Python's
cyclic garbage collector once a long run's trace is in memory (every container allocated counts
towards a collection that walks them all). Strings are not tracked by the collector, so writing
the text directly is several times faster for the same output; tests/runtime/test_otel.py holds
the two encodings equal.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring  # what json.dumps(ensure_ascii=False) uses
from typing import Any

from runtime.otel.spans import SCOPE_NAME, SCOPE_VERSION, STATUS_ERROR, STATUS_UNSET, Span

TRUE, FALSE = '{"boolValue":true}', '{"boolValue":false}'


def value_text(value: Any) -> str:
    if type(value) is str:  # most values: a quick way past the checks below
        return '{"stringValue":' + encode_basestring(value) + "}"
    if isinstance(value, bool):  # before int: a bool is an int to Python
        return TRUE if value else FALSE
    if isinstance(value, int):
        return f'{{"intValue":"{value}"}}'  # int64 travels as a string in OTLP/JSON
    if isinstance(value, float):
        return f'{{"doubleValue":{json.dumps(value)}}}'
    if isinstance(value, list | tuple):
        return '{"arrayValue":{"values":[' + ",".join(value_text(v) for v in value) + "]}}"
    return '{"stringValue":' + encode_basestring(str(value)) + "}"


# Attribute names come from the code, a few dozen: each one's text is made once. Short values
# repeat on every span (the run id, operation, agent and model names, turn numbers): each
# attribute's whole text is kept for those, up to MAX_CACHED of them (then the cache starts
# again). Not bools: True == 1 would find an int's text.
_KEYS: dict[str, str] = {}
_PAIRS: dict[tuple[str, Any], str] = {}
SHORT = 80
MAX_CACHED = 4_096


def key_text(key: str) -> str:
    text = _KEYS.get(key)
    if text is None:
        text = _KEYS[key] = '{"key":' + encode_basestring(key) + ',"value":'
    return text


def attributes_text(attributes: dict[str, Any]) -> str:
    parts = []
    for k, v in attributes.items():
        if v is None:
            continue
        kind = type(v)
        if (kind is str and len(v) <= SHORT) or kind is int:
            text = _PAIRS.get((k, v))
            if text is None:
                if len(_PAIRS) >= MAX_CACHED:
                    _PAIRS.clear()
                text = _PAIRS[(k, v)] = key_text(k) + value_text(v) + "}"
            parts.append(text)
        else:
            parts.append(key_text(k) + value_text(v) + "}")
    return "[" + ",".join(parts) + "]"


def span_text(span: Span, trace_id: str) -> str:
    parts = [f'{{"traceId":"{trace_id}","spanId":"{span.span_id}"']
    if span.parent_id is not None:
        parts.append(f',"parentSpanId":"{span.parent_id}"')
    end = span.start if span.end is None else span.end
    parts.append(
        f',"name":{encode_basestring(span.name)},"kind":{span.kind},'
        f'"startTimeUnixNano":"{span.start}","endTimeUnixNano":"{end}",'
        f'"attributes":{attributes_text(span.attributes)}'
    )
    if span.events:
        events = ",".join(
            f'{{"timeUnixNano":"{at}","name":{encode_basestring(name)},'
            f'"attributes":{attributes_text(attrs)}}}'
            for at, name, attrs in span.events
        )
        parts.append(f',"events":[{events}]')
    if span.links:
        links = ",".join(
            f'{{"traceId":"{link.trace_id}","spanId":"{link.span_id}",'
            f'"attributes":{attributes_text(link.attributes)}}}'
            for link in span.links
        )
        parts.append(f',"links":[{links}]')
    if span.error is None:
        parts.append(f',"status":{{"code":{STATUS_UNSET}}}}}')
    else:
        parts.append(
            f',"status":{{"code":{STATUS_ERROR},"message":{encode_basestring(span.error)}}}}}'
        )
    return "".join(parts)


EMPTY = '{"resourceSpans":[]}'
SCOPE = json.dumps({"name": SCOPE_NAME, "version": SCOPE_VERSION}, separators=(",", ":"))
TAIL = "]}]}]}"


def trace_head(resource: dict[str, Any], scope: str) -> str:
    """The request's text up to its first span; the spans follow, comma-separated, then TAIL."""
    return (
        '{"resourceSpans":[{"resource":{"attributes":'
        + attributes_text(resource)
        + '},"scopeSpans":[{"scope":'
        + scope
        + ',"spans":['
    )
