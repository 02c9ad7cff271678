"""API docs at /api/docs from Swagger UI files installed with the project, never from a CDN.

Note [Offline API docs]
FastAPI's default /docs page loads Swagger UI's script and stylesheet from a CDN: on a machine
without internet the page stays blank. The Python package ``swagger-ui-bundle-v2`` (a project
dependency, Apache-2.0) ships Swagger UI's built files; they are served under /api/docs/assets
and the page FastAPI builds (``get_swagger_ui_html``) points at them, with its favicon local too
and the online validator badge off (``validatorUrl: null``), so the page makes no request
outside this server. Swagger UI 5 is needed: FastAPI writes OpenAPI 3.1, which Swagger UI 4
refuses to render.

The page's one inline script (the SwaggerUIBundle call) is allowed by its hash, not by
'unsafe-inline'; Swagger UI sets inline styles and draws icons from data: URLs, so the docs
pages' policy allows those. Without the package (a broken install) /api/docs says so and links
the schema, instead of an empty page.
"""

from __future__ import annotations

import base64
import hashlib
import re
from functools import lru_cache
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

DOCS_URL = "/api/docs"
ASSETS_URL = "/api/docs/assets"
OPENAPI_URL = "/api/openapi.json"
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)


def swagger_ui_dir() -> Path | None:
    """The installed Swagger UI files (swagger-ui-bundle.js, swagger-ui.css ...), None when the package is missing."""
    try:
        import swagger_ui_bundle
    except ImportError:
        return None
    folder = Path(swagger_ui_bundle.swagger_ui_path)
    return folder if (folder / "swagger-ui-bundle.js").is_file() and (folder / "swagger-ui.css").is_file() else None


@lru_cache(maxsize=4)
def docs_page(title: str) -> tuple[bytes, str]:
    """(HTML, Content-Security-Policy) of the docs page: every URL on this server, the inline script by hash."""
    html = get_swagger_ui_html(
        openapi_url=OPENAPI_URL,
        title=f"{title} · API",
        swagger_js_url=f"{ASSETS_URL}/swagger-ui-bundle.js",
        swagger_css_url=f"{ASSETS_URL}/swagger-ui.css",
        swagger_favicon_url=f"{ASSETS_URL}/favicon-32x32.png",
        swagger_ui_parameters={"validatorUrl": None},
    ).body
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode() + "'"
        for script in _INLINE_SCRIPT.findall(html.decode())
    )
    policy = (
        f"default-src 'none'; script-src 'self' {hashes}; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        "font-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    )
    return bytes(html), policy


MISSING_PAGE = (
    "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>API docs unavailable</title></head><body>"
    "<h1>API docs unavailable</h1><p>Swagger UI's files are not installed (the <code>swagger-ui-bundle-v2</code> "
    "package; <code>pip install -e .</code> installs it). The API's schema is at "
    f"<a href=\"{OPENAPI_URL}\">{OPENAPI_URL}</a>.</p></body></html>"
)


def add_docs(app: FastAPI) -> None:
    """/api/docs and its assets; call on an app made with ``docs_url=None``."""
    folder = swagger_ui_dir()
    if folder is not None:
        app.mount(ASSETS_URL, StaticFiles(directory=folder), name="swagger-ui")

    @app.get(DOCS_URL, include_in_schema=False)
    def api_docs() -> HTMLResponse:
        if folder is None:
            return HTMLResponse(MISSING_PAGE, status_code=503)
        html, policy = docs_page(app.title)
        return HTMLResponse(html, headers={"Content-Security-Policy": policy})
