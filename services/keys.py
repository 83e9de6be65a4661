"""Idempotency keys for starting runs: a start sent again with the key it was first sent with
begins nothing new; it answers the run the first one began.

A script that starts a run and loses the answer (a timeout, a dropped connection) cannot tell
whether the run began. Sent again without a key, the start begins a second run and spends a
second allowance. With a key, the run's id is worked out from the key, the person and what is
started (`run_id`), and the run's TeamStarted is appended at version 0 of that id's stream
(runs.begin): a start sent again finds the run there and answers it, as long as it asks for the
same settings (asked for others, it is refused naming them, nothing written). Two sent at once
are the same: one append wins, the other finds its run. A key names its run for good.
"""

from __future__ import annotations

import hashlib
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


def run_id(key: str, by: str, what: str) -> str:
    """The id of the run that the start `what` (a team run, the baseline of run X) sent by
    `by` with `key` begins: the same for the same three, whoever computes it. Another person's
    key, or the same key on another start, names another run."""
    digest = hashlib.sha256("\0".join((what, by, key)).encode()).hexdigest()
    return "r-" + digest[:12]  # the shape of flight.new_run_id's ids
