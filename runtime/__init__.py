"""The agent runtime, plain Python: no Django, and no team by name.

Events and the journal protocol (JSONL and in-memory journals), the agent loop, tools, the
session (resume and replay), replayable errors, messages, the coordination primitives
(`coordination/`), the generic fan-out engine (`fanout/`), the MCP client (`mcp/`), views,
diagnosis, model clients, OTLP export and the command line (`python -m runtime`).

What a team is to the runtime is `team.py` (the contract a team fills in); which teams exist
is `plugins.py` (entry points, group `minutes.teams`). May import the standard library,
pydantic, jsonschema and the MCP SDK; never Django, `teams`, `tasks`, `journal_store` or
`dashboard`.
"""
