"""Pick the API under test from the calls of a snippet, the title and the prose."""

from __future__ import annotations

import re

from agent.extract.scan import CallSite
from agent.extract.vocab import (
    COMPARATORS,
    DTYPE_METHODS,
    DTYPE_NAMES,
    INFRA_METHODS,
    INFRA_PREFIXES,
    INFRA_TORCH,
    NEVER_UNDER_TEST,
    SIZE_CONSTRUCTORS,
)

_WORD_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PROSE_API_RE = re.compile(r"\b(torch|F|nn)\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)")
_PROSE_ALIASES = {"torch": "torch", "F": "torch.nn.functional", "nn": "torch.nn"}
# Op names that are also ordinary English (or too generic) to be read as an op when the title uses them bare;
# backticked or written as a call (`sort`, sort()) they still count. See Note [An op the title names].
_ENGLISH_OP_NAMES = frozenset(
    "absolute add all angle any cat chunk clip clone compile complex concat cond cross detach device diff divide "
    "dot dtype empty equal eye fill fix flatten flip fold fork full gather grad gradient greater inner inverse "
    "layout less linear load log math max mean median min mode multiply narrow negative norm normal normalize "
    "nonzero ones outer pad polar positive put range real remainder round save scatter seed select sign solve sort "
    "split square stack sum take tensor threshold tile torch trace typename unique wait warnings where zeros np t "
    "floor ceil exp frac var std prod pow det dist le lt ge gt eq ne sub mul div neg is to".split()
)
# A name in backticks, written as a call, or followed by "operator"/"op"/"function"/"kernel" ("the remainder
# operator"): the title uses the word as a name, even one that is also English.
_TITLE_CALL = re.compile(r"`(?:torch\.|F\.|nn\.)?([A-Za-z_][A-Za-z0-9_]*)(?:\(\))?`|\b([A-Za-z_][A-Za-z0-9_]*)\(\)"
                         r"|\b([A-Za-z_][A-Za-z0-9_]*) (?:operator|op|function|kernel)\b", re.I)
# Python's operators as a title names them ("the `or` operator", "`|=` does nothing", "the modulo operator"):
# the torch op the operator runs. Read only where the title marks the word as a name (backticks, "operator").
_PYTHON_OPERATORS = {"or": "bitwise_or", "|": "bitwise_or", "|=": "bitwise_or", "and": "bitwise_and",
                     "&": "bitwise_and", "&=": "bitwise_and", "xor": "bitwise_xor", "^": "bitwise_xor",
                     "^=": "bitwise_xor", "~": "bitwise_not", "invert": "bitwise_not", "<<": "bitwise_left_shift",
                     "<<=": "bitwise_left_shift", ">>": "bitwise_right_shift", ">>=": "bitwise_right_shift",
                     "%": "remainder", "%=": "remainder", "modulo": "remainder", "//": "floor_divide",
                     "//=": "floor_divide", "**": "pow", "**=": "pow", "power": "pow", "@": "matmul", "@=": "matmul"}
_TITLE_SYMBOL = re.compile(r"`(\*\*=?|//=?|<<=?|>>=?|[|&^%@]=?|~)`")
# a title about in-place ops ("in-place functions give wrong values"): choose_api
_IN_PLACE = re.compile(r"\bin[- ]?place\b", re.I)
# a title written as code that applies an operator to a call's result (``torch.tensor(...) * torch.tensor(...)``):
# the operator's op is the subject, the builders make its operands (choose_api)
_TITLE_OPERATOR = re.compile(r"\)[^\S\n]*(\*\*|//|[-+*/%@])[^\S\n]*(?=torch\.|\d|\()")
_OPERATOR_OPS = {"+": "torch.add", "-": "torch.sub", "*": "torch.mul", "/": "torch.div", "**": "torch.pow",
                 "//": "torch.floor_divide", "%": "torch.remainder", "@": "torch.matmul"}
# an op spelled with its submodule but without ``torch.`` (``linalg.det``, ``special.xlogy``)
_SUBMODULE_OP = re.compile(r"(?<![\w.])(linalg|special|fft)\.([A-Za-z_][A-Za-z0-9_]*)")
_OP_NAMESPACES = ("torch", "torch.nn.functional", "torch.linalg", "torch.special", "torch.fft")
# Wrappers that run other code (a mode), never the op under test even when the title spells them out
_MODE_WRAPPERS = frozenset({"torch.compile", "torch.autocast", "torch.vmap", "torch.no_grad", "torch.enable_grad",
                            "torch.inference_mode", "torch.set_grad_enabled", "torch.manual_seed", "torch.device"})


def _short(api: str) -> str:
    return api.rsplit(".", 1)[-1]


# The legacy typed constructors (torch.LongTensor([...]), torch.cuda.HalfTensor(3, 4)) build inputs, as
# torch.tensor does; old reports use them everywhere.
_LEGACY_CONSTRUCTOR = re.compile(r"torch\.(?:cuda\.)?[A-Z][A-Za-z0-9]*Tensor")
# Builders that also compute: set aside as input plumbing at the top level, candidates (below any other op)
# inside the snippet's own function, the code a mode runs (a traced loop that concatenates).
_COMPOSING_BUILDERS = frozenset({"torch.cat", "torch.stack"})


def is_tooling(api: str) -> bool:
    """Input builders, mode wrappers and comparators: never the API under test. A tooling namespace named bare
    ("torch.export", "torch.jit" in a title) is tooling as its members are."""
    return (not api.startswith("torch") or api in INFRA_TORCH or api in COMPARATORS or api.startswith(INFRA_PREFIXES)
            or f"{api}." in INFRA_PREFIXES or _LEGACY_CONSTRUCTOR.fullmatch(api) is not None)


def is_infra(site: CallSite) -> bool:
    """Tooling, plus tensor plumbing (``.float()``, ``.abs().max()``) unless the title names it."""
    return is_tooling(site.api) or (site.kind == "method" and _short(site.api) in INFRA_METHODS)


def _sized_from_a_tensor(site: CallSite) -> bool:
    """``torch.zeros(x.size(0), 8)`` inside the snippet's own code: a size a trace may freeze.

    A size that is not a literal reads as None in the call's args (scan.literal).
    """
    return site.api in SIZE_CONSTRUCTORS and site.in_user_code and any(arg is None for arg in site.args)


def _composes_in_user_code(site: CallSite) -> bool:
    return site.api in _COMPOSING_BUILDERS and site.in_user_code and not site.in_print


def _writes_out(site: CallSite) -> bool:
    """``torch.arange(10, out=b)``: a constructor given a tensor to write into computes into it, and a repro
    passes one only to test that write (an input is built by the constructor's return value, not by out=)."""
    return site.kind == "function" and "out" in site.kwargs and site.kwargs["out"] is None


def _title_position(api: str, title_words: list[str]) -> int | None:
    """Where the title names the op the code calls: its own name, or the same op family spelled as the module
    is ("LayerNorm" for F.layer_norm, "BatchNorm2d" for F.batch_norm: ``_op_key``)."""
    short = _short(api).lower()
    key = _op_key(short.rstrip("_"))
    for position, word in enumerate(title_words):
        if word == short or word.rstrip("_") == short.rstrip("_") or (len(key) >= 4 and _op_key(word) == key):
            return position
    return None


def choose_api(calls: list[CallSite], title: str, prose: str, operators: list[CallSite] | None = None,
               bound_names: set[str] | frozenset[str] = frozenset(),
               ) -> tuple[str | None, list[tuple[str, float]]]:
    """The most likely API under test and the ranked candidates with their scores.

    ``operators`` are the snippet's arithmetic operators (Note [Operators as a last resort], scan.py);
    ``bound_names`` the variables and parameters it binds: a title word the code never calls as an op but binds
    as a name ("broadcast sin/cos" over tensors named sin and cos) names that value, not an op.
    """
    title_words = [w.lower() for w in _WORD_RE.findall(title)]
    in_place_title = _IN_PLACE.search(title) is not None
    prose_words = {w.lower() for w in _WORD_RE.findall(prose)}
    # a check such as torch.isfinite is plumbing in a repro, but not when the title spells it out as the subject
    named = title_api(title)
    if named in INFRA_TORCH and any(op not in INFRA_TORCH for op in title_ops(title)):
        named = None  # "torch.tensor(inf).min() is wrong": the constructor builds the input the op is given
    # "torch.tensor(a) * torch.tensor(b) gives inf": the builders in the title only make the operator's operands
    title_operators = list(dict.fromkeys(_OPERATOR_OPS[m.group(1)] for m in _TITLE_OPERATOR.finditer(title))
                           ) if named in INFRA_TORCH else []
    if title_operators:
        named = None
    # tensor plumbing named in the title counts only where it computes, not inside print()
    computing = {site.api for site in calls if not site.in_print}
    order: list[str] = []
    user_code: set[str] = set()
    uses: dict[str, float] = {}
    for site in calls:
        if _short(site.api) in NEVER_UNDER_TEST and site.kind == "method":
            continue
        # a dtype conversion (``.half()``, ``.float()``) whose name the title carries names the dtype, not the op
        if site.api != named and not _sized_from_a_tensor(site) and not _writes_out(site) \
                and not _composes_in_user_code(site) and (is_tooling(site.api) or (
            is_infra(site) and (_title_position(site.api, title_words) is None or site.api not in computing
                                or _short(site.api) in DTYPE_METHODS and site.kind == "method")
        )):
            continue
        if site.api not in uses:
            order.append(site.api)
            uses[site.api] = 0.0
        if site.in_user_code:
            user_code.add(site.api)
        # printed expressions report results; they are rarely what is under test
        uses[site.api] += -1.0 if site.in_print else 0.3
    scores: dict[str, float] = {}
    plain_forms = {_short(api) for api in order if not api.endswith("_")}
    for api in order:
        title_pos = _title_position(api, title_words)
        score = min(uses[api], 1.5)
        if title_pos is not None and not (title_operators and api in INFRA_TORCH):
            score += 10.0 - 0.1 * title_pos
        if _short(api).lower() in prose_words:
            score += 2.0
        if api in user_code:
            score += 3.0
        if api in SIZE_CONSTRUCTORS or api in _COMPOSING_BUILDERS:  # below an op used as often
            score -= 0.5
        if in_place_title and api.endswith("_") and not api.endswith("__") and _short(api)[:-1] not in plain_forms:
            # "in-place ops give wrong values": the in-place methods the code calls are the subject (where the code
            # also calls the plain form, that op with the in-place mode is, as before)
            score += 1.0
        scores[api] = score
    # a title op the code calls only where it was set aside (inside print, as plumbing) is still the title's op
    called = {_op_key(_short(api)) for api in scores}
    # an op the title names that the code runs through an operator (``1.0 - a`` under "`add` and `sub` are wrong")
    run_by_operator = {_short(site.api) for site in operators or []}
    for op in title_ops(title):  # Note [An op the title names]
        if op in INFRA_TORCH and op != named:
            continue
        if op not in scores and _short(op) not in bound_names and not any(
                _same_family(_op_key(_short(op)), key) for key in called):
            # a title word the code never calls ranks below a title op the code runs, even one it only prints
            # ("`torch.mm` is wrong for ... combinations": mm in print() scores 8.9); one spelled out keeps 9
            base = 9.0 if op == named else 8.5
            scores[op] = base + 2.0 * (_short(op).lower() in prose_words) + 0.5 * (_short(op) in run_by_operator)
    for op in title_operators:
        scores.setdefault(op, 9.0)
    ranked = sorted(scores.items(), key=lambda item: -item[1])  # stable: first use wins ties
    if ranked and ranked[0][1] > 0:
        return ranked[0][0], ranked
    # an op called only inside print() (a negative score) is still an op the code ran
    fallback = prose_api(title) or prose_api(prose) or (ranked[0][0] if ranked else None) or last_resort(
        calls, operators or [])
    return fallback, ranked


# Tensor plumbing that computes values: set aside while a named op is left, the op under test when none is.
_COMPUTING_PLUMBING = frozenset({"abs", "max", "min", "sum", "mean", "std", "argmax", "add", "sub", "mul", "div"})


def last_resort(calls: list[CallSite], operators: list[CallSite]) -> str | None:
    """Note [The op left when nothing is named]

    Some repros call no op but tensor plumbing (``x / x.mean(-1)``, ``a.mean()`` printed, ``v1 + v2`` then
    ``.sum().backward()``): every call was set aside as reporting or bookkeeping, and the report is about one
    of them. Then the computing method or arithmetic operator is the op under test, nearest to the code under
    test first: the snippet's own functions, then the top level, then inside print(); methods before
    operators, then slice writes (Note [Slice writes as a last resort], scan.py) at each level, first use first.
    A reduction whose result is ``.backward()``-ed makes the loss; one over the difference of two results
    (``(out1 - out2).abs().mean()``) measures the gap: neither is it. A dtype conversion inside the snippet's own
    functions (``x.to(torch.bfloat16)`` in a compiled forward) comes last at that level: where the code under test
    only converts, the conversion is what a mode may get wrong.
    """
    def level(site: CallSite) -> int:
        return 0 if site.in_user_code and not site.in_print else 2 if site.in_print else 1

    methods = [s for s in calls if s.kind == "method" and _short(s.api) in _COMPUTING_PLUMBING and not s.feeds_backward
               and not s.measures_difference]
    conversions = [s for s in calls if level(s) == 0 and _converts_dtype(s)]
    ranked = sorted([(level(s), 0, i, s.api) for i, s in enumerate(methods)] +
                    [(level(s), 1 + (s.kind == "write"), i, s.api) for i, s in enumerate(operators)
                     if not s.measures_difference] +
                    [(0, 3, i, s.api) for i, s in enumerate(conversions)])
    for *_, api in ranked:
        if _fuzzable(api):
            return api
    return None


def _converts_dtype(site: CallSite) -> bool:
    """``x.half()``, ``x.to(torch.bfloat16)``, ``x.to(dtype=...)``: a method call that changes the dtype."""
    if site.kind != "method":
        return False
    if _short(site.api) in DTYPE_METHODS:
        return True
    values = [*site.args, site.kwargs.get("dtype")]
    return _short(site.api) == "to" and any(
        isinstance(v, str) and v.startswith("torch.") and v.rsplit(".", 1)[-1] in DTYPE_NAMES for v in values)


def _op_key(name: str) -> str:
    """batch_norm, BatchNorm1d and batch_norm_ name one op family: case, underscores and 1d/2d/3d folded."""
    return re.sub(r"[123]d$", "", name.lower().replace("_", ""))


def _same_family(title_key: str, called_key: str) -> bool:
    """One op family: the same key, or a title word that spells out the called op's name (Note [An op the title
    names]): "convolution" for Conv2d/conv2d, whose key is "conv". Keys under four letters (log, exp, erf) are
    whole names, never prefixes."""
    if title_key == called_key:
        return True
    short, long = sorted((title_key, called_key), key=len)
    return len(short) >= 4 and long.startswith(short)


def title_ops(title: str) -> list[str]:
    """Fuzzable ops the title names: spelled out (torch.x, F.x), backticked, written as a call, or a bare op name.

    Note [An op the title names]
    A real report's code is often cut off before the call it is about, or never shows it, while the
    title names it ("`torch.mean` differs on CUDA", "addmv bfloat16 accuracy issues"). Such an op is a
    candidate just below an op the code calls and the title names, unless the code calls an op of its family
    (``_same_family``: a title about "convolution" whose code runs nn.Conv2d is about that module). A bare
    title word counts when
    torch has an op of that name in a public namespace and the word is not ordinary English
    (``_ENGLISH_OP_NAMES``: "mode", "sort", "max" ...); backticked or followed by ``()`` it always counts.
    A Python operator the title marks (```|=```, "the `or` operator", "modulo operator") is the torch op it runs
    (``_PYTHON_OPERATORS``). An op spelled with its submodule (``linalg.det``) counts even when its name is
    English. Each name is checked by fuzz_core.api_names, never imported.
    """
    found: list[str] = []
    spelled = title_api(title)
    if spelled:
        found.append(spelled)
    for match in _SUBMODULE_OP.finditer(title):  # `linalg.det`, fft.rfft: the submodule marks an op, not English
        op = f"torch.{match.group(1)}.{match.group(2)}"
        if op not in found and _fuzzable(op):
            found.append(op)
    marked = {(m.group(1) or m.group(2) or m.group(3)).lower() for m in _TITLE_CALL.finditer(title)}
    for name in [*(m.group(1) for m in _TITLE_SYMBOL.finditer(title)), *sorted(marked & _PYTHON_OPERATORS.keys())]:
        op = f"torch.{_PYTHON_OPERATORS[name]}"
        if op not in found:
            found.append(op)
    for word in _WORD_RE.findall(title):
        low = word.lower()
        plain = low in _ENGLISH_OP_NAMES or low in INFRA_METHODS or low in NEVER_UNDER_TEST or low == "slice"
        if plain and low not in marked or low in DTYPE_NAMES or len(low) < 2:
            continue
        op = next((f"{ns}.{low}" for ns in _OP_NAMESPACES if _fuzzable(f"{ns}.{low}")), None)
        if op is None and low.endswith("_") and not low.endswith("__") and _fuzzable(f"torch.Tensor.{low}"):
            op = f"torch.Tensor.{low}"  # an in-place method's name (lerp_, index_add_) is code, never English
        if op is not None and not op.startswith(INFRA_PREFIXES) and op not in INFRA_TORCH and op not in found:
            found.append(op)
    return found


def title_api(title: str) -> str | None:
    """A ``torch.x`` / ``F.x`` spelled out in the title that is an op, not a mode wrapper or tooling namespace.

    An input builder (``torch.tensor``, ``torch.ones``) is returned only when the title spells out no other op.
    """
    builder = None
    for match in _PROSE_API_RE.finditer(title):
        qualified = f"{_PROSE_ALIASES[match.group(1)]}.{match.group(2)}"
        if qualified.startswith(INFRA_PREFIXES) or qualified in _MODE_WRAPPERS:
            continue
        if qualified.rsplit(".", 1)[-1] not in DTYPE_NAMES and _fuzzable(qualified):
            if qualified not in INFRA_TORCH:
                return qualified
            builder = builder or qualified
    return builder


def _fuzzable(api: str) -> bool:
    from fuzz_core.api_names import rejection_reason

    return rejection_reason(api) is None


def prose_api(text: str) -> str | None:
    """``torch.foo`` / ``F.foo`` / ``nn.Foo`` written in prose, qualified."""
    for match in _PROSE_API_RE.finditer(text):
        qualified = f"{_PROSE_ALIASES[match.group(1)]}.{match.group(2)}"
        if qualified.startswith(INFRA_PREFIXES) or f"{qualified}." in INFRA_PREFIXES or qualified in INFRA_TORCH \
                or qualified in COMPARATORS:  # torch.export, torch.jit: a tooling namespace, named bare
            continue
        if qualified.count(".") >= 1 and qualified.rsplit(".", 1)[-1] not in DTYPE_NAMES:
            return qualified
    return None
