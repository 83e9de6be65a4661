"""A performer that dies inside its call: the provider acts, then the process is gone before
the ledger hears the answer (BaseException, as a kill is: nothing the ledger catches)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Died(BaseException):
    pass


def dies(provider: Callable[[str], Any]) -> Callable[[str], Any]:
    def call(key: str) -> Any:
        provider(key)
        raise Died()

    return call
