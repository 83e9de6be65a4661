"""The web dashboard and audit explorer: the pages, the JSON API, and the commands people run.

What lives here:
    queries.py     what the pages and the API read: the runs list and its filter, a run's
                   events (decoded by the journal) and minutes, the review queues
    actions.py     what people do to runs (start, interrupt, resume): pages, API and commands
    errors.py      which HTTP status answers each typed refusal of the services
    access.py      who may see and do what
    downloads.py   a run's files: its journal as JSONL, its trace as OTLP/JSON
    present.py     how the pages show events, durations and the bill's chart
    views/         the pages (function views and htmx partials); urls.py routes them
    api/           the JSON API (a router per area, typed schemas, refusal handlers)
    query_string.py  an address's query read as sent: a parameter given twice, or escapes
                   that are no UTF-8, refused naming it before any page or API path reads it
    forms.py  signin.py  security.py  uploads.py  models.py (API tokens)  management/commands/

May import: django and its add-ons, services (what people ask of runs, letters, conflicts,
intents), journal_store, runtime (and the teams, for the list a form offers); never tasks
(services enqueue work by name). Nothing below imports dashboard. The pages and the API never
import each other: what both need lives in queries, actions, errors, access and downloads.
"""
