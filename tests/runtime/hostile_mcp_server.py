"""An MCP server over stdio that lists what it is told to, written as raw JSON-RPC so that it
can list what the SDK's own server would never send.

    python hostile_mcp_server.py LISTING.json

LISTING.json holds {"tools": [...]} (each with name, description, inputSchema) and optionally
"page" (tools per page, with a next cursor after every page, for ever: a server that never
stops paging) and "stderr_mib" (a call writes that many MiB to stderr, then "the last words",
and the process exits) and "stdout_mib" (a call writes that many MiB to stdout on one line,
never ended, and the process waits for more input) and "stdout_junk" (a call writes that line,
which is not JSON, on stdout, and answers nothing). Otherwise a call answers "called NAME".
"""

from __future__ import annotations

import json
import os
import sys


def main() -> None:
    with open(sys.argv[1]) as f:
        told = json.load(f)
    tools, page = told["tools"], told.get("page")
    for line in sys.stdin:
        message = json.loads(line)
        method, ident = message.get("method"), message.get("id")
        if method == "initialize":
            version = message["params"]["protocolVersion"]
            result = {
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile", "version": "1"},
            }
        elif method == "tools/list":
            if page is None:
                result = {"tools": tools}
            else:
                at = int((message.get("params") or {}).get("cursor") or 0)
                listed = [dict(tools[0], name=f"t{at + i}") for i in range(page)]
                result = {"tools": listed, "nextCursor": str(at + page)}
        elif method == "tools/call":
            if told.get("stdout_mib"):
                chunk = f'{{"jsonrpc": "2.0", "id": {ident}, "result": "' + "x" * (1 << 20)
                for _ in range(told["stdout_mib"]):
                    sys.stdout.write(chunk)
                sys.stdout.flush()
                continue
            if "stdout_junk" in told:
                sys.stdout.write(told["stdout_junk"] + "\n")
                sys.stdout.flush()
                continue
            if told.get("stderr_mib"):
                chunk = "E" * ((1 << 20) - 1) + "\n"
                for _ in range(told["stderr_mib"]):
                    sys.stderr.write(chunk)
                sys.stderr.write("the last words\n")
                sys.stderr.flush()
                os._exit(1)
            text = f"called {message['params']['name']}"
            result = {"content": [{"type": "text", "text": text}], "isError": False}
        elif method == "ping":
            result = {}
        else:
            continue  # notifications
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
