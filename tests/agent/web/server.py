"""A real uvicorn server on loopback for the review page tests, run in a thread of the test process."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import uvicorn

from agent.web.app import WebConfig, create_app
from agent.web.security import ReviewAuth
from db.store import Store

TOKEN = "test-review-token-0123456789"
REVIEWER = "ada"


@dataclass
class RunningServer:
    base_url: str
    token: str


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def review_server(store: Store, token: str = TOKEN, refresh_ms: int = 5000) -> Iterator[RunningServer]:
    app = create_app(WebConfig(store=store, auth=ReviewAuth(token), bind_host="127.0.0.1", reviewer=REVIEWER,
                               refresh_ms=refresh_ms))
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, daemon=True, name="review-server")
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the review server did not start")
        time.sleep(0.05)
    try:
        yield RunningServer(base_url=f"http://127.0.0.1:{port}", token=token)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
