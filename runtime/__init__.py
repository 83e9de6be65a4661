"""The agent runtime, plain Python: no Django, and no team by name.

Events and the journal protocol (JSONL and in-memory journals), stream names (`streams.py`),
the agent loop, tools, the session (resume and replay), a flight kept warm between steps
(`warm.py`), replayable errors, messages, the coordination primitives (`coordination/`), the
generic fan-out engine (`fanout/`), the MCP client (`mcp/`), views and diagnosis (and the
roles they read from a team, `roles.py`), model clients, OTLP export and the command line
(`python -m runtime`).

What a team is to the runtime is `team.py` (the contract a team fills in); which teams exist
is `plugins.py` (entry points, group `minutes.teams`). It reads no settings from the
environment: its hosts (the command line, the workers) pass them in. May import the standard
library, pydantic, jsonschema and the MCP SDK; never Django, `teams`, `services`, `tasks`,
`journal_store` or `dashboard`.
"""
