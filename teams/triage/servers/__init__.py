"""Three small MCP servers for the support-triage team, each runnable over stdio.

`orders` and `kb` answer from built-in data; `policy` starts and advertises its tools but fails
every call, so the surface's degraded-server handling has a real, reproducible case.

Each runs as a process of its own, started by its file (`python -P teams/triage/servers/<name>.py`,
as surface.py does; `python -m teams.triage.servers.<name>` works too, but first imports the
packages `teams` and `teams.triage`, every team): a server imports the MCP SDK and the standard
library only, never `runtime` or another module of the project, so starting one stays cheap.
"""
