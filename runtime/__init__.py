"""The agent runtime: plain Python (pydantic allowed), never Django, and no team by name.

What lives here: events (the journal's vocabulary) and the Journal protocol with its memory and
JSONL implementations; the agent loop, tools, sessions (replay and resume), messages between
agents; coordination primitives (effects, facts, claims, intents, leases) and the fan-out
engine; the MCP hub; model clients (scripted, replay, OpenAI-compatible); views and diagnosis
(pure folds); the OTLP export; the sandbox agent code runs in; the command line
(`python -m runtime`).

It may import the standard library, pydantic, jsonschema and the MCP SDK. Everything else
imports it: journal_store (the database journal), teams (the teams it flies), tasks and
dashboard.
"""
