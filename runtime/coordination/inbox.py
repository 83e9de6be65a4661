"""Delivering messages between runs and processes: once, and never under a superseded intent.

A message's delivery is the stream `delivery-<message id>`: the first MessageDelivered at
version 0 acts; a second delivery (a redelivered task, a retried send) is recorded as a
duplicate in the recipient's inbox and acts on nothing. A message sent under an older version
of its intent is refused at delivery, and the refusal is journalled.
"""

from __future__ import annotations

from runtime.coordination.gates import Intents, Stale
from runtime.events import MessageDelivered, MessageSent, new_id
from runtime.journal import Journal, WrongExpectedVersion, append_next


class Inbox:
    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.intents = Intents(journal)

    @staticmethod
    def stream(recipient: str) -> str:
        return f"inbox-{recipient}"

    def deliver(self, message: MessageSent, intent: tuple[str, int] | None = None) -> bool:
        """True when this delivery acts; False for a duplicate. Raises Stale for a message of a
        superseded intent (and records the refusal in the recipient's inbox)."""
        assert message.message_id, "a message needs an id to be delivered once"
        inbox = self.stream(message.recipient)
        if intent is not None:
            self.intents.check(
                intent[0], intent[1], f"message {message.message_id}", inbox, run_id=message.run_id
            )
        delivered = MessageDelivered(
            run_id=message.run_id,
            task_id=message.task_id,
            message_id=message.message_id,
            recipient=message.recipient,
        )
        try:
            self.journal.append(f"delivery-{message.message_id}", [delivered], 0)
        except WrongExpectedVersion:
            duplicate = delivered.model_copy(update={"duplicate": True, "id": new_id()})
            append_next(self.journal, inbox, [duplicate])
            return False
        append_next(self.journal, inbox, [message])
        return True

    def received(self, recipient: str) -> list[MessageSent]:
        return [
            r.event
            for r in self.journal.read(self.stream(recipient))
            if isinstance(r.event, MessageSent)
        ]


__all__ = ["Inbox", "Stale"]
