"""The workbench served for real on loopback (uvicorn in a thread of the test process), so the
tests talk HTTP to it like a browser or a client would."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

from workload_compiler.store.revisions import Store
from workload_compiler.web.app import create_app
from workload_compiler.web.settings import Settings


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve(settings: Settings | None = None, db_url: str | None = None) -> Iterator[str]:
    """The base URL of a running server (stopped on exit)."""
    port = free_port()
    s = settings or Settings()
    s = Settings(**{**s.__dict__, "port": port})
    store = Store.open(db_url) if db_url else None
    config = uvicorn.Config(create_app(s, store), host="127.0.0.1", port=port, log_level="warning",
                            access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        if store is not None:
            store.close()
