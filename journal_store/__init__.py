"""The versioned event store in the database, its projections, and journal import/export.

What lives here: `journal` (the runtime's Journal protocol on Django's connection), `models`
(the event table and the read models), `projection` (the projectors and their checkpoints),
`queues` (each review queue described once), `transfer` and `admission` (JSONL import/export
and what an import may write).

May import: django and runtime. Never services, tasks, dashboard, desk or the teams.
"""
