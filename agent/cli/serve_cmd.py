"""`transfuzz serve`: the web review page and JSON API on the configured database."""

from __future__ import annotations

import os
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
    store = cli.store()
    name = (reviewer or "").strip() or default_reviewer()
    app = create_app(WebConfig(store=store, auth=auth, bind_host=host, reviewer=name))
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
    server.run()
