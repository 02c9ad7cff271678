"""The FastAPI application: pages, JSON API, static files, and the security rules around them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exception_handlers import request_validation_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.trustedhost import TrustedHostMiddleware

from agent.web.security import CONTENT_SECURITY_POLICY, ReviewAuth, allowed_hosts
from db.store import Store

HERE = Path(__file__).resolve().parent


@dataclass
class WebConfig:
    store: Store
    auth: ReviewAuth
    bind_host: str = "127.0.0.1"
    reviewer: str = "unknown"  # prefilled in decision forms; the JSON API's default too
    refresh_ms: int = 5000  # how often the campaigns page asks /api/campaigns for new numbers


def _templates() -> Jinja2Templates:
    # autoescape=True for every template, whatever its file name (Note [Review page security]).
    environment = Environment(
        loader=FileSystemLoader(HERE / "templates"), autoescape=True, undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True
    )
    from agent.web.format import FILTERS

    environment.filters.update(FILTERS)
    return Jinja2Templates(env=environment)


def create_app(config: WebConfig) -> FastAPI:
    from agent.web import api, lineage_routes, pages
    from agent.web.docs import add_docs

    app = FastAPI(
        title="TransFuzz review",
        description="Review transferred silent-bug findings: queue, finding, decisions, campaigns, export.",
        version="1",
        docs_url=None,  # served by agent/web/docs.py from local files (Note [Offline API docs])
        redoc_url=None,
        openapi_url="/api/openapi.json",
    )
    app.state.config = config
    app.state.templates = _templates()
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts(config.bind_host))

    @app.middleware("http")
    async def security_headers(request: Request, call_next):  # type: ignore[no-untyped-def]
        response = await call_next(request)
        if "Content-Security-Policy" not in response.headers:  # /api/docs sets its own (agent/web/docs.py)
            response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["X-Frame-Options"] = "DENY"
        # "no-referrer" would make Chromium send `Origin: null` on our own form posts (refused by the Origin check).
        response.headers["Referrer-Policy"] = "same-origin"
        return response

    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    app.include_router(api.router)
    app.include_router(pages.router)
    app.include_router(lineage_routes.router)
    add_docs(app)

    @app.exception_handler(ValueError)
    async def value_error(request: Request, exc: ValueError):  # type: ignore[no-untyped-def]
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return error_response(request, 400, message)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):  # type: ignore[no-untyped-def]
        return error_response(request, exc.status_code, str(exc.detail), headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError):  # type: ignore[no-untyped-def]
        if _is_api(request):  # FastAPI's own 422 body, which the OpenAPI schema documents
            return await request_validation_exception_handler(request, exc)
        return error_response(request, 400, "; ".join(_validation_message(e) for e in exc.errors()[:3]))

    return app


def _is_api(request: Request) -> bool:
    return request.url.path == "/api" or request.url.path.startswith("/api/")


def _validation_message(error: dict[str, Any]) -> str:
    where = " ".join(str(part) for part in error.get("loc", ())[1:]) or "request"
    return f"{where}: {error.get('msg', 'invalid')}"


def error_response(request: Request, status_code: int, detail: str, headers: dict[str, str] | None = None) -> Response:
    """JSON ``{"detail": …}`` under /api; elsewhere a page in the site's layout (the detail escaped like all text)."""
    if _is_api(request):
        return JSONResponse({"detail": detail}, status_code=status_code, headers=headers)
    from agent.web.pages import render_error

    return render_error(request, status_code, detail, headers=headers)


def config_of(request: Request) -> WebConfig:
    return request.app.state.config  # type: ignore[no-any-return]
