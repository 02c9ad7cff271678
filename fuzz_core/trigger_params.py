"""Trigger parameters as bounded, typed data: what a pattern may set on the call under test.

Note [Trigger parameter bounds]
A pattern's trigger ``params`` come from issue text (the offline analyzer) or from an LLM answer,
and the fuzz core places them into the call (fuzz_core/inputs/params.py). Unchecked, they were a
way around every other bound: a path for ``file_name``, a size of 10**12 for ``output_size``. A
value is kept only when it is one of

- a bool or None;
- an integer within ±MAX_ABS_INT, or within ±MAX_DIM for a size-like parameter (SIZE_LIKE);
- a finite float within ±MAX_ABS_FLOAT (±MAX_DIM when size-like), or the words nan/inf/-inf;
- a condition such as ``> 0`` on such a number (the fuzz core picks a value that satisfies it);
- a string from the input descriptions' vocabulary (reductions, padding and interpolation modes
  ...) or an identifier-like word of at most MAX_WORD characters: never ``/``, ``.``, spaces or
  quotes, so never a path;
- a flat list or tuple of at most MAX_INT_LIST bounded numbers or bools;

the same limits as input descriptions (fuzz_core/inputs/description.py). Where the API's
signature is known (``inspect.signature``, else its ATen schema) the value must also fit the
parameter's declared type: a bool parameter takes a bool, an int one an integer, a ``Literal``
one of its strings; a value no overload accepts is dropped. A name the signature lacks keeps the
generic bounds only (transfer maps parameter names across APIs). At most MAX_PARAMS are kept.
Nothing here raises for a bad value: it is dropped and its reason returned, for the caller to
record beside the trigger (``dropped_params``). No torch import unless a signature is asked for.
"""

from __future__ import annotations

import ast
import inspect
import math
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, NamedTuple

MAX_PARAMS = 16  # the input descriptions' MAX_KWARGS
MAX_NAME = 64
MAX_TEXT = 64  # a parameter's text in a pattern
MAX_WORD = 32
MAX_ABS_INT = 2**31 - 1
MAX_ABS_FLOAT = 1e30
MAX_DIM = 4096
MAX_INT_LIST = 8
MAX_REASON = 200
# Parameters that size an allocation: bounded like one dimension of a described tensor.
SIZE_LIKE = frozenset({
    "size", "sizes", "shape", "output_size", "kernel_size", "n", "num_classes", "scale_factor", "repeats",
    "output_padding", "num_samples", "steps", "window_length", "length", "window_size", "split_size",
    "split_size_or_sections", "chunks", "sections", "upscale_factor", "downscale_factor", "num_embeddings",
    "embedding_dim", "in_features", "out_features", "in_channels", "out_channels", "hidden_size",
    "num_layers", "num_heads", "embed_dim", "bins", "minlength", "diagonal", "offset", "pad", "padding",
})
FLOAT_WORDS = frozenset({"nan", "inf", "-inf"})
_CONDITION = re.compile(r"^\s*(>=|<=|>|<|==|!=)\s*(-?\d+(?:\.\d+)?)\s*$")
_WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_EINSUM = re.compile(r"^[a-zA-Z]{0,12}(,[a-zA-Z]{0,12}){0,4}(->[a-zA-Z]{0,12})?$")  # no ellipsis: no '..'
_NUMBER_KINDS = frozenset({"int", "float", "scalar", "tensor", "any"})


class ParamCheck(NamedTuple):
    """The parameters kept (values as given) and, for each one dropped, why."""

    kept: dict[str, Any]
    dropped: dict[str, str]


def _string_literals() -> frozenset[str]:
    from fuzz_core.inputs.description import STRING_LITERALS

    return STRING_LITERALS


def parse_param_text(text: str) -> Any:
    """A pattern's parameter text as the value the fuzz core will place: a literal (``"0"`` → 0,
    ``"(3, 3)"`` → [3, 3]) or the text itself (a condition such as ``"> 0"``, or a bare word)."""
    stripped = text.strip()
    if _CONDITION.match(stripped):
        return stripped
    try:
        value = ast.literal_eval(stripped)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return stripped
    return list(value) if isinstance(value, tuple) else value


def param_text(value: Any) -> str | None:
    """A JSON value from an answer (``0``, ``true``, ``[3, 3]``) as pattern text; None for other shapes."""
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)) and all(v is None or isinstance(v, (bool, int, float)) for v in value):
        return repr(list(value))
    return None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number_problem(name: str, value: float) -> str | None:
    limit = MAX_DIM if name in SIZE_LIKE else (MAX_ABS_INT if _is_int(value) else MAX_ABS_FLOAT)
    if isinstance(value, float) and not math.isfinite(value):
        return "a non-finite number (write nan, inf or -inf)"
    if abs(value) > limit:
        what = "a size-like parameter" if name in SIZE_LIKE else "a number"
        return f"{what} outside ±{limit:g}"
    return None


def _value_kinds(value: Any) -> tuple[str, ...]:
    """What a parsed value is, in the words of ``signature_kinds``."""
    if value is None:
        return ("none",)
    if isinstance(value, bool):
        return ("bool", "scalar")  # an ATen Scalar takes a bool
    if _is_int(value):
        return ("int", "float", "scalar", "tensor")
    if isinstance(value, float):
        return ("float", "scalar", "tensor")
    if isinstance(value, list):
        return ("list",)
    if isinstance(value, str) and _CONDITION.match(value):
        return ("int", "float", "scalar", "tensor") if "." not in value else ("float", "scalar", "tensor")
    if isinstance(value, str) and value in FLOAT_WORDS:
        return ("float", "scalar", "tensor", "str")
    return ("str",)


def value_problem(name: str, value: Any) -> str | None:
    """Why a parsed value is outside Note [Trigger parameter bounds], or None."""
    if value is None or isinstance(value, bool):
        return None
    if _is_int(value) or isinstance(value, float):
        return _number_problem(name, value)
    if isinstance(value, list):
        if len(value) > MAX_INT_LIST:
            return f"a list longer than {MAX_INT_LIST}"
        for item in value:
            if not (isinstance(item, bool) or _is_int(item) or isinstance(item, float)):
                return f"a list holding a {type(item).__name__} (only numbers and bools)"
            problem = None if isinstance(item, bool) else _number_problem(name, item)
            if problem is not None:
                return f"a list holding {problem}"
        return None
    if isinstance(value, str):
        if len(value) > MAX_TEXT:
            return f"a string longer than {MAX_TEXT} characters"
        condition = _CONDITION.match(value)
        if condition is not None:
            number = condition.group(2)
            return _number_problem(name, float(number) if "." in number else int(number))
        if value in FLOAT_WORDS or value in _string_literals():
            return None
        if "/" in value or ".." in value or "\\" in value:
            return "a path-like string"
        if _EINSUM.match(value) and ("," in value or "->" in value):
            return None
        if len(value) <= MAX_WORD and _WORD.match(value):
            return None
        return f"a string that is neither a known mode name nor a word of at most {MAX_WORD} letters"
    return f"a {type(value).__name__}, not a literal"


def _kinds_of_type_text(text: str) -> set[str]:
    """The kinds a parameter's annotation or ATen type (as text) accepts."""
    words = set(re.findall(r"[a-z]+", text.lower()))  # torch's stubs spell _int, _bool
    kinds: set[str] = set()
    if words & {"optional", "none", "nonetype"}:
        kinds.add("none")
    if "bool" in words:
        kinds.add("bool")
    if words & {"int", "symint"}:
        kinds.add("int")
    if "float" in words:
        kinds.add("float")
    if words & {"number", "scalar", "complex"}:
        kinds.add("scalar")
    if words & {"str", "literal", "string"}:
        kinds.add("str")
    if "tensor" in words:
        kinds.add("tensor")
    if words & {"list", "tuple", "sequence"} or re.search(r"\[\d*\]", text):
        kinds.add("list")
    if words & {"any"}:
        kinds.add("any")
    return kinds


def _python_kinds(parameter: inspect.Parameter) -> tuple[set[str], frozenset[str]]:
    """Kinds from a Python signature's annotation and default, and the strings of a ``Literal``."""
    kinds: set[str] = set()
    literals: frozenset[str] = frozenset()
    annotation = parameter.annotation
    if annotation is not inspect.Parameter.empty:
        text = annotation if isinstance(annotation, str) else inspect.formatannotation(annotation)
        kinds |= _kinds_of_type_text(text)
        if "Literal[" in text:
            literals = frozenset(re.findall(r"'([^']*)'", text))
    default = parameter.default
    if default is not inspect.Parameter.empty:
        kinds |= set(_value_kinds(default)[:1]) if not isinstance(default, (list, tuple)) else {"list"}
        if default is None:
            kinds.add("none")
    if not kinds or kinds == {"none"}:
        kinds.add("any")  # nothing declared: the generic bounds only
    return kinds, literals


class ParamType(NamedTuple):
    kinds: frozenset[str]
    literals: frozenset[str]  # non-empty: the only strings it takes


@lru_cache(maxsize=4096)
def signature_kinds(api: str) -> Mapping[str, ParamType] | None:
    """Parameter name -> what it takes, for an allow-listed API; None when no signature is known."""
    try:
        from fuzz_core.api_names import resolve_public_api

        obj = resolve_public_api(api)
    except Exception:
        return None
    found: dict[str, tuple[set[str], set[str]]] = {}
    known = False
    functions = [getattr(obj, "__init__", None), getattr(obj, "forward", None)] if inspect.isclass(obj) else [obj]
    for fn in functions:
        try:
            parameters = inspect.signature(fn).parameters.values()  # type: ignore[arg-type]
        except (TypeError, ValueError):
            continue
        known = True
        for parameter in parameters:
            if parameter.name == "self" or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                continue
            kinds, literals = _python_kinds(parameter)
            entry = found.setdefault(parameter.name, (set(), set()))
            entry[0].update(kinds)
            entry[1].update(literals)
    if not known:
        known = _aten_kinds(api.rsplit(".", 1)[-1], found)
    if not known:
        return None
    return {name: ParamType(frozenset(kinds), frozenset(literals)) for name, (kinds, literals) in found.items()}


def _aten_kinds(short_name: str, found: dict[str, tuple[set[str], set[str]]]) -> bool:
    import torch

    try:
        schemas = torch._C._jit_get_schemas_for_operator(f"aten::{short_name.rstrip('_')}")
    except Exception:
        return False
    for schema in schemas:
        for argument in schema.arguments:
            if argument.name == "self":
                continue
            kinds = _kinds_of_type_text(str(argument.type)) or {"opaque"}
            found.setdefault(argument.name, (set(), set()))[0].update(kinds)
    return bool(schemas)


def type_problem(value: Any, declared: ParamType) -> str | None:
    """Why a bounded value does not fit the parameter's declared type, or None."""
    kinds = declared.kinds
    if "any" in kinds:
        return None
    if isinstance(value, str) and declared.literals and value not in FLOAT_WORDS and not _CONDITION.match(value):
        return None if value in declared.literals else f"not one of {sorted(declared.literals)[:8]}"
    if isinstance(value, list):
        # torch declares many sizes as int yet broadcasts a list (interpolate's size, pooling windows)
        fits = bool(kinds & {"list", "int"}) and all(set(_value_kinds(item)) & kinds for item in value)
    else:
        fits = bool(set(_value_kinds(value)) & kinds)
    if fits:
        return None
    wanted = ", ".join(sorted(kinds - {"opaque"})) or "no literal"
    return f"the API's signature takes {wanted} here, not {_describe(value)}"


def _describe(value: Any) -> str:
    if isinstance(value, str):
        return "a condition" if _CONDITION.match(value) else "a string"
    names = {bool: "a bool", int: "an integer", float: "a float", list: "a list"}
    return "None" if value is None else names.get(type(value), f"a {type(value).__name__}")


def _name_problem(name: Any) -> str | None:
    if not isinstance(name, str) or not _NAME.match(name) or len(name) > MAX_NAME:
        return "not a plain parameter name"
    if name.startswith("_"):
        return "a private parameter name"
    return None


def _reason_key(name: Any) -> str:
    text = name if isinstance(name, str) else repr(name)
    return "".join(ch if ch.isprintable() else "?" for ch in text)[:MAX_NAME]


def check_params(params: Mapping[Any, Any], *, api: str | None = None, as_text: bool = False) -> ParamCheck:
    """Split ``params`` into those within Note [Trigger parameter bounds] and the reasons for the rest.

    ``as_text``: the values are a pattern's text (parsed with ``parse_param_text`` to be checked,
    kept as text); otherwise they are the values a harness spec places. ``api``: type them from
    its signature where one is known.
    """
    kept: dict[str, Any] = {}
    dropped: dict[str, str] = {}
    declared = signature_kinds(api) if api else None
    for name, raw in params.items():
        problem = _name_problem(name)
        if problem is None and len(kept) >= MAX_PARAMS:
            problem = f"more than {MAX_PARAMS} parameters"
        value = raw
        if problem is None and as_text:
            if not isinstance(raw, str):
                problem = f"{_describe(raw)} where text was expected"
            elif len(raw) > MAX_TEXT:
                problem = f"text longer than {MAX_TEXT} characters"
            else:
                value = parse_param_text(raw)
        if problem is None:
            problem = value_problem(name, value)
        if problem is None and declared is not None and name in declared:
            problem = type_problem(value, declared[name])
        if problem is None:
            kept[name] = raw
        else:
            dropped[_reason_key(name)] = problem[:MAX_REASON]
    return ParamCheck(kept, dropped)
