"""Idempotency keys for starting and forking runs: a start or a fork sent again with the key it
was first sent with makes nothing new; it answers the run the first one made.

A script that starts a run and loses the answer (a timeout, a dropped connection) cannot tell
whether the run began. Sent again without a key, the start begins a second run and spends a
second allowance. With a key, the run's id is worked out from the key, the person and what is
started (`run_id`), and the run's TeamStarted is appended at version 0 of that id's stream
(runs.begin): a start sent again finds the run there and answers it, before anything is
planned or checked, as long as it asks for the same (the request's own fields, which the
TeamStarted keeps as `asked`; asked for others, it is refused naming them, nothing written).
Two sent at once are the same: one append wins, the other finds its run. A key names its run
for good.

The id is an HMAC under a secret of the server's (derived from Django's SECRET_KEY): nobody
without it can work out which id someone else's key names. Were it a plain hash of the key and
the person (as it was), anyone could, and an import, which keeps its file's run ids, could put
a run there first: the owner's start, sent later, was then answered that run, or refused for
settings they never asked for. A run found at the id that is not the requester's to be
answered (imported from a file, begun by someone else, begun without a key) is refused as
KeyTaken (a 409: choose another key), never answered as theirs.

The ids of keys sent before the HMAC (or before SECRET_KEY changed) are not worked out again:
such a key sent once more names another id and begins a second run. Keys are for a retry
within minutes of the first request, so this costs at most one run for a retry that spans the
upgrade; finding the old ids too would bring back what the HMAC closes.

The command line keys its runs under a name of its own (`command_line`), which no person
signing in can have: a web user named "operator" does not share the command line's keys.

A fork (services/forks.py) is the same, keyed on the run it forks: sent again, it finds its
RunForked in the fork's journal and answers that fork, its workspace and journal untouched.

The key's rules and its derivation are the runtime's (runtime/keys.py), whose command line's
`python -m runtime fork --key` names its forks on a journal file without a secret (it says
why).
"""

from __future__ import annotations

from django.conf import settings
from django.utils.crypto import salted_hmac

from runtime import fork
from runtime import keys as derive
from runtime.keys import KEY_MAX, KEY_RULE, refusal

__all__ = ["KEY_MAX", "KEY_RULE", "command_line", "fork_id", "refusal", "run_id", "secret"]

# Django's usernames are letters, digits and @ . + - _ (its username validator): none has ':'.
COMMAND_LINE = "cli:"


def secret() -> bytes:
    """The key the server's ids are worked out under: derived from SECRET_KEY for this use
    alone (salted, as Django derives its own keys), never SECRET_KEY itself."""
    return salted_hmac("minutes.idempotency-key", b"", secret=settings.SECRET_KEY).digest()


def run_id(key: str, by: str, what: str) -> str:
    """The id of the run that `what` asked by `by` with `key` makes, on this server."""
    return derive.run_id(key, by, what, secret())


def fork_id(key: str, by: str, parent: str) -> str:
    """The id of the fork of run `parent` that `by` asks for with `key`, on this server."""
    return fork.keyed_id(key, by, parent, secret())


def command_line(name: str) -> str:
    """Who the command line's keys are keyed as: `name` (the run's starter, "operator") in a
    space of names no person signing in has."""
    return COMMAND_LINE + name
