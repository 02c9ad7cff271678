"""Harness code written by an LLM for APIs the OpInfo and signature generators cannot feed.

The code is untrusted: it is only ever executed by fuzz_core's sandboxed workers. The static
check here is hygiene on top of the sandbox — it turns away code that imports or reaches for the
filesystem, processes or the network, so such answers are never even stored as harnesses.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from typing import Any

from agent.patterns import BugPattern

ALLOWED_IMPORTS = frozenset({"torch", "math"})
FORBIDDEN_NAMES = frozenset({
    "open", "exec", "eval", "compile", "__import__", "input", "globals", "locals", "vars", "breakpoint",
    "os", "sys", "subprocess", "socket", "shutil", "pathlib", "importlib", "ctypes", "builtins", "pickle",
})

CodeWriter = Callable[[BugPattern, str, dict], "str | None"]


class HarnessCodeError(ValueError):
    """Generated harness code that TransFuzz will not run."""


def validate_harness_code(code: str) -> str:
    """Return the code if it defines make_inputs(seed) and stays inside torch and math."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise HarnessCodeError(f"does not parse: {exc.msg} (line {exc.lineno})") from None
    defines = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    if "make_inputs" not in defines:
        raise HarnessCodeError("defines no make_inputs(seed)")
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            bad = [a.name for a in node.names if a.name.split(".")[0] not in ALLOWED_IMPORTS]
            if bad:
                raise HarnessCodeError(f"imports {', '.join(bad)}")
        elif isinstance(node, ast.ImportFrom):
            if (node.module or "").split(".")[0] not in ALLOWED_IMPORTS:
                raise HarnessCodeError(f"imports from {node.module}")
        elif isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            raise HarnessCodeError(f"uses {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr.startswith("__") and node.attr != "__init__":
            raise HarnessCodeError(f"reaches for {node.attr}")
    return code if code.lstrip().startswith("import torch") else "import math\nimport torch\n\n" + code


def make_code_writer(backend: Any, semantics: Callable[[str], str] | None = None) -> CodeWriter:
    """A writer asking the backend's `harness_code` step; None when the answer is unusable."""
    from agent.llm.errors import LlmError
    from agent.llm.schemas import HarnessCode

    def describe(api: str) -> str:
        if semantics is not None:
            return semantics(api)
        from agent.extract import semantics_for

        try:
            return json.dumps(semantics_for(api).model_dump(mode="json"), indent=1)
        except Exception:
            return json.dumps({"api": api})

    def write(pattern: BugPattern, target_api: str, trigger: dict) -> str | None:
        variables = {
            "target_api": target_api,
            "target_semantics": describe(target_api),
            "pattern_formal": pattern.to_formal(),
            "trigger": json.dumps(trigger, sort_keys=True),
        }
        try:
            answer, _record = backend.structured("harness_code", variables, HarnessCode)
            return validate_harness_code(answer.code)
        except (LlmError, HarnessCodeError):
            return None

    return write
