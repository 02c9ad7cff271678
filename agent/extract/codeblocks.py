"""Split an issue body into fenced code blocks and tell Python code from printed output."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

_FENCE_RE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[\w+-]*)[^\n]*\n(?P<code>.*?)^(?P=indent)(?P=fence)[ \t]*$", re.M | re.S)
_PY_LANGS = {"python", "py", "python3", "pycon", "ipython"}
_OTHER_LANGS = {"bash", "sh", "shell", "console", "text", "txt", "diff", "cpp", "c", "c++", "yaml", "json", "log"}


@dataclass(frozen=True)
class CodeBlock:
    lang: str
    text: str
    is_python: bool
    tree: ast.Module | None  # parsed only, never executed


def _strip_prompts(text: str) -> str:
    """Doctest-style ``>>>`` / ``...`` snippets become plain code."""
    lines = text.splitlines()
    if not any(line.lstrip().startswith(">>>") for line in lines):
        return text
    kept = [line.lstrip()[4:] for line in lines if line.lstrip().startswith((">>> ", "... ", ">>>", "..."))]
    return "\n".join(kept)


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def code_blocks(body: str) -> list[CodeBlock]:
    """Every fenced block of ``body`` in order; Python blocks carry their AST."""
    blocks: list[CodeBlock] = []
    # GitHub keeps the line endings the author typed; \r\n would hide every fence.
    text_body = (body or "").replace("\r\n", "\n").replace("\r", "\n")
    for match in _FENCE_RE.finditer(text_body):
        lang = match.group("lang").lower()
        text = match.group("code")
        if lang in _OTHER_LANGS:
            blocks.append(CodeBlock(lang, text, False, None))
            continue
        source = _strip_prompts(text)
        tree = _parse(source)
        # An unlabelled block is Python only when it parses and is more than a bare value
        # (printed tensors such as ``tensor([1., 2.])`` also parse as an expression).
        looks_like_code = tree is not None and any(_is_statement_of_code(node) for node in tree.body)
        is_python = lang in _PY_LANGS and tree is not None or (lang == "" and looks_like_code)
        blocks.append(CodeBlock(lang, source if is_python else text, is_python, tree if is_python else None))
    return blocks


_CODE_STATEMENTS = (
    ast.Import, ast.ImportFrom, ast.Assign, ast.AugAssign, ast.FunctionDef, ast.AsyncFunctionDef,
    ast.ClassDef, ast.For, ast.While, ast.With, ast.If, ast.Try,
)


def _is_statement_of_code(node: ast.stmt) -> bool:
    """Printed output (``cpu : tensor([...])`` even parses, as an annotation) is not code."""
    if isinstance(node, _CODE_STATEMENTS):
        return True
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and _is_code_call(node.value)


def _is_code_call(call: ast.Call) -> bool:
    """``print(x)`` or ``torch.f(x)`` is code; ``tensor([...])`` as printed output is not."""
    func = call.func
    return not (isinstance(func, ast.Name) and func.id in ("tensor", "Parameter", "torch.Size"))
