"""Intents carried by every team: the run states what it serves, with a version, once.

The support desk declares its ticket's intent when it opens the order; the other teams (repo-fix,
triage, solo) call `carry` at their start: the intent `task-<run>` is declared with the run's
task as its statement (or found, when a person declared or superseded it first) and the version
the run starts under is journalled as IntentCarried. Every mutation the run makes carries that
(id, version) to the mutation gate, which refuses it once a person has superseded the intent
(`POST /api/intents/<id>`, `manage.py supersede_intent`).

Live only: resumed or replayed, the recorded IntentCarried is read back (a replay writes no
intent stream); a journal written before teams carried intents records none here, and none is
made up — its run carries no intent, and a live mutation it makes is refused at the gate.
"""

from __future__ import annotations

from runtime.coordination.gates import Intents
from runtime.events import IntentCarried
from runtime.session import Session


def task_intent(run_id: str) -> str:
    """The id of the intent a team's run serves when nothing else names one."""
    return f"task-{run_id}"


def carry(
    session: Session, statement: str, intent_id: str | None = None, by: str = "harness"
) -> tuple[str, int] | None:
    """The (intent id, version) the run serves; None for a journal from before intents."""
    recorded = session.peek()
    if isinstance(recorded, IntentCarried):
        session.emit(recorded)
        return recorded.intent_id, recorded.intent_version
    if not session.live or session.replay:
        return None
    intent_id = intent_id or task_intent(session.run_id)
    intents = Intents(session.journal)
    try:
        intent = intents.current(intent_id)
    except KeyError:
        intent = intents.declare(intent_id, statement, by=by, reason="the run's task")
    session.emit(
        session.new(
            IntentCarried,
            intent_id=intent.intent_id,
            intent_version=intent.version,
            statement=intent.statement,
        )
    )
    return intent.intent_id, intent.version
