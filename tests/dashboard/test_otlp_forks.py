"""The dashboard's OTLP trace of a fork (the download and the push to a collector) names the
run it was forked from and links to that run's span, as the command line's does; a deployment
that ships no content ships no message a person typed into the fork."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from journal_store.journal import DjangoJournal
from services import forks
from tasks import traces as trace_tasks
from tests.dashboard.conftest import drive, run_of
from tests.dashboard.test_trace_push import collector  # noqa: F401  (a fixture)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
MESSAGE = "Mind the empty line at the end of the file"


def attrs(span: dict) -> dict:
    return {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}


def downloaded_root(client, run_id: str) -> dict:
    body = b"".join(client.get(reverse("export_otlp", args=[run_id])).streaming_content)
    assert MESSAGE.encode() not in body
    spans = json.loads(body)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    [root] = [s for s in spans if "parentSpanId" not in s]
    return root


def test_a_fork_s_download_and_push_link_to_its_parent_and_leave_out_its_message(
    as_owner,
    settings,
    collector,  # noqa: F811
):
    settings.OTLP_CONTENT = False
    parent = run_of("first-flight")
    at = next(
        r.position
        for r in DjangoJournal().read(f"run-{parent}")
        if r.event.kind == "ToolReturned" and r.event.tool == "read_file"
    )
    child = forks.fork_run(parent, at, forks.Changes(message=("coder", MESSAGE)), "owner")
    assert drive(child) != "stepped"

    theirs = downloaded_root(as_owner, parent)
    mine = downloaded_root(as_owner, child)
    [link] = mine["links"]
    assert (link["traceId"], link["spanId"]) == (theirs["traceId"], theirs["spanId"])
    a = attrs(mine)
    assert (a["minutes.fork.parent_run_id"], a["minutes.fork.at"]) == (parent, str(at))
    assert "minutes.fork.changes" not in a

    assert trace_tasks.push(child) == "pushed"
    (_path, _headers, parsed) = collector.got[-1]
    assert MESSAGE.encode() not in parsed.SerializeToString()
    [root] = [s for s in parsed.resource_spans[-1].scope_spans[0].spans if not s.parent_span_id]
    [pushed] = root.links
    assert (pushed.trace_id.hex(), pushed.span_id.hex()) == (theirs["traceId"], theirs["spanId"])
