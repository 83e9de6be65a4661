"""Idempotency keys: a request sent again with the key it was first sent with makes nothing
new; it is answered what the first one made.

A key names a run: `run_id` works it out from the key, the person and what is asked (a team
run, the baseline of run X, a fork of run X). Whatever makes the run writes its first event at
version 0 of that id's stream, so a request sent again, or two sent at once, find the run there
(one append wins) and are answered it. The server's starts and forks read them as
services/keys.py, under the server's secret; the command line's `fork --key` here, without one.

Under a secret (the server's), the id is an HMAC: nobody without the secret can work out the
id someone else's key names, so nobody can put a run there before its owner asks (an import
keeps its file's run ids). Without one (`python -m runtime fork --key` on a journal file), a
plain hash: a journal file is one person's, and whoever can write to it can write any run in
it already, so a secret kept beside it would guard nothing; and the ids it names are never the
server's, which are under the server's secret.
"""

from __future__ import annotations

import hashlib
import hmac
import re

KEY_MAX = 255
KEY_RULE = f"1 to {KEY_MAX} visible ASCII characters (letters, digits and punctuation, no spaces)"
_KEY = re.compile(rf"[!-~]{{1,{KEY_MAX}}}")


def refusal(key: str) -> str | None:
    """Why `key` cannot be an idempotency key, or None when it can."""
    if _KEY.fullmatch(key):
        return None
    if len(key) > KEY_MAX:
        return f"the key is {len(key):,} characters; it is {KEY_RULE}"
    return f"the key is {KEY_RULE}"


def run_id(key: str, by: str, what: str, secret: bytes = b"") -> str:
    """The id of the run that `what` (a team run, the baseline of run X, a fork of run X)
    asked by `by` with `key` makes: the same for the same three under the same `secret`.
    Another person's key, or the same key on another request, names another run. With a
    secret, an HMAC under it, which only its holder can work out; without, a plain hash."""
    message = "\0".join((what, by, key)).encode()
    if secret:
        digest = hmac.new(secret, message, hashlib.sha256).hexdigest()
    else:
        digest = hashlib.sha256(message).hexdigest()
    return "r-" + digest[:12]  # the shape of flight.new_run_id's ids
