"""Tools from MCP servers: `client` is the surface agents use, `servers` the built-in servers.

Kept empty on purpose: a server started as `python -m runtime.mcp.servers.orders` imports this
package, and should not pay for (or depend on) the client side.
"""
