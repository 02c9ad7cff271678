"""Split an issue body into fenced code blocks and tell Python code from printed output.

Note [Fenced blocks in linear time]
A single regex with a lazy body and a back-reference to the closing fence retried every
unclosed opening against the rest of the body (quadratic: seconds on 64 KiB of ``` lines).
Instead the fence lines are found in one pass; closing ones are indexed by (indent, fence
character, run length), and an opening line finds its first closing line after it by bisection. The
result is what the regex gave: the first closing line with exactly the same indent and fence;
an opening that never closes is plain text and the next line is tried.

Note [Code as real reports carry it]
Real reports are not tidy: GitHub renders a fence that never closes as code to the end of the text
(bodies cut by an export end that way), old reports are Python 2 (``print x``), and many paste the
repro with no fence at all, right under "To Reproduce". ``code_blocks`` therefore also returns the
code after the last fence that never closes, and ``unfenced_code`` the runs of lines outside fences
that start at an ``import``/``from`` line (an indented run, Markdown's own code block, ends at the first line
without its indent and is dedented). A fenced block inside a list item is indented with its fence and is
dedented. A Python block that does not parse is salvaged: a line with a bracket left open
(``print(f(x)``) is closed once, any other line the parser stops at is dropped (a Python 2 print, a
line cut off at the end) and the rest parsed again, a few times at most; an unfenced run keeps only
what parses before its first bad line. Output
pasted inside the fence (a printed tensor under the code) goes in one try: a bad line that looks like a
value takes the value-like lines after it along. A block that uses ``torch.``/``nn.``/``F.`` without
importing them is salvaged as one that starts at an import is. IPython sessions (``In [1]:``, ``...:``) keep
their input lines only. A one-liner typed at a shell prompt (``python -c "import torch; ..."``) is its quoted
program. A session pasted as Markdown's indented block (``    >>> ...``) is read as a fenced one; with no code
found otherwise, bare lines that each parse as a torch expression (old reports typed ``torch.eye(4).sum()`` and
its printed value, no fence, no import) are read as a session. The code is parsed, never run.
"""

from __future__ import annotations

import ast
import bisect
import re
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass

# A line that starts (after its indent) with a run of 3+ backticks or tildes: a fence.
# A backtick fence's info string holds no backtick (CommonMark): "```x``` is ```tensor(...)```" at a line start is
# a sentence with inline code, neither an opening nor a closing fence.
_FENCE_LINE = re.compile(r"^([ \t]*)(`{3,}(?=[^`\n]*$)|~{3,})([^\n]*)", re.M)
_LANG = re.compile(r"[ \t]*([\w+-]*)")
_PY_LANGS = {"python", "py", "python3", "pycon", "ipython"}
_OTHER_LANGS = {"bash", "sh", "shell", "console", "text", "txt", "diff", "cpp", "c", "c++", "yaml", "json", "log"}


@dataclass(frozen=True)
class CodeBlock:
    lang: str
    text: str
    is_python: bool
    tree: ast.Module | None  # parsed only, never executed
    session: bool = False  # typed at a prompt (>>>, In [1]:): each expression's value was shown


_PROMPTED = re.compile(r"^[^\S\n]*(?:>>>|In \[\d*\]:)", re.M)
_IPYTHON_IN = re.compile(r"^[^\S\n]*In \[\d*\]:[^\S\n]?")
_IPYTHON_MORE = re.compile(r"^[^\S\n]*\.{3,}:[^\S\n]?")


def _strip_prompts(text: str) -> str:
    """Doctest-style ``>>>`` / ``...`` and IPython ``In [1]:`` / ``...:`` snippets become plain code.

    What the session printed (lines without a prompt, IPython's ``Out[2]:``) is output and dropped.
    """
    lines = text.splitlines()
    if any(_IPYTHON_IN.match(line) for line in lines):
        kept = []
        for line in lines:
            prompt = _IPYTHON_IN.match(line) or _IPYTHON_MORE.match(line)
            if prompt:
                kept.append(line[prompt.end():])
        return "\n".join(kept)
    if not any(line.lstrip().startswith(">>>") for line in lines):
        return text
    kept = [line.lstrip()[4:] for line in lines if line.lstrip().startswith((">>> ", "... ", ">>>", "..."))]
    return "\n".join(kept)


def _fenced_spans(body: str) -> Iterator[tuple[str, str, int, int]]:
    """(language, code, start, end) of each fenced block; see Note [Fenced blocks in linear time].

    ``start`` is where the opening fence line starts, ``end`` just after the closing fence's newline.
    """
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
                resume = closing + 1
                line_end = body.find("\n", closing)
                yield lang, body[fence.end() + 1 : closing], fence.start(), len(body) if line_end < 0 else line_end + 1
                break


def _fenced(body: str) -> Iterator[tuple[str, str]]:
    """(language, code) of each fenced block; see Note [Fenced blocks in linear time]."""
    for lang, code, _, _ in _fenced_spans(body):
        yield lang, code


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


MAX_SALVAGE = 8
_CODE_START = re.compile(r"^[^\S\n]*(?:import [A-Za-z_]|from [A-Za-z_][\w.]* import )", re.M)
# torch used without its import (old reports start at the code): worth salvaging when it does not parse
_TORCH_USE = re.compile(r"\b(?:torch|nn|F)\.[A-Za-z_]")
_STOP_LINE = re.compile(r"^[^\S\n]*(?:#{2,6}[^\S\n]|`{3,}|~{3,})", re.M)


def _salvaged(text: str, drop_lines: bool = True) -> tuple[str, ast.Module] | None:
    """``text`` with the lines the parser stops at dropped (or cut there), and its tree; None if nothing parses.

    A bad line that looks like pasted output goes with the output lines right after it (a printed tensor
    is many such lines), so one try drops the whole paste.
    """
    lines = text.split("\n")
    closed: set[int] = set()  # lines given their missing closing brackets once
    for _ in range(MAX_SALVAGE):
        source = "\n".join(lines)
        try:
            return source, ast.parse(source)
        except SyntaxError as exc:
            bad = (exc.lineno or len(lines)) - 1
            if not 0 <= bad < len(lines):
                bad = len(lines) - 1
            if _NEVER_CLOSED.match(str(exc.msg)) and bad not in closed:
                closers = _missing_closers(lines[bad])
                if closers:  # a bracket the author forgot (`print(f(x)`): closed, the line kept
                    closed.add(bad)
                    lines[bad] = lines[bad].rstrip() + closers
                    continue
            if not drop_lines:
                lines = lines[:bad]
            else:
                end = bad + 1
                if _looks_like_output(lines[bad]):
                    while end < len(lines) and _looks_like_output(lines[end]):
                        end += 1
                lines = lines[:bad] + lines[end:]
        except (ValueError, RecursionError, MemoryError):
            return None
        if not any(line.strip() for line in lines):
            return None
    return None


_NEVER_CLOSED = re.compile(r"'[(\[{]' was never closed")
_CLOSER = {"(": ")", "[": "]", "{": "}"}


def _missing_closers(line: str) -> str:
    """The closing brackets ``line`` lacks, innermost first; '' when its brackets do not simply run out.

    Strings are skipped and a comment ends the scan; a closer that does not match its opener means the
    line is not one with a bracket left open, so nothing is added.
    """
    stack: list[str] = []
    quote = ""
    i = 0
    while i < len(line):
        char = line[i]
        if quote:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#":
            break
        elif char in _CLOSER:
            stack.append(_CLOSER[char])
        elif char in ")]}":
            if not stack or stack.pop() != char:
                return ""
        i += 1
    return "" if quote else "".join(reversed(stack))


MAX_OUTPUT_LINE = 400
_CODE_SHAPE = re.compile(r"[A-Za-z_]\w*[^\S\n]*[(=]|[:,(\[{\\][^\S\n]*$")


def _looks_like_output(line: str) -> bool:
    """A printed value, not code: it does not parse on its own and has no call, assignment or open bracket."""
    stripped = line.strip()
    # a printed value is a short line; the cap also keeps _CODE_SHAPE's retries (from every letter) linear
    if not stripped or len(stripped) > MAX_OUTPUT_LINE or _CODE_SHAPE.search(stripped):
        return False
    try:
        ast.parse(stripped)
    except (SyntaxError, ValueError):
        return True
    except (RecursionError, MemoryError):
        return False
    return False


def unfenced_code(text: str) -> list[CodeBlock]:
    """Python pasted without a fence: runs of lines outside fences that start at an import line."""
    text = (text or "").replace("\r\n", "\n")
    if "import " not in text and ">>>" not in text and "torch." not in text:  # an import line, a prompt, a torch line
        return []
    outside = []
    pos = 0
    for _, code, start, end in _fenced_spans(text):
        outside.append(text[pos:start])
        pos = end
    outside.append(_before_trailing_fence(text, pos))
    blocks = []
    for part in outside:
        cursor = 0
        while (start := _CODE_START.search(part, cursor)) is not None:
            stop = _STOP_LINE.search(part, start.end())
            end = stop.start() if stop else len(part)
            indent = len(start.group()) - len(start.group().lstrip(" \t"))
            if indent:  # Markdown's indented code block: the run is its lines at that indent (and blank ones)
                end = _indented_end(part, start.start(), end, start.group()[:indent])
            found = _salvaged(textwrap.dedent(part[start.start():end]), drop_lines=False)
            if found is not None and any(_is_statement_of_code(n) for n in found[1].body) and "torch" in found[0]:
                blocks.append(CodeBlock("", found[0], True, found[1]))
            cursor = end
        blocks.extend(_indented_sessions(part))
    if not blocks:
        blocks.extend(block for part in outside for block in _inline_code_lines(part))
    if not blocks:
        blocks.extend(_torch_lines(outside))
    return blocks


MAX_CODE_LINE = 400  # longer lines outside fences are never read as a line of code
# A line that is one inline code span and nothing else (`` `x = torch.ones(3)` ``)
_SPAN_LINE = re.compile(r"^[^\S\n]*`([^`\n]+)`[^\S\n]*$")


def _inline_code_lines(part: str) -> list[CodeBlock]:
    """Some old reports type each line of their repro as its own inline code span, one span per line, and no
    fence. Two or more such lines in a row are read as one snippet, as a fenced block would be (salvaged where a
    line does not parse, e.g. a Python 2 print), when it uses torch."""
    blocks, run = [], []
    for line in [*part.split("\n"), ""]:
        match = _SPAN_LINE.match(line) if len(line) <= MAX_CODE_LINE else None
        if match is not None:
            run.append(match.group(1).strip())
            continue
        if len(run) >= 2 and _TORCH_USE.search("\n".join(run)):
            found = _salvaged("\n".join(run))
            if found is not None and any(_is_statement_of_code(node) for node in found[1].body):
                blocks.append(CodeBlock("", found[0], True, found[1]))
        run = []
    return blocks


# A line outside any fence that is a torch expression (``torch.eye(3).sum()``, ``y = torch.ones(2).cumsum(0)``)
_TORCH_LINE = re.compile(r"^[^\S\n]*(?:[A-Za-z_]\w*[^\S\n]*=[^\S\n]*)?torch\.[A-Za-z_][\w.]*\([^\n]*$", re.M)


# Inline code in a sentence that is a whole torch call (`` `torch.ones(3).cumsum(0)` gives ... ``)
_TORCH_SPAN = re.compile(r"(?<!`)`(torch\.[A-Za-z_][\w.]*\([^`\n]*)`(?!`)")


def _self_contained(tree: ast.Module) -> bool:
    """Runs as it stands: no name but ``torch`` (``torch.compile(model)`` names the reporter's model: a mention)."""
    return all(node.id == "torch" for node in ast.walk(tree) if isinstance(node, ast.Name))


# Note [A bare repro goes on past its torch lines]
# An old report types its repro without fence or import: ``x = torch.tensor(...)``, then lines that use it and
# never spell torch (``loss = sum(x ** 0)``, ``loss.backward()``, ``print(x.grad)``), then what it printed. After a
# torch line, each next line that is one statement on its own, reads only names bound since (or torch, or a
# builtin) and uses at least one of them belongs to the repro; printed values (``tensor(2.)``: a name never
# bound) and prose (it does not parse) end the run. Blank lines do not.
_BUILTIN_NAMES = frozenset(
    "print sum len range abs min max float int bool list tuple dict set round zip enumerate isinstance type str "
    "repr sorted any all map reversed".split())


def _one_statement(line: str) -> ast.stmt | None:
    tree = _parse(line)
    if tree is None or len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr | ast.Assign | ast.AugAssign):
        return None
    return tree.body[0]


def _bound(statement: ast.stmt) -> set[str]:
    targets = statement.targets if isinstance(statement, ast.Assign) else (
        [statement.target] if isinstance(statement, ast.AugAssign) else [])
    return {node.id for target in targets for node in ast.walk(target) if isinstance(node, ast.Name)}


def _continues(statement: ast.stmt, bound: set[str]) -> bool:
    """The statement goes on with the run's values (Note [A bare repro goes on past its torch lines])."""
    value = statement.value if isinstance(statement, ast.Expr | ast.Assign | ast.AugAssign) else None
    if isinstance(value, ast.Name | ast.Constant):  # a bare word or number: an output line or a signature
        return False
    loads = {node.id for node in ast.walk(statement) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
        loads.add(statement.target.id)
    return bool(loads & (bound | {"torch"})) and loads <= bound | _BUILTIN_NAMES | {"torch"}


def _torch_lines(parts: list[str]) -> list[CodeBlock]:
    """Old reports type their repro as bare lines, each followed by what it printed, with no fence and no import:
    the lines of the text outside fences (`parts`) that parse on their own as a torch expression or assignment,
    in order, read as one session (each line's value was shown), each with the lines that go on from it (Note [A
    bare repro goes on past its torch lines]). A sentence that starts with a torch call does not parse, so prose
    stays prose. Some type the whole repro as inline code in a sentence: a span that is a torch
    call naming nothing but torch counts as such a line; one that names the reporter's objects is a mention."""
    lines = []
    for part in parts:
        found = []
        run: set[str] | None = None  # the names bound since the last torch line, while its run goes on
        offset = 0
        for raw in part.split("\n"):
            start, offset = offset, offset + len(raw) + 1
            line = raw.strip()
            if not line:
                continue
            statement = _one_statement(line) if len(line) <= MAX_CODE_LINE else None
            if statement is not None and _TORCH_LINE.fullmatch(raw) is not None:
                run = (run or set()) | _bound(statement)
            elif statement is not None and run is not None and _continues(statement, run):
                run |= _bound(statement)
            else:
                run = None
                continue
            found.append((start, line))
        for match in _TORCH_SPAN.finditer(part):
            tree = _parse(match.group(1).strip())
            if (tree is not None and len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr)
                    and _self_contained(tree)):
                found.append((match.start(), match.group(1).strip()))
        lines.extend(line for _, line in sorted(found, key=lambda item: item[0]))
    if not lines:
        return []
    source = "import torch\n" + "\n".join(lines)
    tree = _parse(source)
    return [CodeBlock("", source, True, tree, session=True)] if tree is not None else []


# Markdown's indented code block (four spaces or a tab) whose first line is a ``>>>`` prompt: a pasted session
_INDENTED_PROMPT = re.compile(r"^(?: {4}|\t)[ \t]*>>>[^\n]*", re.M)  # one run of blanks: linear on long blank lines


def _indented_sessions(part: str) -> list[CodeBlock]:
    """Sessions pasted as Markdown's indented code blocks (no fence, often no import): their input lines, as
    ``code_blocks`` reads a fenced session (Note [Code as real reports carry it])."""
    blocks = []
    cursor = 0
    while (start := _INDENTED_PROMPT.search(part, cursor)) is not None:
        line = start.group()
        indent = line[:len(line) - len(line.lstrip(" \t"))]
        end = _indented_end(part, start.start(), len(part), indent)
        source = _strip_prompts(textwrap.dedent(part[start.start():end]))
        tree = _parse(source)
        if tree is None:
            salvaged = _salvaged(source, drop_lines=False)
            source, tree = salvaged if salvaged is not None else (source, None)
        if tree is not None and "torch" in source and any(_is_statement_of_code(n) for n in tree.body):
            blocks.append(CodeBlock("", source, True, tree, session=True))
        cursor = max(end, start.end())
    return blocks


def _indented_end(part: str, begin: int, end: int, indent: str) -> int:
    """Where an indented run of code that starts at ``begin`` ends: the first non-blank line without ``indent``."""
    pos = begin
    while pos < end:
        line_end = part.find("\n", pos)
        line_end = end if line_end < 0 or line_end > end else line_end
        line = part[pos:line_end]
        if line.strip() and not line.startswith(indent):
            return pos
        pos = line_end + 1
    return end


def _trailing_fence(body: str, resume: int) -> tuple[str, str] | None:
    """(language, code) of the first fence after ``resume`` that never closes: code to the end of the text."""
    fence = _FENCE_LINE.search(body, resume)
    if fence is None or fence.end() >= len(body):
        return None
    lang = _LANG.match(fence.group(3)).group(1)  # type: ignore[union-attr]
    return lang, textwrap.dedent(body[fence.end() + 1:])


def _before_trailing_fence(body: str, resume: int) -> str:
    fence = _FENCE_LINE.search(body, resume)
    return body[resume:] if fence is None else body[resume:fence.start()]


def code_blocks(body: str) -> list[CodeBlock]:
    """Every fenced block of ``body`` in order, then an unclosed last one; Python blocks carry their AST."""
    blocks: list[CodeBlock] = []
    # GitHub keeps the line endings the author typed; \r\n would hide every fence.
    text_body = (body or "").replace("\r\n", "\n").replace("\r", "\n")
    spans = list(_fenced_spans(text_body))
    # a fence inside a list item is indented, and so is every line of its code: Markdown takes the fence's
    # indent off each line, and the parser needs it off
    found = [(lang, textwrap.dedent(text)) for lang, text, _, _ in spans]
    resume = max((end for _, _, _, end in spans), default=0)
    trailing = _trailing_fence(text_body, resume)
    if trailing and not (trailing[0].lower() in _PY_LANGS or "torch" in trailing[1]):
        trailing = None  # an unclosed block counts only as code that uses torch
    for lang, text in found + ([trailing] if trailing else []):
        lang = lang.lower()
        programs = _command_line_programs(text) if lang in _OTHER_LANGS or lang == "" else []
        if lang in _OTHER_LANGS or programs and _parse(text) is None:
            blocks.append(CodeBlock(lang, text, False, None))
            blocks.extend(CodeBlock("python", program, True, tree) for program, tree in programs)
            continue
        # a block that parses as it stands is a script, even when a string in it quotes a session (``>>> x``)
        as_written = _parse(text) if ">>>" in text or "In [" in text else None
        source = text if as_written is not None else _strip_prompts(text)
        tree = as_written if as_written is not None else _parse(source)
        prompted = source != text
        if tree is None and (lang in _PY_LANGS or (lang == "" and (_CODE_START.search(source) or _TORCH_USE.search(source)))):
            salvaged = _salvaged(source)
            if salvaged is not None:
                source, tree = salvaged
        if prompted and (tree is None or not any(_is_statement_of_code(node) for node in tree.body)):
            # a script followed by its output, a line of which starts with ``>>>`` (a log's own marker): the
            # prompt lines alone are no code, the script without its output lines is
            script = _salvaged(text)
            if script is not None and any(_is_statement_of_code(node) for node in script[1].body):
                (source, tree), prompted = script, False
        # An unlabelled block is Python only when it parses and is more than a bare value
        # (printed tensors such as ``tensor([1., 2.])`` also parse as an expression).
        looks_like_code = tree is not None and any(_is_statement_of_code(node) for node in tree.body)
        is_python = lang in _PY_LANGS and tree is not None or (lang == "" and looks_like_code)
        blocks.append(CodeBlock(lang, source if is_python else text, is_python, tree if is_python else None,
                                session=is_python and prompted and _PROMPTED.search(text) is not None))
    return blocks


# ``python -c "import torch; ..."`` typed at a shell prompt: the quoted program, to the last matching quote
_COMMAND_LINE = re.compile(r"python[\d.]*[^\S\n]+(?:-[A-Za-z]+[^\S\n]+)*-c[^\S\n]+([\"'])(.+)\1[^\S\n]*$")


def _command_line_programs(text: str) -> list[tuple[str, ast.Module]]:
    """The programs given to ``python -c`` in a shell block that parse and use torch, with their trees (Note [Code
    as real reports carry it]). One match per line, at its first ``python``: linear in the block."""
    programs = []
    for line in text.splitlines():
        at = line.find("python")
        match = _COMMAND_LINE.match(line, at) if at >= 0 and "-c" in line else None
        if match is None or "torch" not in match.group(2):
            continue
        tree = _parse(match.group(2))
        if tree is not None:
            programs.append((match.group(2), tree))
    return programs


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
