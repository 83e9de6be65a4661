"""Typed messages between agents, and the post office that delivers them.

A message is a performative (a speech act) with a sender, a recipient, a task thread and a
payload. Sending and delivery are both journalled. Delivery is idempotent by message id: a
second delivery is recorded (so the journal shows it happened) and acts on nothing. Agents read
their mail at the top of a turn, where it enters the window as fresh context.
"""

from __future__ import annotations

import json
from collections import defaultdict
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from runtime.events import MessageDelivered, MessageSent
from runtime.model import ChatMessage
from runtime.session import Session


class Performative(StrEnum):
    REQUEST = "request"
    INFORM = "inform"
    PROPOSE = "propose"
    ACCEPT = "accept"
    REJECT = "reject"
    DONE = "done"
    ERROR = "error"


class Message(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    message_id: str
    performative: Performative
    sender: str
    recipient: str
    task_id: str
    payload: dict[str, Any] = Field(default_factory=dict)
    in_reply_to: str | None = None

    @classmethod
    def from_event(cls, event: MessageSent) -> Message:
        return cls(
            message_id=event.message_id or "",
            performative=Performative(event.performative.lower()),
            sender=event.sender,
            recipient=event.recipient,
            task_id=event.task_id or "",
            payload=event.payload or {},
            in_reply_to=event.in_reply_to,
        )

    def render(self) -> str:
        """How the message reads in the recipient's window."""
        head = f"[{self.performative.name} from {self.sender} on {self.task_id}, {self.message_id}]"
        return head + "\n" + json.dumps(self.payload, indent=1, ensure_ascii=False)


class PostOffice:
    """Inboxes for a team. Message ids are numbered in sending order, so a resumed or replayed
    run gives every message the id it had the first time."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.sent = 0
        self.inboxes: dict[str, list[Message]] = defaultdict(list)
        self.delivered: set[str] = set()
        self.log: list[Message] = []  # every message sent, in order

    def send(
        self,
        performative: Performative,
        sender: str,
        recipient: str,
        task_id: str,
        payload: dict[str, Any] | None = None,
        in_reply_to: str | None = None,
    ) -> Message:
        self.sent += 1
        message = Message(
            message_id=f"m-{self.sent:03d}",
            performative=performative,
            sender=sender,
            recipient=recipient,
            task_id=task_id,
            payload=payload or {},
            in_reply_to=in_reply_to,
        )
        self.session.emit(
            self.session.new(
                MessageSent,
                agent=sender,
                task_id=task_id,
                message_id=message.message_id,
                performative=message.performative.value,
                sender=sender,
                recipient=recipient,
                payload=message.payload,
                in_reply_to=in_reply_to,
            )
        )
        self.log.append(message)
        self.deliver(message)
        return message

    def deliver(self, message: Message) -> bool:
        """Put the message in its recipient's inbox once; a repeat is recorded and ignored."""
        duplicate = message.message_id in self.delivered
        self.session.emit(
            self.session.new(
                MessageDelivered,
                agent=message.recipient,
                task_id=message.task_id,
                message_id=message.message_id,
                recipient=message.recipient,
                duplicate=duplicate,
            )
        )
        if duplicate:
            return False
        self.delivered.add(message.message_id)
        self.inboxes[message.recipient].append(message)
        return True

    def collect(self, agent: str) -> list[Message]:
        """Take everything waiting in an agent's inbox."""
        waiting, self.inboxes[agent] = self.inboxes[agent], []
        return waiting

    def mailbox(self, agent: str) -> Mailbox:
        """The loop's mail hook for one run of `agent` (runtime/loop.py `mail`)."""
        return Mailbox(self, agent)


class Mailbox:
    """One run of an agent's mail: called at the top of each turn, it hands over the agent's
    new messages. It keeps what a loop snapshot needs (`Kept`, runtime/loop.py): which
    messages this run took, so a resume that skips the turns it took them in takes them out of
    the inbox again rather than handing them over twice."""

    def __init__(self, post: PostOffice, agent: str) -> None:
        self.post = post
        self.agent = agent
        self.began = post.sent  # messages sent before this run began
        self.taken: list[str] = []  # the ids this run took, in order

    def __call__(self) -> list[ChatMessage]:
        waiting = self.post.collect(self.agent)
        self.taken += [m.message_id for m in waiting]
        return [ChatMessage(role="user", content=m.render()) for m in waiting]

    def keep(self) -> dict[str, Any] | None:
        if self.post.sent != self.began:
            # Sent while the agent ran (a hook of the harness's): the post office holds what
            # a snapshot would not carry. Not kept; the loop tries again at its next one.
            return None
        return {"agent": self.agent, "began": self.began, "taken": list(self.taken)}

    def fits(self, state: Any) -> bool:
        if not isinstance(state, dict) or state.get("agent") != self.agent:
            return False
        taken = state.get("taken")
        if state.get("began") != self.post.sent or not isinstance(taken, list):
            return False
        waiting = [m.message_id for m in self.post.inboxes[self.agent]]
        return waiting[: len(taken)] == taken and not self.taken

    def take(self, state: dict[str, Any]) -> None:
        taken: list[str] = state["taken"]
        inbox = self.post.inboxes[self.agent]
        self.post.inboxes[self.agent] = inbox[len(taken) :]
        self.taken = list(taken)
