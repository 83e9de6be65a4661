"""The spans of a run's model calls and tool calls, in its trace (runtime/otel/trace.py says
what each span runs from and to): the part of the fold that opens, closes and fills them, as
`Waits` (runtime/otel/waits.py) is for the waits for a person. It keeps no state of its own:
the calls under way are its agents' (`AgentRun.model_call`, `AgentRun.tools`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from runtime.events import (
    AgentNudged,
    ModelCalled,
    ModelFailed,
    ModelResponded,
    Served,
    ToolDispatched,
    ToolReturned,
)
from runtime.journal import Recorded
from runtime.model import EndpointDown
from runtime.otel import content, conversation
from runtime.otel.spans import (
    KIND_CLIENT,
    KIND_INTERNAL,
    UNFINISHED,
    AgentRun,
    Span,
    ToolCall,
    agent_id,
    agent_name,
    call_key,
    finish_reasons,
    usage_attributes,
)

if TYPE_CHECKING:
    from runtime.otel.trace import Trace


class Calls:
    """The model calls and tool calls of one trace."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace

    # --- model calls ---------------------------------------------------------------------------

    def on_model_called(self, rec: Recorded, e: ModelCalled) -> None:
        run = self.trace.agent_of(rec)
        if run.model_call is not None:
            run.model_call.close(run.last, UNFINISHED, "asked again before an answer was recorded")
            self.trace.final(run.model_call)
        run.model_call = self.open_model_call(rec, run, self.trace.now)
        run.model_call.attributes["minutes.window.messages"] = e.messages
        run.model_call.attributes["minutes.window.chars"] = e.window_chars
        if self.trace.options.content and run.history:
            # The window held the system prompt (not journalled), the task, and the newest
            # turns that fit: as many as the recorded count says, less those two.
            said, left_out = conversation.window(run, e.messages, self.trace.limit)
            run.model_call.attributes["gen_ai.input.messages"] = said
            if left_out:
                run.model_call.attributes["minutes.window.left_out"] = left_out

    def open_model_call(self, rec: Recorded, run: AgentRun, start: int) -> Span:
        e = rec.event
        name = agent_name(e)
        model = self.trace.model_attributes(name)
        label = model.get("gen_ai.request.model") or model.get("minutes.model.backend") or "model"
        span = self.trace.open(rec, "chat", run.span.span_id, f"chat {label}", KIND_CLIENT, start)
        span.attributes.update(
            {
                "gen_ai.operation.name": "chat",
                **model,
                "gen_ai.agent.name": name,
                "gen_ai.agent.id": agent_id(self.trace.run_id, name),
                "minutes.task_id": e.task_id,
                "minutes.turn": e.turn,
            }
        )
        return span

    def take_model_call(self, rec: Recorded) -> Span:
        """The open call this answer belongs to; without ModelCalled (reference journals) the
        call is taken to start at the agent's previous event."""
        run = self.trace.agent_of(rec)
        span = run.model_call or self.open_model_call(rec, run, run.last)
        run.model_call = None
        return span

    def on_model_responded(self, rec: Recorded, e: ModelResponded) -> None:
        span = self.take_model_call(rec)
        served = e.served or Served()
        span.attributes.update(
            {
                **usage_attributes(e.usage),
                "minutes.tool_calls": None if e.tool_calls is None else len(e.tool_calls),
                "gen_ai.response.finish_reasons": finish_reasons(e),
                "gen_ai.response.model": served.model,
                "gen_ai.response.id": served.response_id,
                "server.address": served.server_address,
                "server.port": served.server_port,
            }
        )
        if served.asked:  # what this call asked for, where the settings name no model
            span.attributes["gen_ai.request.model"] = served.asked
        span.close(self.trace.now)
        if self.trace.options.content and e.text is not None:
            run = self.trace.agents.get(agent_name(e))
            said = conversation.answered(run, e, self.trace.limit)
            span.attributes["gen_ai.output.messages"] = said
        self.trace.final(span)

    def on_nudged(self, e: AgentNudged) -> None:
        """The loop's word to the agent is a user message of its next window."""
        run = self.trace.agents.get(agent_name(e))
        if self.trace.options.content and run is not None:
            conversation.nudged(run, content.clean(e.text, self.trace.limit))

    def on_model_failed(self, rec: Recorded, e: ModelFailed) -> None:
        call = self.take_model_call(rec)
        if e.usage is not None:  # paid for all the same: billed, so counted on its span too
            call.attributes.update(usage_attributes(e.usage))
        call.close(
            self.trace.now, e.error.type, self.trace.status_text(e.error.message, e.error.type)
        )
        self.trace.final(call)
        if e.error.type == EndpointDown.__name__ and e.usage is not None:
            return  # an outage after a paid part of the call: it asks again (runtime/loop.py)
        # A model error propagates out of the agent loop: the agent's run ends with it.
        why = self.trace.status_text(e.error.message, e.error.type, "the model failed: ")
        self.trace.close_agent(agent_name(e), self.trace.now, e.error.type, why)

    # --- tool calls ----------------------------------------------------------------------------

    def on_tool_dispatched(self, rec: Recorded, e: ToolDispatched) -> None:
        run = self.trace.agent_of(rec)
        key = call_key(e)
        earlier = run.tools.get(key)
        if earlier is not None and earlier.attempts == 0:
            self.dangling_tool(run, earlier, run.last, "the call was dispatched again")
        run.tools[key] = ToolCall(rec, self.trace.now)

    def on_tool_returned(self, rec: Recorded, e: ToolReturned) -> None:
        run = self.trace.agent_of(rec)
        key = call_key(e)
        call = run.tools.get(key) or ToolCall(rec, run.last)  # a return with no dispatch
        span = self.open_tool_span(rec, run, e, call.since)
        span.attributes["minutes.tool.attempt"] = e.attempt
        if self.trace.options.content:
            asked = call.dispatched.event
            if isinstance(asked, ToolDispatched) and asked.args is not None:
                known = run.asked.get(asked.call_id) if asked.call_id else None
                if known is not None and known[0] == asked.args:
                    span.attributes["gen_ai.tool.call.arguments"] = known[1]  # cleaned already
                else:
                    self.trace.put(span, "gen_ai.tool.call.arguments", asked.args)
            answer = e.result if e.error is None else str(e.error)
            said = content.clean(answer, self.trace.limit)  # once, for the span and the history
            if answer is not None:
                span.attributes["gen_ai.tool.call.result"] = said
            run.history.append(content.message_json(content.tool_response(e.call_id, said)))
        if e.error is not None:
            span.close(
                self.trace.now, e.error.type, self.trace.status_text(e.error.message, e.error.type)
            )
            call.attempts += 1
            call.since = self.trace.now
            run.tools[key] = call  # the loop may try again
        else:
            span.close(self.trace.now)
            run.tools.pop(key, None)
        self.trace.final(span)

    def dangling_tool(self, run: AgentRun, call: ToolCall, at: int, why: str) -> None:
        """The span of a dispatched call that never came back."""
        e = call.dispatched.event
        assert isinstance(e, ToolDispatched)
        span = self.open_tool_span(call.dispatched, run, e, call.since)
        message = f"no ToolReturned was recorded for {e.tool} (call {e.call_id}): {why}"
        span.close(max(at, call.since), UNFINISHED, message)
        self.trace.final(span)

    def open_tool_span(
        self, rec: Recorded, run: AgentRun, e: ToolDispatched | ToolReturned, start: int
    ) -> Span:
        span = self.trace.open(
            rec, "tool", run.span.span_id, f"execute_tool {e.tool}", KIND_INTERNAL, start
        )
        span.attributes.update(
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": e.tool,
                "gen_ai.tool.call.id": e.call_id,
                "gen_ai.tool.type": "function",
                "gen_ai.agent.name": agent_name(e),
                "gen_ai.agent.id": agent_id(self.trace.run_id, agent_name(e)),
                "minutes.task_id": e.task_id,
                "minutes.turn": e.turn,
            }
        )
        return span
