"""MCP server `kb`: keyword search over a small built-in knowledge base of support articles.

Run with `python -P teams/triage/servers/kb.py`. Scoring is deliberately simple and predictable (a
title hit outweighs a tag hit, which outweighs a body hit), so a test or a scripted model can
know which article comes first.
"""

from __future__ import annotations

import gc
import re
from typing import Any

from mcp.server.mcpserver import MCPServer

ARTICLES: tuple[dict[str, Any], ...] = (
    {
        "id": "KB-101",
        "title": "How returns work",
        "tags": ["returns", "return", "label"],
        "body": (
            "Items can be returned within 30 days of delivery. Start a return from the order "
            "page to get a prepaid label. Items must be unused and in their original packaging."
        ),
    },
    {
        "id": "KB-102",
        "title": "Refund timelines",
        "tags": ["refund", "refunds", "money"],
        "body": (
            "Refunds are issued to the original payment method within 5 business days of the "
            "return being received. Card refunds can take a further 3 to 5 days to appear."
        ),
    },
    {
        "id": "KB-103",
        "title": "Shipping delays and lost parcels",
        "tags": ["delay", "delayed", "late", "lost", "shipping", "carrier"],
        "body": (
            "If an order is more than 5 days late, contact the carrier with the tracking number. "
            "A parcel with no tracking update for 10 days is treated as lost and reshipped free."
        ),
    },
    {
        "id": "KB-104",
        "title": "Damaged or broken items",
        "tags": ["damaged", "broken", "cracked", "defective"],
        "body": (
            "Report a damaged item within 14 days of delivery with a photo of the damage. We "
            "send a replacement or a full refund; the damaged item does not need to be returned."
        ),
    },
    {
        "id": "KB-105",
        "title": "Cancelling an order",
        "tags": ["cancel", "cancellation", "processing"],
        "body": (
            "An order can be cancelled while it is still processing. Once shipped it cannot be "
            "cancelled, but it can be returned after delivery."
        ),
    },
    {
        "id": "KB-106",
        "title": "Duplicate charges",
        "tags": ["charge", "charged", "twice", "duplicate", "billing"],
        "body": (
            "A duplicate charge is usually a pending authorisation that drops off within 3 days. "
            "If both charges settle, the duplicate is refunded automatically."
        ),
    },
    {
        "id": "KB-107",
        "title": "Changing a delivery address",
        "tags": ["address", "delivery", "change"],
        "body": (
            "The delivery address can be changed until the order ships. After shipping, ask "
            "the carrier to redirect the parcel using the tracking number."
        ),
    },
    {
        "id": "KB-108",
        "title": "Warranty claims",
        "tags": ["warranty", "repair", "defective", "faulty"],
        "body": (
            "Electrical items carry a 2-year warranty. A faulty item after the 30-day return "
            "window is repaired or replaced under warranty; keep the order number to hand."
        ),
    },
)

TITLE_WEIGHT, TAG_WEIGHT, BODY_WEIGHT = 3, 2, 1
STOPWORDS = frozenset(
    {"a", "an", "and", "be", "for", "how", "i", "in", "is", "it", "my", "not", "of", "on"}
    | {"the", "to", "was", "were", "what", "with"}
)

server = MCPServer(
    "kb",
    instructions="Search the customer-support knowledge base.",
    log_level="WARNING",
)


def words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOPWORDS]


def score(article: dict[str, Any], terms: set[str]) -> int:
    title, body = set(words(article["title"])), words(article["body"])
    tags = set(article["tags"])
    return sum(
        TITLE_WEIGHT * (term in title)
        + TAG_WEIGHT * (term in tags)
        + BODY_WEIGHT * body.count(term)
        for term in terms
    )


def snippet(body: str, terms: set[str], width: int = 160) -> str:
    """The first sentence that mentions a search term, else the opening of the article."""
    sentences = re.split(r"(?<=[.!?])\s+", body)
    chosen = next((s for s in sentences if terms & set(words(s))), sentences[0])
    return chosen if len(chosen) <= width else chosen[: width - 1].rstrip() + "…"


@server.tool()
def search(query: str, limit: int = 3) -> dict[str, Any]:
    """Search support articles by keywords; best matches first, each with id, title, snippet."""
    terms = set(words(query))
    scored = [(score(article, terms), article) for article in ARTICLES]
    hits = sorted((pair for pair in scored if pair[0] > 0), key=lambda pair: -pair[0])
    return {
        "query": query,
        "articles": [
            {
                "id": article["id"],
                "title": article["title"],
                "snippet": snippet(article["body"], terms),
                "score": points,
            }
            for points, article in hits[: max(limit, 1)]
        ],
    }


if __name__ == "__main__":
    server.run("stdio")
    # The session is over: what the process made (the SDK's schemas, some 85,000 objects) is
    # not collected again on the way out, which took ~1 s that its client waited on
    # (servers/__init__.py).
    gc.freeze()
