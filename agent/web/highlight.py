"""Syntax-highlighted repro scripts as HTML (Pygments), and the stylesheet for them.

Pygments' HtmlFormatter escapes every token it writes (``&``, ``<``, ``>``, quotes), so its output
is the one piece of HTML built in Python that templates may insert as markup (Note [Review page
security] in security.py). Without Pygments the template shows the text, escaped, unhighlighted.
"""

from __future__ import annotations

from functools import lru_cache

from markupsafe import Markup

CSS_CLASS = "hl"


def highlight_python(code: str) -> Markup | None:
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer
    except ImportError:
        return None
    return Markup(highlight(code, PythonLexer(), HtmlFormatter(cssclass=CSS_CLASS, nowrap=False)))


@lru_cache(maxsize=1)
def stylesheet() -> str:
    try:
        from pygments.formatters import HtmlFormatter
    except ImportError:
        return ""
    light = HtmlFormatter(style="default").get_style_defs(f".{CSS_CLASS}")
    # The page follows prefers-color-scheme (review.css); the code follows it too.
    dark = HtmlFormatter(style="github-dark").get_style_defs(f".{CSS_CLASS}")
    return f"{light}\n@media (prefers-color-scheme: dark) {{\n{dark}\n}}\n"
