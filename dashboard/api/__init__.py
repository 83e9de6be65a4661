"""The JSON API (django-ninja; OpenAPI at /api/docs): what the pages do, for scripts.

What lives here, one module each: `auth` (bearer tokens, the session, the docs' guard),
`openapi` (the API class and what it adds to the schema), `schemas` (every body in and out;
`minutes` those of a run's bill, threads, audit, metrics and findings),
`errors` (a handler per typed refusal), `fork_refusals` (a fork's checks that need the run,
said in the body's 422), `paging`, `head` (HEAD answered as GET, a
middleware), and a router per area: `runs`, `journals`,
`review`, `intents`, `search`, `metrics`. This module builds `api` from them; config/urls.py
mounts it.

May import: django, ninja, dashboard's shared layers (`queries`, `actions`, `downloads`,
`access`, `errors`, `models`, `signin`), services, journal_store and runtime. It never imports
dashboard.views: pages and API share those layers instead of each other.
"""

from ninja.openapi.docs import Swagger

from dashboard.api import compare, errors, intents, journals, metrics, review, runs, search
from dashboard.api.auth import AUTH, signed_in_docs
from dashboard.api.body import BodyParser
from dashboard.api.openapi import MinutesAPI

api = MinutesAPI(
    title="Minutes",
    version="1",
    # Markdown, which the docs page shows at its top: its way back to the pages, which
    # Swagger UI's own page has none of.
    description=(
        "Runs of LLM agent teams, their minutes, and the review queues. "
        "Signed in, operations run from this page on your session; scripts send "
        "`Authorization: Bearer <token>` (`manage.py api_token <username>`). "
        "[← Back to Minutes](/)"
    ),
    # Swagger UI from django-ninja's own static files ("ninja" is an installed app), never a
    # CDN: the docs work offline and under our Content-Security-Policy. No validator badge:
    # it would send the schema to a public validator.
    docs=Swagger(settings={"validatorUrl": None}),
    docs_decorator=signed_in_docs,
    auth=AUTH,
    urls_namespace="api",
    parser=BodyParser(),
)
errors.register(api)
# Before /runs: "compare" would otherwise be read as a run id (no run may have it as its id:
# runtime/streams.RESERVED).
api.add_router("/runs/compare", compare.router)
api.add_router("/runs", runs.router)
api.add_router("/journals", journals.router)
api.add_router("/review", review.router)
api.add_router("/intents", intents.router)
api.add_router("/search", search.router)
api.add_router("/metrics", metrics.router)

__all__ = ["api"]
