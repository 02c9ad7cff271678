"""Context-free API semantics from torch itself: signature, docstring, OpInfo metadata.

Nothing here reads an issue: the description of an API is the same for every pattern that
names it, which is what lets the transfer stage compare APIs with each other.
"""

from __future__ import annotations

import inspect
import re
from functools import lru_cache
from typing import Any

from agent.llm.schemas import ApiParameter, ApiSemanticsModel

# parameter name -> role (names PyTorch uses consistently across ops)
_ROLE_BY_NAME: dict[str, str] = {
    "input": "input", "self": "input", "x": "input", "a": "input", "A": "input", "tensor": "input",
    "other": "other_tensor", "target": "other_tensor", "x1": "input", "x2": "other_tensor", "tensor1": "other_tensor",
    "tensor2": "other_tensor", "mat1": "input", "mat2": "other_tensor", "grid": "other_tensor", "src": "other_tensor",
    "weight": "weight", "bias": "bias", "running_mean": "weight", "running_var": "weight",
    "padding": "padding", "pad": "padding", "padding_mode": "padding_mode", "stride": "stride",
    "dilation": "dilation", "kernel_size": "kernel_size", "output_size": "output_size", "size": "output_size",
    "dim": "dim", "dims": "dim", "axis": "dim", "keepdim": "keepdim", "reduction": "reduction",
    "eps": "eps", "epsilon": "eps", "scale_factor": "scale", "scale": "scale", "beta": "scale", "alpha": "scale",
    "value": "scalar", "min": "bounds", "max": "bounds", "lambd": "scalar", "threshold": "scalar",
    "approximate": "mode_flag", "ceil_mode": "mode_flag", "count_include_pad": "mode_flag", "mode": "mode_flag",
    "rounding_mode": "mode_flag", "training": "mode_flag", "recompute_scale_factor": "mode_flag",
    "divisor_override": "scale", "align_corners": "alignment", "dtype": "dtype", "out": "out",
    "inplace": "inplace", "index": "index", "indices": "index", "generator": "generator", "bins": "scalar",
    "correction": "scalar", "unbiased": "mode_flag", "p": "scalar", "num_groups": "scalar",
    "normalized_shape": "output_size", "groups": "scalar", "momentum": "scalar",
}
_CATEGORY_BY_NAME: tuple[tuple[str, str], ...] = (
    (r"pool", "pooling"),
    (r"conv", "convolution"),
    (r"norm(?!al)|batch_norm|layer_norm|group_norm|instance_norm", "normalization"),
    (r"loss|nll|cross_entropy|kl_div", "loss"),
    (r"^cum|logcumsumexp", "scan"),
    (r"relu|gelu|silu|mish|elu|sigmoid|tanh|softmax|softmin|softplus|hardswish|hardtanh|logsigmoid|glu|threshold", "activation"),
    (r"interpolate|upsample|grid_sample|affine_grid", "interpolation"),
    (r"scatter|gather|index|take|put|masked", "indexing"),
    (r"matmul|^mm$|bmm|addmm|linear|einsum|linalg|^dot$|^mv$|baddbmm|cholesky|svd|qr|solve", "linear_algebra"),
    (r"^rand|normal|bernoulli|multinomial|dropout", "random"),
    (r"fft", "fft"),
    (r"^(sum|mean|var|std|prod|amax|amin|max|min|norm|logsumexp|median|nansum|nanmean|all|any)$", "reduction"),
    (r"histc|histogram|bincount", "reduction"),
)
_SIG_LINE = re.compile(r"^\s*([\w.]+)\((.*)\)\s*(?:->\s*.*)?$")


class UnknownApiError(ValueError):
    """The name does not resolve to a torch object."""


def resolve_api(api: str) -> Any:
    """The object a checked name points to (fuzz_core.api_names), by attribute walk: nothing is imported."""
    from fuzz_core.api_names import rejection_reason

    reason = rejection_reason(api)
    if reason is not None:
        raise UnknownApiError(f"{api}: {reason}")
    import torch

    obj: Any = torch
    for i, part in enumerate(api.split(".")[1:], start=2):
        if not hasattr(obj, part):  # OpInfo's spellings such as torch.view: torch itself has no such name
            raise UnknownApiError(f"{api}: torch has no attribute {'.'.join(api.split('.')[:i])}")
        obj = getattr(obj, part)
    return obj


def _doc(obj: Any) -> str:
    return inspect.getdoc(obj) or ""


def _clean_rst(text: str) -> str:
    text = re.sub(r":\w+:`~?([^`]+)`", r"\1", text)
    text = re.sub(r"``([^`]+)``", r"\1", text)
    return re.sub(r"\s+", " ", text).strip()


def _summary(doc: str) -> str:
    paragraphs = [p for p in re.split(r"\n\s*\n", doc) if p.strip()]
    for paragraph in paragraphs:
        first = paragraph.strip().splitlines()[0]
        if _SIG_LINE.match(first) and len(paragraph.strip().splitlines()) == 1:
            continue  # the signature line builtins start with
        if first.startswith(("..", "Args:", "Arguments:", "Example", "Keyword")):
            continue
        return _clean_rst(paragraph)[:600]
    return ""


def _kind_of(default: Any, annotation: Any = inspect.Parameter.empty) -> str:
    text = str(annotation)
    if "Tensor" in text:
        return "tensor"
    for value, name in ((bool, "bool"), (int, "int"), (float, "float"), (str, "str"), (tuple, "tuple")):
        if isinstance(default, value) or text in (value.__name__, f"<class '{value.__name__}'>"):
            return name
    if "dtype" in text:
        return "dtype"
    return "other"


def _params_from_signature(obj: Any) -> tuple[list[ApiParameter], str] | None:
    target = obj.__init__ if inspect.isclass(obj) else obj
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return None
    params = []
    for name, p in sig.parameters.items():
        if name in ("self", "args", "kwargs") or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        default = None if p.default is inspect.Parameter.empty else repr(p.default)
        kind = "tensor" if name in ("input", "other", "weight", "bias", "target") else _kind_of(p.default, p.annotation)
        params.append(ApiParameter(name=name, role=_ROLE_BY_NAME.get(name, "other"), kind=kind, default=default))  # type: ignore[arg-type]
    return params, str(sig)


def _params_from_doc(doc: str) -> tuple[list[ApiParameter], str] | None:
    """Builtins have no inspectable signature; their docstring starts with one."""
    first = doc.strip().splitlines()[0] if doc.strip() else ""
    match = _SIG_LINE.match(first)
    if not match:
        return None
    params = []
    for raw in match.group(2).split(","):
        raw = raw.strip()
        if not raw or raw in ("*", "/") or raw.startswith("*"):
            continue
        name, _, default = raw.partition("=")
        name = name.split(":")[0].strip()
        if not name.isidentifier():
            continue
        default_value = default.strip() or None
        kind = "tensor" if name in ("input", "other", "weight", "bias", "tensor1", "tensor2", "mat1", "mat2") else "other"
        if default_value in ("True", "False"):
            kind = "bool"
        elif default_value and re.fullmatch(r"-?\d+", default_value):
            kind = "int"
        elif default_value and re.fullmatch(r"-?\d*\.\d*(e-?\d+)?", default_value):
            kind = "float"
        params.append(ApiParameter(name=name, role=_ROLE_BY_NAME.get(name, "other"), kind=kind, default=default_value))  # type: ignore[arg-type]
    return params, first.strip()


def _category(api: str, obj: Any, opinfo: dict[str, Any] | None) -> str:
    if opinfo and opinfo.get("category"):
        return str(opinfo["category"])
    short = api.rsplit(".", 1)[-1]
    for pattern, category in _CATEGORY_BY_NAME:
        if re.search(pattern, short.lower()):
            return category
    if inspect.isclass(obj):
        return "module"
    return "other"


def _domain(opinfo: dict[str, Any] | None) -> str | None:
    if not opinfo or not opinfo.get("domain"):
        return None
    low, high = opinfo["domain"]
    lo = "-inf" if low is None else f"{low:g}"
    hi = "inf" if high is None else f"{high:g}"
    return f"[{lo}, {hi}]"


@lru_cache(maxsize=8192)
def semantics_for(api: str, *, use_opinfo: bool = True) -> ApiSemanticsModel:
    """Describe ``api`` from introspection; OpInfo adds dtypes, domain and variants when known."""
    obj = resolve_api(api)
    doc = _doc(obj)
    opinfo = None
    if use_opinfo:
        from agent.extract.opinfo_index import opinfo_index

        index = opinfo_index()
        functional = api.replace("torch.Tensor.", "torch.", 1)
        opinfo = index.get(api) or index.get(functional) or index.get(functional.rstrip("_"))
    found = _params_from_signature(obj) if not _is_builtin(obj) else None
    found = found or _params_from_doc(doc) or ([], "")
    params, _signature = found
    short = api.rsplit(".", 1)[-1]
    import torch

    has_out = bool(opinfo["supports_out"]) if opinfo else any(p.name == "out" for p in params)
    has_inplace = bool(opinfo["has_inplace"]) if opinfo else hasattr(torch.Tensor, short + "_") or hasattr(torch, short + "_")
    has_method = bool(opinfo["has_method"]) if opinfo else hasattr(torch.Tensor, short) and not inspect.isclass(obj)
    return ApiSemanticsModel(
        api=api,
        category=_category(api, obj, opinfo),
        summary=_summary(doc),
        parameters=params,
        input_domain=_domain(opinfo),
        dtypes=list(opinfo["dtypes"]) if opinfo else [],
        has_out=has_out,
        has_inplace=has_inplace,
        has_method=has_method,
    )


def signature_text(api: str) -> str:
    """The signature as text, for the LLM's api_semantics prompt."""
    obj = resolve_api(api)
    found = (_params_from_signature(obj) if not _is_builtin(obj) else None) or _params_from_doc(_doc(obj))
    return found[1] if found else ""


def first_doc_paragraph(api: str) -> str:
    return _summary(_doc(resolve_api(api)))


def _is_builtin(obj: Any) -> bool:
    return inspect.isbuiltin(obj) or type(obj).__name__ in ("builtin_function_or_method", "method_descriptor")
