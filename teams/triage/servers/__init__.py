"""Three small MCP servers for the support-triage team, each runnable over stdio.

`orders` and `kb` answer from built-in data; `policy` starts and advertises its tools but fails
every call, so the surface's degraded-server handling has a real, reproducible case.

Each runs as a process of its own, started by its file (`python -P teams/triage/servers/<name>.py`,
as surface.py does; `python -m teams.triage.servers.<name>` works too, but first imports the
packages `teams` and `teams.triage`, every team): a server imports the MCP SDK and the standard
library only, never `runtime` or another module of the project, so starting one stays cheap.

And ending one: at the end of its session (its stdin closed) a server freezes what it made
(gc.freeze), where the interpreter's collections on the way out went through the SDK's some
85,000 objects again, ~1 s a server that the surface's close waited on: a surface of the three
closed in 0.13 s where 1.46 (medians of 6, in turns, a loaded machine).
"""
