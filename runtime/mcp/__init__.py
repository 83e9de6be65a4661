"""Tools from MCP servers: `client` is the surface agents use (servers over stdio, namespaced
`server.tool`, degraded servers marked and routed around); `listing`, what of a server's tool
listing it takes, and what it refuses; `stderr`, the end of a server's stderr, all it keeps;
`lines`, the bound on one line of a server's stdout; `replies`, what a server's answers
become on the client's side.

The servers themselves belong to the teams that use them (`teams.triage.servers`). May import
the rest of `runtime` and the MCP SDK; never a team.
"""
