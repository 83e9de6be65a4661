"""Start an Arize Phoenix server with its gRPC port bound to loopback (run by Phoenix's own
interpreter, never imported by the suite).

Phoenix binds its OTLP gRPC port on every interface ([::]) and has no setting for it; the test
server must not listen beyond this machine, so the address is rewritten before Phoenix binds it.
"""

import runpy
import sys

import grpc.aio._server as aio_server

_add = aio_server.Server.add_insecure_port


def _loopback(self, address):  # type: ignore[no-untyped-def]
    return _add(self, address.replace("[::]", "127.0.0.1"))


aio_server.Server.add_insecure_port = _loopback  # type: ignore[method-assign]
sys.argv = ["phoenix", "serve"]
runpy.run_module("phoenix.server.main", run_name="__main__")
