"""Idempotency keys for starting and forking runs: a start or a fork sent again with the key it
was first sent with makes nothing new; it answers the run the first one made.

A script that starts a run and loses the answer (a timeout, a dropped connection) cannot tell
whether the run began. Sent again without a key, the start begins a second run and spends a
second allowance. With a key, the run's id is worked out from the key, the person and what is
started (`run_id`), and the run's TeamStarted is appended at version 0 of that id's stream
(runs.begin): a start sent again finds the run there and answers it, as long as it asks for the
same settings (asked for others, it is refused naming them, nothing written). Two sent at once
are the same: one append wins, the other finds its run. A key names its run for good.

A fork (services/forks.py) is the same, keyed on the run it forks: sent again, it finds its
RunForked in the fork's journal and answers that fork, its workspace and journal untouched.

The key's rules and its run id are the runtime's (runtime/keys.py), so that the command line's
`python -m runtime fork --key` names its forks by the same rule.
"""

from __future__ import annotations

from runtime.keys import KEY_MAX, KEY_RULE, refusal, run_id

__all__ = ["KEY_MAX", "KEY_RULE", "refusal", "run_id"]
