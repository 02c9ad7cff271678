"""`transfuzz serve`: the web review page and JSON API on the configured database."""

from __future__ import annotations

import errno
import os
import socket
from typing import Annotated

import typer

from agent.cli.context import EXIT_USAGE, fail, get_ctx

DEFAULT_PORT = 8731


def serve(
    ctx: typer.Context,
    host: Annotated[str, typer.Option("--host", help="Address to bind; anything but loopback is reachable by others.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port to listen on (0: any free port).")] = DEFAULT_PORT,
    reviewer: Annotated[str | None, typer.Option("--reviewer", help="Name recorded with decisions (default: $USER).")] = None,
) -> None:
    """Web review page and JSON API (decisions need the review token it prints)."""
    import uvicorn

    from agent.review.decide import default_reviewer
    from agent.web.app import WebConfig, create_app
    from agent.web.security import TOKEN_ENV, ReviewAuth, is_loopback, new_token

    cli = get_ctx(ctx)
    env_token = os.environ.get(TOKEN_ENV, "").strip()
    try:
        auth = ReviewAuth(env_token or new_token())
    except ValueError as exc:
        fail(str(exc), code=EXIT_USAGE)
    # A read command: a mistyped SQLite path is refused, not created empty (like review, stats, export).
    store = cli.store(must_exist=True)
    listener = bind_listener(host, port)
    name = (reviewer or "").strip() or default_reviewer()
    app = create_app(WebConfig(store=store, auth=auth, bind_host=host, reviewer=name))
    # Exports carry collect_env's output like `transfuzz export` does (seconds to capture): start it now, once.
    import threading

    from agent.export.environment import shared_environment

    threading.Thread(target=shared_environment, name="collect-env", daemon=True).start()
    if not is_loopback(host):
        cli.err.print(
            f"[bold yellow]warning:[/] binding {host}: anyone who can reach this address can read every finding; "
            "decisions still need the token",
            highlight=False,
        )
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)
    server = uvicorn.Server(config)
    shown_host = f"[{host}]" if ":" in host else host

    # Print the address once the socket is bound, so that --port 0 shows the real port.
    original_startup = server.startup

    async def startup(sockets=None):  # type: ignore[no-untyped-def]
        await original_startup(sockets=sockets)
        bound = port
        for listener in getattr(server, "servers", []):
            for sock in getattr(listener, "sockets", []):
                bound = sock.getsockname()[1]
        where = f"http://{shown_host}:{bound}"
        cli.err.print(f"transfuzz serve: {where}/queue on {store.masked_url}", highlight=False)
        if env_token:
            cli.err.print(f"sign in to decide: {where}/login (token from {TOKEN_ENV})", highlight=False)
        else:
            cli.err.print(f"sign in to decide: {where}/login?token={auth.token}", highlight=False)

    server.startup = startup  # type: ignore[method-assign]
    server.run(sockets=[listener])


def bind_listener(host: str, port: int) -> socket.socket:
    """The server's socket, bound here so that a busy port is one clear line and exit 2 (no uvicorn traceback)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                             flags=socket.AI_PASSIVE)[0]
    except socket.gaierror as exc:
        fail(f"cannot bind --host {host}: {exc.strerror or exc}; give an address of this machine, e.g. --host 127.0.0.1",
             code=EXIT_USAGE)
    sock = socket.socket(family, kind, proto)
    # As uvicorn does: a port left in TIME_WAIT by a previous run can be bound again; one that a
    # program listens on cannot (Linux refuses it with EADDRINUSE all the same).
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        fail(_bind_problem(host, port, exc), code=EXIT_USAGE)
    sock.set_inheritable(True)
    return sock


def _bind_problem(host: str, port: int, exc: OSError) -> str:
    if exc.errno == errno.EADDRINUSE:
        other = DEFAULT_PORT if port != DEFAULT_PORT else DEFAULT_PORT + 1
        return (f"port {port} on {host} is busy: another program is listening there. Pick another port with --port, "
                f"e.g. `transfuzz serve --port {other}`, or --port 0 for any free port")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"port {port} on {host} needs privileges this user lacks; pick a port above 1023 with --port"
    if exc.errno == errno.EADDRNOTAVAIL:
        return f"cannot bind --host {host}: it is not an address of this machine; e.g. --host 127.0.0.1"
    return f"cannot listen on {host}:{port}: {os.strerror(exc.errno) if exc.errno else exc}; pick another --port or --host"
