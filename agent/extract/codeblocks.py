"""Split an issue body into fenced code blocks and tell Python code from printed output.

Note [Fenced blocks in linear time]
A single regex with a lazy body and a back-reference to the closing fence retried every
unclosed opening against the rest of the body (quadratic: seconds on 64 KiB of ``` lines).
Instead the fence lines are found in one pass; closing ones are indexed by (indent, fence
character, run length), and an opening line finds its first closing line after it by bisection. The
result is what the regex gave: the first closing line with exactly the same indent and fence;
an opening that never closes is plain text and the next line is tried.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass

# A line that starts (after its indent) with a run of 3+ backticks or tildes: a fence.
_FENCE_LINE = re.compile(r"^([ \t]*)(`{3,}|~{3,})([^\n]*)", re.M)
_LANG = re.compile(r"[ \t]*([\w+-]*)")
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


def _fenced(body: str) -> Iterator[tuple[str, str]]:
    """(language, code) of each fenced block; see Note [Fenced blocks in linear time]."""
    fences = list(_FENCE_LINE.finditer(body))
    closings: dict[tuple[str, str, int], list[int]] = {}  # (indent, char, run length) -> line starts
    for fence in fences:
        if not fence.group(3).strip(" \t"):
            run = fence.group(2)
            closings.setdefault((fence.group(1), run[0], len(run)), []).append(fence.start())
    resume = 0
    for fence in fences:
        if fence.start() < resume or fence.end() >= len(body):  # inside a block, or no newline after
            continue
        indent, run = fence.group(1), fence.group(2)
        # a longer run that never closes may still open a shorter fence (the rest is info text)
        for length in range(len(run), 2, -1):
            candidates = closings.get((indent, run[0], length), ())
            at = bisect.bisect_right(candidates, fence.start())
            if at < len(candidates):
                lang = _LANG.match(fence.group(3)).group(1) if length == len(run) else ""  # type: ignore[union-attr]
                closing = candidates[at]
                yield lang, body[fence.end() + 1 : closing]
                resume = closing + 1
                break


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
    for lang, text in _fenced(text_body):
        lang = lang.lower()
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
