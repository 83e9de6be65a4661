"""What the runs' endpoints take and give (dashboard/api/runs.py, run_detail.py, paging.py):
a run, its events, its replay, a fork of it and its tags. The bodies shared by every endpoint
(`In`, `Error`) are in schemas.py."""

# No `from __future__ import annotations` here: django-ninja reads the annotations at runtime
# to build its models, and a Literal left as a string makes them unusable.

import json
import re
from datetime import datetime
from typing import Annotated, Any, ClassVar, Literal

from ninja import Field, Schema
from pydantic import (
    AfterValidator,
    ConfigDict,
    ModelWrapValidatorHandler,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from dashboard import actions, asked, listing, queries
from dashboard.api import fork_refusals
from dashboard.api.errors import refused_also, refused_as
from dashboard.api.schemas import In
from journal_store.models import RunSummary
from runtime import fork_checks, keys, written
from runtime.events import EventFormatError

# --- runs ---------------------------------------------------------------------------------------


class RunOut(Schema):
    run_id: str
    team: str
    scenario: str
    task: str
    status: str = Field(
        description="see runtime/status.py: running, interrupted, "
        "dead-lettered, or the harness's verdict"
    )
    stage: str = Field(
        description="plan, fix, review, verify, complete, waiting (for a person's decision), or "
        "finishing (a person discarded the work it stopped on: it goes on to its end without it)"
    )
    waiting_for: str = Field(
        "", description="at stage waiting: conflict, dead letter, or both (comma-separated)"
    )
    waiting_since: datetime | None = Field(
        None,
        description="when the oldest of its conflicts and dead letters still waiting for a "
        "person was opened (the time its event was recorded); null when none waits",
    )
    started_by: str
    started_at: datetime | None
    finished_at: datetime | None
    waited_seconds: float = Field(
        0.0,
        description="how long the run stood still (interrupted, dead-lettered) before it "
        "went on; its duration is finished_at less started_at less this",
    )
    tokens: int
    allowance: int | None
    spent: int
    event_count: int
    findings_count: int
    reason: str
    cost: float | None = Field(None, description="in the price table's currency; None: unknown")
    parent_id: str = Field("", description="the run this one was forked from (empty: none)")
    fork_at: int | None = Field(
        None, description="the position of the parent's event it was forked after"
    )
    stalled_since: datetime | None = Field(
        None,
        description="set while a running run has nobody driving it and no step on its way "
        "(its worker died, or no worker is running); it is queued again automatically",
    )

    @staticmethod
    def resolve_fork_at(run: RunSummary) -> int | None:
        # As the run's page cites it: a fork imported from elsewhere names a position of the
        # journal it was made in, which here is another run's event (queries.fork_points).
        if not run.parent_id:
            return None
        if hasattr(run, "fork_point"):  # worked out for the page (dashboard/api/paging.py)
            return run.fork_point  # type: ignore[no-any-return]
        return queries.fork_points([(run.run_id, run.parent_id, run.fork_at)]).get(run.run_id)

    @staticmethod
    def resolve_waited_seconds(run: RunSummary) -> float:
        return run.waited.total_seconds()

    @staticmethod
    def resolve_stalled_since(run: RunSummary) -> datetime | None:
        if not hasattr(run, "stalled_since"):
            listing.mark_stalled([run])
        return run.stalled_since  # type: ignore[attr-defined,no-any-return]


class RunIn(In):
    # The body the API docs' "Try it out" offers: drawn from the types alone it was
    # {"scenario": "string", "task": "string", ...}, which the endpoint refuses.
    model_config = ConfigDict(
        json_schema_extra={"example": {"team": "repo-fix", "scenario": "first-flight"}}
    )
    # A NUL in the task is refused by NewRun.task_refusals with the task's other refusals (a
    # scripted backend's, its length), where In's refusal of it alone hid them until mended;
    # in the scenario by NewRun.scenario_refusals, with "no scenario of the team".
    judged_whole: ClassVar[frozenset[str]] = frozenset({"task", "scenario"})

    team: str = Field("repo-fix", max_length=64)
    # Its length too is refused with its other refusals (NewRun.scenario_refusals): with a
    # max_length here, half a UTF-16 pair in it was pydantic's "not a unicode string".
    scenario: (
        Annotated[str, Field(json_schema_extra={"maxLength": actions.SCENARIO_MAX})] | None
    ) = Field(None, description="None: the team's own first scenario")
    # Its length is refused with its other refusals (actions.NewRun.task_refusals): a
    # max_length here answered it alone, and a long task for the scripted backend was then
    # refused a second time. The schema still shows the limit.
    task: Annotated[str, Field(json_schema_extra={"maxLength": actions.TASK_MAX})] | None = Field(
        None,
        description="a task of your own (a model backend only: scripted agents say what the "
        "scenario scripts); None: the scenario's own",
    )
    model: Literal["scripted", "endpoint", "local", "openai"] = Field(
        "scripted",
        description="scripted; endpoint: the OpenAI-compatible server at MINUTES_MODEL_BASE_URL "
        "(openai is its old name); local: the local model server, which must be running "
        "(503 when it is not: the API never starts it)",
    )
    allowance: int | None = Field(None, ge=1, le=actions.ALLOWANCE_MAX, strict=True)
    max_turns: int | None = Field(None, ge=1, le=actions.TURNS_MAX, strict=True)
    # NaN passes no bound and fails none the way a person would read: refused as not finite.
    max_seconds: float | None = Field(
        None, ge=1, le=actions.SECONDS_MAX, allow_inf_nan=False, strict=True
    )
    order: str | None = Field(
        default=None,
        pattern=actions.ORDER,
        description="support-desk: the order the ticket is about (default: fresh)",
    )
    baseline: bool = Field(
        default=False,
        description="also fly the single-agent baseline (the solo coder on the same task, "
        "template and model), linked to this run; see /api/runs/{id}/comparison",
    )
    reflect: bool = Field(
        default=False,
        description="repo-fix: a critic reads the coder's first draft before review; a "
        "'revise' gets one revision, and the reviewer sees only the revision (billed on "
        "<task>:reflect)",
    )
    votes: Literal[1, 3, 5] | None = Field(
        default=None,
        description="samples of the team's critical decision and their majority: repo-fix's "
        "review (extra samples billed on <task>:vote), support-desk's refund (on T2:vote); "
        "None: the scenario's own (the only number a scripted deciding agent takes)",
    )

    @field_validator("team", mode="before")
    @classmethod
    def team_named(cls, value: Any) -> Any:
        """A blank team, or one not here, is a 422 naming the field in the new-run form's
        words, as other body problems are, where it went on to the service's 400 "unknown
        team 'nope'"."""
        if isinstance(value, str) and (why := actions.team_refusal(value)):
            raise PydanticCustomError("team", "{why}", {"why": why})
        return value

    @field_validator("order", mode="before")
    @classmethod
    def order_as_the_page_reads_it(cls, value: Any) -> Any:
        """The order as the new-run form reads it: stripped, blank as not given (a fresh
        order), and an id that is none refused in the form's sentence, where the 422 said
        pydantic's "String should match pattern '^[A-Za-z0-9]...'"."""
        if not isinstance(value, str):
            return value
        value = value.strip()
        if not value:
            return None
        if not re.match(actions.ORDER, value):
            raise PydanticCustomError("order", "{why}", {"why": actions.ORDER_REFUSAL})
        return value

    @model_validator(mode="wrap")
    @classmethod
    def every_fault_at_once(
        cls, data: Any, handler: ModelWrapValidatorHandler[Any], info: ValidationInfo
    ) -> Any:
        """A body the schema refuses is refused in the same 422 for what the run's request
        refuses of the fields it let through (actions.NewRun.refusals: the task's refusals, a
        scenario the team has not, a model endpoint this server cannot use), where those were
        said once the schema's faults were mended: an allowance of 0 with a long task for the
        scripted backend took two rounds. A sound body is the endpoint's to judge, after a
        keyed start sent again is answered (api/runs.start_run); but where its key is refused
        (the header's entry in this 422, `usable_key`) there is none to answer, and the body
        is judged here, so that its faults are said with the key's."""
        try:
            body = handler(data)
        except ValidationError as exc:
            refused = {error["loc"][0] for error in exc.errors() if error["loc"]}
            if not isinstance(data, dict) or not (also := beside_the_schema(data, refused)):
                raise
            raise refused_also(exc, also) from None
        if key_refused(info.context) and (found := actions.NewRun(**body.model_dump()).refusals()):
            raise refused_as(cls.__name__, found)
        return body

    @field_validator("votes", mode="before")
    @classmethod
    def no_loose_choice(cls, value: Any) -> Any:
        """A number of votes is a whole number: a Literal, strict or not, took true for 1 and
        3.0 for 3."""
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise PydanticCustomError(
                "literal_error", "Input should be 1, 3 or 5, a whole number", {}
            )
        return value


def beside_the_schema(body: dict[str, Any], refused: set[Any]) -> dict[str, list[str]]:
    """What NewRun refuses of the body's fields the schema did not `refuse`, as sent (the schema
    changes none of these). Not the order, which the schema judges itself in NewRun's words
    (read stripped, as the form reads it). Where the model is refused, the backend that is to
    run the task is not known: the task is refused only for what it is, whatever runs it."""
    sent = {
        name: body.get(name, RunIn.model_fields[name].default)
        for name in ("team", "scenario", "task", "model")
        if name not in refused
    }
    new_run = actions.NewRun(**{"team": "", "scenario": None, **sent})
    found = new_run.refusals()
    if "model" in refused and new_run.task is not None:
        found["task"] = actions.written_task_refusals(new_run.task)
    return {name: said for name, said in found.items() if said and name not in refused}


# --- the Idempotency-Key header of a start or a fork ---------------------------------------------

KEY_HEADER = "Idempotency-Key"


def usable_key(key: str) -> str:
    """The request's idempotency key ("" when it sends none), refused at the header when it
    cannot be one: django-ninja reads the header with the body, and answers their faults in
    one 422, where the endpoint refused the key once the body's were mended."""
    if key and (why := keys.refusal(key)):
        raise PydanticCustomError("value_error", why)  # invalid()'s entry: no ctx
    return key


def key_refused(context: Any) -> bool:
    """Whether the request being read (django-ninja's validation context holds it) sends an
    Idempotency-Key that usable_key refuses."""
    request = context.get("request") if isinstance(context, dict) else None
    key = request.headers.get(KEY_HEADER, "") if request is not None else ""
    return bool(key and keys.refusal(key))


class EventOut(Schema):
    position: int
    stream: str
    version: int
    kind: str
    v: int = Field(description="the schema version the event is given in (older ones upcast)")
    agent: str | None
    task_id: str | None
    turn: int | None
    t: float
    data: dict[str, Any] = Field(description="the event's own fields, by its kind")
    unreadable: str = Field(
        "",
        description="why no event model reads this row (a row rewritten in the table): its "
        "data is then empty; empty for every readable event",
    )


class ReasonIn(In):
    # Measured once its ends are trimmed, as the page's forms and the decisions' reasons are:
    # a reason of 2,000 characters pasted with a line break was refused here alone.
    reason: Annotated[
        str, StringConstraints(strip_whitespace=True, max_length=actions.REASON_MAX)
    ] = Field("")


class ReplayOut(Schema):
    identical: bool
    events: int
    complete: bool
    difference: str
    ended_by: str = Field(
        "",
        description="the reason of the verdict a person wrote from outside the harness (the "
        "run's dead letter discarded), which a replay cannot write; empty when none",
    )
    read_back: int = Field(
        0,
        description="the events of the run's parallel specialists, which the replay reads back "
        "from the record (their reports, as the run's journal holds them) and does not run "
        "again; `events` does not count them",
    )


# --- forks and tags -----------------------------------------------------------------------------


AGENT_MAX = 64  # characters of an agent's name a fork's body may give


def writable(value: Any) -> Any:
    """Text for an agent (a fork's message, its tool result) holds no control character but
    tabs and line breaks, as the fork page and the command line refuse it (runtime's one
    check: runtime/written.py); a NUL or half a pair is refused before, as in any body."""
    if why := written.unwritable(value):
        raise PydanticCustomError("text", "{why}", {"why": why})
    return value


class InjectedIn(In):
    agent: str = Field(max_length=AGENT_MAX)
    # Something to read: a message of spaces would fork a run whose agent reads nothing new.
    text: Annotated[str, AfterValidator(writable)] = Field(
        min_length=1, max_length=fork_checks.MESSAGE_MAX, pattern=r"\S"
    )


class ForkIn(In):
    """A fork of the run after its event at position `at`; each change is optional."""

    at: int = Field(
        strict=True,
        description="the position of the event to fork after",
        json_schema_extra={"minimum": 1, "maximum": asked.POSITION_MAX},
    )
    models: dict[
        str,
        Annotated[
            str,
            StringConstraints(
                max_length=210, pattern=r"^(scripted|endpoint|local|zi|rules)(:[!-~]{1,200})?$"
            ),
        ],
    ] = Field(
        default_factory=dict,
        max_length=32,
        description="another backend for some agents, from the fork on: scripted, endpoint, "
        "local, zi or rules; `endpoint:NAME` asks the endpoint for another model",
    )
    message: InjectedIn | None = Field(None, description="a message for an agent's next turn")
    tool_result: Annotated[Any, AfterValidator(writable)] = Field(
        None, description="replace the result of the tool call at `at` (a ToolReturned)"
    )
    # The new run's bounds (dashboard/actions.py), as on the fork page.
    max_turns: int | None = Field(None, ge=1, le=actions.TURNS_MAX, strict=True)
    allowance: int | None = Field(None, ge=1, le=actions.ALLOWANCE_MAX, strict=True)

    @field_validator("models", mode="before")
    @classmethod
    def agents_named_shortly(cls, value: Any) -> Any:
        """An agent's name no longer than a message's agent's: a longer key came back whole in
        the refusal, 50,000 characters of it (in the 422's `loc`, or "the run has no agent")."""
        for agent in value if isinstance(value, dict) else ():
            if isinstance(agent, str) and len(agent) > AGENT_MAX:
                why = f"{asked.shown(agent)}: an agent's name is at most {AGENT_MAX} characters"
                raise PydanticCustomError("agent", "{why}", {"why": why})
        return value

    @field_validator("at", mode="before")
    @classmethod
    def at_a_position(cls, value: Any) -> Any:
        """A position as the fork page reads its `at`, refused in its words, where the 422
        said pydantic's "Input should be a valid integer", "greater than or equal to 1" or
        "less than or equal to 4611686018427387904". A whole number no event of the run is
        at (0, or one past every position, among them) is refused naming the run, with the
        run's other checks (`every_fault_at_once`, or the endpoint)."""
        if isinstance(value, int) and not isinstance(value, bool):
            if value < 0:
                why = asked.not_a_position(str(value))
                raise PydanticCustomError("position", "{why}", {"why": why})
            return value
        # Not a whole number, as JSON has it: a string "5" is shown with its quotes.
        why = f"{asked.shown(json.dumps(value))} {asked.NOT_A_POSITION}"
        raise PydanticCustomError("position", "{why}", {"why": why})

    @model_validator(mode="wrap")
    @classmethod
    def every_fault_at_once(
        cls, data: Any, handler: ModelWrapValidatorHandler[Any], info: ValidationInfo
    ) -> Any:
        """A body the schema refuses is refused in the same 422 for what the fork's checks
        that need the run refuse of the fields it let through (api/fork_refusals.of_run: an
        `at` no event is at, an agent the run has not, an endpoint this server cannot use),
        where those were said once the schema's faults were mended: `{"at": 999999,
        "max_turns": 0}` took two rounds. A sound body is the endpoint's to judge; but where
        its Idempotency-Key is refused (`usable_key`), it is judged here, so that its faults
        are said with the key's."""
        try:
            body = handler(data)
        except ValidationError as exc:
            refused = {error["loc"][0] for error in exc.errors() if error["loc"]}
            if not isinstance(data, dict):
                raise
            also = of_the_run(info.context, *sent_changes(data, refused))
            if not (also := {k: v for k, v in also.items() if k not in refused}):
                raise
            raise refused_also(exc, also) from None
        if key_refused(info.context) and (
            found := of_the_run(info.context, body.at, body.changes())
        ):
            raise refused_as(cls.__name__, found)
        return body

    def changes(self) -> fork_checks.Changes:
        """What the fork is to change, as the service takes it."""
        return fork_checks.Changes(
            models=dict(self.models),
            message=(self.message.agent, self.message.text) if self.message else None,
            tool_result=self.tool_result,
            replace_result="tool_result" in self.model_fields_set,
            max_turns=self.max_turns,
            allowance=self.allowance,
        )


def sent_changes(body: dict[str, Any], refused: set[Any]) -> tuple[int | None, fork_checks.Changes]:
    """The fork's `at` and changes as sent, of the fields the schema did not `refuse` (which
    it took as sent: it changes none of them); a refused one as if not sent."""
    at = body.get("at") if "at" not in refused else None
    message = body.get("message") if "message" not in refused else None
    replaced = "tool_result" in body and "tool_result" not in refused
    return at, fork_checks.Changes(
        models=dict(body.get("models") or {}) if "models" not in refused else {},
        message=(message["agent"], message["text"]) if message else None,
        tool_result=body.get("tool_result") if replaced else None,
        replace_result=replaced,
    )


def of_the_run(context: Any, at: int | None, changes: fork_checks.Changes) -> dict[str, list[str]]:
    """What the fork's checks that need the run refuse (api/fork_refusals.of_run) of the run
    the request's address names, as the person asking sees it (django-ninja's validation
    context holds the request). Nothing where a row of the run reads as no event: the
    endpoint's 409 says so, once the body's other faults are mended."""
    request = context.get("request") if isinstance(context, dict) else None
    match = getattr(request, "resolver_match", None)
    run_id = match.kwargs.get("run_id") if match is not None else None
    if not isinstance(run_id, str):
        return {}
    try:
        return fork_refusals.of_run(request.user, run_id, at, changes)  # type: ignore[union-attr]
    except EventFormatError:
        return {}


class TagsIn(In):
    add: list[Annotated[str, StringConstraints(max_length=64)]] = Field(
        default_factory=list, max_length=20
    )
    remove: list[Annotated[str, StringConstraints(max_length=64)]] = Field(
        default_factory=list, max_length=20
    )


class TagsOut(Schema):
    tags: list[str]


class TaggedOut(TagsOut):
    unchanged: list[str] = Field(
        description="what of the request was so already, nothing journalled for it: "
        "'already tagged nightly' (capitals are lowered), 'not tagged x'"
    )
