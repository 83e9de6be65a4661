"""Keys and hashes of intents, derived from what is asked, never made up by a model: the same
run, step, target and payload, the same effect key (runtime/coordination/effects.py); the same
request, the same hash, which says whether a key is used again for another request. Claims and
conflicts take their ids from the same canonical form (runtime/coordination/claims.py)."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def effect_key(run_id: str, step: str, target: str, payload: Any) -> str:
    """The idempotency key of an intent: the same run, step, target and payload, the same key."""
    digest = hashlib.sha256(canonical([run_id, step, target, payload]).encode()).hexdigest()
    return "fx-" + digest[:40]


def request_hash(effect_type: str, target: str, payload: Any) -> str:
    return hashlib.sha256(canonical([effect_type, target, payload]).encode()).hexdigest()[:32]
