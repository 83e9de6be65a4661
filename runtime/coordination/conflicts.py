"""Typed conflicts: what kind of disagreement two claims are, and the rule that settles each kind.

Seed 02 §§12-13 and 35. "The agents disagree" is no diagnosis: two claims on one fact from the
same version may disagree because they saw different state, weigh different evidence, hold
different leases, serve different versions of the intent... Each kind has its own policy, and
most need no debate — a rule over the record decides. What no rule decides goes to the human
review queue (ConflictParked, with its type), and that is an allowed outcome, not an error.

    kind           told by (first that applies)                    decided by
    intent         the claims name different intent versions       the current (newest) version
    ownership      predicate about who owns/holds a thing          the higher lease epoch
    resource       predicate about a budget, slot or workspace     the first claim: it holds it
    plan           predicate about a plan or approach              the higher score under one
                                                                   common verifier
    verification   predicate about a verdict, or verifiers         nobody: independent
                   disagreeing                                     adjudication (a person)
    authority      predicate about who may do something            the authority ranking
    evidence       the claims rest on different kinds of source    the stronger source (state >
                                                                   verifier > model), then rank
    state          equals disagreeing about the state              authoritative state, then
                                                                   the authority ranking

A claim's evidence carries what its policy reads: `intent_version`, `epoch`, `score` with
`verifier`. Where it is missing the rule cannot decide, and the conflict is parked.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final, Literal, Protocol, get_args

from runtime.events import ClaimAsserted

ConflictType = Literal[
    "state", "evidence", "ownership", "authority", "verification", "plan", "intent", "resource"
]
TYPES: tuple[ConflictType, ...] = get_args(ConflictType)
SOURCE_RANK: Final[Mapping[str, int]] = {"state": 3, "verifier": 2, "model": 1}

# Predicates by the kind of fact they are about (the last dotted or dashed part counts).
PREDICATES: Final[Mapping[str, ConflictType]] = {
    "owner": "ownership",
    "holder": "ownership",
    "assignee": "ownership",
    "budget": "resource",
    "slot": "resource",
    "workspace": "resource",
    "plan": "plan",
    "approach": "plan",
    "verdict": "verification",
    "verified": "verification",
    "may": "authority",
    "authority": "authority",
}


class Ranking(Protocol):
    """Who ranks above whom on a predicate (`claims.Rules` is one)."""

    def rank(self, predicate: str, who: str) -> int: ...


@dataclass(frozen=True)
class Decision:
    winner: ClaimAsserted
    rule: str


Decide = Callable[[list[ClaimAsserted], str, Ranking], Decision | None]


@dataclass(frozen=True)
class Policy:
    """What settles one kind of conflict, in words (for the review queue) and in code."""

    kind: ConflictType
    rule: str
    decide: Decide


def classify(claims: list[ClaimAsserted]) -> ConflictType:
    """The kind of disagreement between these claims, from the claims alone."""
    versions = {c.evidence.get("intent_version") for c in claims}
    if len(versions) > 1 and None not in versions:
        return "intent"
    predicate = claims[0].predicate.replace("-", ".").split(".")[-1] if claims else ""
    if predicate in PREDICATES:
        return PREDICATES[predicate]
    sources = {c.source for c in claims}
    if sources == {"verifier"}:
        return "verification"
    return "evidence" if len(sources) > 1 else "state"


def _best(
    claims: list[ClaimAsserted], key: Callable[[ClaimAsserted], object]
) -> tuple[ClaimAsserted, ClaimAsserted] | None:
    """The first and second by `key`, highest first; None when the first is not ahead."""
    ranked = sorted(claims, key=key, reverse=True)  # type: ignore[arg-type]
    first, second = ranked[0], ranked[1]
    return (first, second) if key(first) != key(second) else None


def by_source_then_rank(
    claims: list[ClaimAsserted], predicate: str, rules: Ranking
) -> Decision | None:
    """Stronger evidence first (seed 02 §35), then the authority ranking on the predicate."""
    ranked = sorted(
        claims, key=lambda c: (SOURCE_RANK[c.source], rules.rank(predicate, c.by)), reverse=True
    )
    first, second = ranked[0], ranked[1]
    if SOURCE_RANK[first.source] > SOURCE_RANK[second.source]:
        return Decision(first, f"source: {first.source} over {second.source}")
    if rules.rank(predicate, first.by) > rules.rank(predicate, second.by):
        return Decision(first, f"authority on {predicate}: {first.by} over {second.by}")
    return None


def by_rank(claims: list[ClaimAsserted], predicate: str, rules: Ranking) -> Decision | None:
    top = _best(claims, lambda c: rules.rank(predicate, c.by))
    if top is None:
        return None
    return Decision(top[0], f"authority on {predicate}: {top[0].by} over {top[1].by}")


def _number(c: ClaimAsserted, field: str) -> float | None:
    value = c.evidence.get(field)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def by_number(field: str, say: str) -> Decide:
    """The claim whose evidence holds the highest `field`; all must hold one."""

    def decide(claims: list[ClaimAsserted], predicate: str, rules: Ranking) -> Decision | None:
        values = [_number(c, field) for c in claims]
        if any(v is None for v in values):
            return None
        top = _best(claims, lambda c: _number(c, field) or 0.0)
        if top is None:
            return None
        a, b = _number(top[0], field), _number(top[1], field)
        return Decision(top[0], f"{say}: {field} {a:g} over {b:g} ({top[0].by} over {top[1].by})")

    return decide


def by_common_verifier(
    claims: list[ClaimAsserted], predicate: str, rules: Ranking
) -> Decision | None:
    """Plans ranked by one verifier's scores: scores from different verifiers do not compare."""
    if len({c.evidence.get("verifier") for c in claims}) != 1 or not claims[0].evidence.get(
        "verifier"
    ):
        return None
    return by_number("score", f"plan ranked by {claims[0].evidence['verifier']}")(
        claims, predicate, rules
    )


def first_claim(claims: list[ClaimAsserted], predicate: str, rules: Ranking) -> Decision | None:
    """The claim made first holds the resource (claims come in journal order)."""
    first = claims[0]
    return Decision(first, f"resource: {first.by} claimed it first")


def nobody(claims: list[ClaimAsserted], predicate: str, rules: Ranking) -> Decision | None:
    return None


POLICIES: Final[Mapping[ConflictType, Policy]] = {
    p.kind: p
    for p in (
        Policy(
            "state",
            "fetch the authoritative state; then the authority ranking",
            by_source_then_rank,
        ),
        Policy(
            "evidence", "prefer the stronger source (state > verifier > model)", by_source_then_rank
        ),
        Policy(
            "ownership",
            "compare lease epochs: the higher epoch owns it",
            by_number("epoch", "ownership"),
        ),
        Policy("authority", "consult the control plane's authority ranking", by_rank),
        Policy("verification", "independent adjudication: a person decides", nobody),
        Policy("plan", "rank the candidates under one common verifier", by_common_verifier),
        Policy(
            "intent",
            "the current intent version supersedes older ones",
            by_number("intent_version", "intent"),
        ),
        Policy("resource", "the first claim holds the resource", first_claim),
    )
}


def resolve(claims: list[ClaimAsserted], rules: Ranking) -> tuple[ConflictType, Decision | None]:
    """The conflict's kind, and its policy's decision (None: the human review queue)."""
    kind = classify(claims)
    return kind, POLICIES[kind].decide(claims, claims[0].predicate, rules)
