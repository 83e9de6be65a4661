"""Three small MCP servers for the support-triage team, each runnable over stdio.

`orders` and `kb` answer from built-in data; `policy` starts and advertises its tools but fails
every call, so the surface's degraded-server handling has a real, reproducible case.

Each runs as a process of its own (`python -m teams.triage.servers.<name>`): a server imports
the MCP SDK and the standard library only, never `runtime`, so starting one stays cheap.
"""
