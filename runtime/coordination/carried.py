"""Intents carried by every team: the run states what it serves, with a version, once.

The support desk declares its ticket's intent when it opens the order; the other teams (repo-fix,
triage, solo) call `carry` at their start: the intent `task-<run>`, whose first version is the
run's task, journalled in the run as IntentCarried (not a person's IntentDeclared: see
`gates.Intents`). Every mutation the run makes carries that (id, version) to the mutation gate,
which refuses it once a person has superseded the intent (`POST /api/intents/<id>`,
`manage.py supersede_intent`: the new version goes to `intent-task-<run>`).

Live only: resumed or replayed, the recorded IntentCarried is read back (a replay writes no
intent stream); a journal written before teams carried intents records none here, and none is
made up — its run carries no intent, and a live mutation it makes is refused at the gate.
"""

from __future__ import annotations

from runtime.coordination.gates import TASK, Intents
from runtime.events import IntentCarried
from runtime.session import Session


def task_intent(run_id: str) -> str:
    """The id of the intent a team's run serves when nothing else names one."""
    return f"{TASK}{run_id}"


def carry(session: Session, statement: str, intent_id: str | None = None) -> tuple[str, int] | None:
    """The (intent id, version) the run serves; None for a journal from before intents."""
    recorded = session.peek()
    if isinstance(recorded, IntentCarried):
        session.emit(recorded)
        return recorded.intent_id, recorded.intent_version
    if not session.live or session.replay:
        return None
    intent_id = intent_id or task_intent(session.run_id)
    version = 1  # its first version, unless a person declared it already
    latest = Intents(session.journal).latest(intent_id)
    if latest is not None:
        version, statement = latest.intent_version, latest.statement
    session.emit(
        session.new(IntentCarried, intent_id=intent_id, intent_version=version, statement=statement)
    )
    return intent_id, version
