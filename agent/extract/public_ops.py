"""The public op behind an internal or mistaken spelling, found as data and checked by the allow-list.

Note [Public op behind internal spellings]
Reports reach an op through spellings the fuzzer may not call: ``torch.ops.aten.index_put.default``
(the dispatcher's name and overload), ``torch.ops.prims.*``, a name that does not exist as written
(``torch.nn.cross_entropy`` for ``torch.nn.functional.cross_entropy``). The op they exercise is
the one with the same name in torch's public namespaces: the overload and leading underscores are
dropped, ATen's ``linalg_``/``special_``/``fft_`` prefixes name their submodule, and each candidate
is accepted only when ``fuzz_core.api_names.rejection_reason`` accepts it (an attribute walk from
``torch``, never an import of a string). A name that exists but may not be fuzzed
(``torch.jit.trace``, ``torch.load``) is never re-spelled: only internal spellings and names that
do not exist are. Calls inside ``torch.library`` custom ops, ``torch.func`` transforms,
``torch.export`` programs and ``nn.Module`` forwards are read by the scanner as the snippet's own
code, so the op they wrap is the API under test (scan.py, select.py).

Note [ATen names that are not the public name]
Some dispatcher names are not the public op's name: ``native_layer_norm`` is ``layer_norm``, the
``upsample_*`` kernels are ``interpolate``, the ``reflection_pad*``/``replication_pad*`` kernels are
``pad``, the C bindings ``torch._C._nn.X``/``torch._C._linalg.linalg_X`` are ``torch.nn.functional.X``/
``torch.linalg.X``. ATEN_RENAMES and C_MODULES hold that knowledge once, for the text's spellings
(here) and for the recorder's (recorded.py). A backward kernel spelled out (``aten.cumprod_backward``,
``aten.native_layer_norm_backward``, ``_softmax_backward_data``) computes the gradient of its forward
op: ``public_op`` names the forward op and ``is_backward_spelling`` says the call is a gradient, so a
report that runs one through torch.compile is a compiled-gradient report (modes.py).
"""

from __future__ import annotations

import re
from functools import lru_cache

# Namespaces an op may live in, most specific spelling last is never preferred over the function.
_NAMESPACES = ("torch", "torch.nn.functional", "torch.special", "torch.linalg", "torch.fft", "torch.Tensor")
# ATen name prefix -> the public submodule that holds the rest of the name
_ATEN_PREFIXES = (("linalg_", "torch.linalg"), ("special_", "torch.special"), ("fft_", "torch.fft"))
_MAX_PARTS = 6
# C binding module -> (public module, the ATen prefix its names carry): torch._C._linalg.linalg_det is torch.linalg.det
C_MODULES = (("torch._C._nn.", "torch.nn.functional.", ""), ("torch._C._linalg.", "torch.linalg.", "linalg_"),
             ("torch._VariableFunctionsClass.", "torch.", ""),
             ("torch._C._special.", "torch.special.", "special_"), ("torch._C._fft.", "torch.fft.", "fft_"),
             ("torch._C._VariableFunctions.", "torch.", ""), ("torch._C._nested.", "torch.nested.", "nested_"),
             ("torch._C._sparse.", "torch.sparse.", "sparse_"))
INTERNAL_PREFIXES = ("torch.ops.aten.", "torch.ops.prims.", *(prefix for prefix, _, _ in C_MODULES))
# Note [ATen names that are not the public name]: the ATen leaf (leading underscores dropped) -> the public leaf
ATEN_RENAMES = {"native_layer_norm": "layer_norm", "native_batch_norm": "batch_norm",
                "native_group_norm": "group_norm", "native_dropout": "dropout", "convolution": "conv",
                "scaled_dot_product_flash_attention_for_cpu": "scaled_dot_product_attention",
                "to_copy": "to", "unsafe_view": "view", "reshape_alias": "reshape", "local_scalar_dense": "item",
                "softmax_backward_data": "softmax", "log_softmax_backward_data": "log_softmax",
                "max_pool1d_with_indices": "max_pool1d", "max_pool2d_with_indices": "max_pool2d",
                "max_pool3d_with_indices": "max_pool3d", "upsample_nearest1d": "interpolate",
                "upsample_nearest2d": "interpolate", "upsample_nearest3d": "interpolate",
                "upsample_linear1d": "interpolate", "upsample_bilinear2d": "interpolate",
                "upsample_bicubic2d": "interpolate", "upsample_trilinear3d": "interpolate",
                "embedding_bag": "embedding_bag", "cudnn_batch_norm": "batch_norm", "addmm": "addmm"}
# Families of kernels behind one public op, by their name's shape (the same Note)
_ATEN_FAMILIES = (
    (re.compile(r"(?:reflection|replication)_pad[123]d|constant_pad_nd"), "pad"),
    (re.compile(r"upsample_(?:nearest(?:_exact)?|bilinear|bicubic|linear|trilinear)[123]d(?:_aa)?"), "interpolate"),
    (re.compile(r"native_batch_norm_legit\w*|batch_norm_with_update\w*"), "batch_norm"),
    (re.compile(r"(?:adaptive_)?max_pool[123]d_with_indices"), None),  # the name without "_with_indices"
    (re.compile(r"scaled_dot_product_\w*attention\w*"), "scaled_dot_product_attention"),
)
# A backward kernel: <forward>_backward, with the suffixes ATen gives the parts of one (_data, _input, ...)
_BACKWARD = re.compile(r"(\w+?)_backward(?:_data|_input|_weight|_grad_input|_out)?")


def _allowed(name: str) -> bool:
    from fuzz_core.api_names import rejection_reason

    return rejection_reason(name) is None


def _absent(name: str) -> bool:
    """The name reaches nothing in torch (a misspelling), as opposed to a name that exists but is denied."""
    from fuzz_core.api_names import NOT_PUBLIC, rejection_reason

    reason = rejection_reason(name) or ""
    return reason.startswith(f"{NOT_PUBLIC}: torch has no ")


def _leaf_candidates(leaf: str) -> list[str]:
    leaf = leaf.lstrip("_")
    if not leaf or not leaf.replace("_", "").isalnum():
        return []
    out = [f"{module}.{leaf[len(prefix):]}" for prefix, module in _ATEN_PREFIXES if leaf.startswith(prefix)]
    out += [f"{namespace}.{leaf}" for namespace in _NAMESPACES]
    if leaf.endswith("_") and not leaf.endswith("__"):  # an in-place spelling: its method
        out.append(f"torch.Tensor.{leaf}")
    return out


def aten_leaf(leaf: str) -> str:
    """The public leaf an ATen leaf stands for (Note [ATen names that are not the public name])."""
    leaf = leaf.lstrip("_")
    if leaf in ATEN_RENAMES:
        return ATEN_RENAMES[leaf]
    for pattern, public in _ATEN_FAMILIES:
        if pattern.fullmatch(leaf):
            return public or leaf.replace("_with_indices", "")
    return leaf


def forward_of(leaf: str) -> str | None:
    """The forward op's ATen leaf when ``leaf`` names a backward kernel, else None."""
    match = _BACKWARD.fullmatch(leaf.lstrip("_"))
    return match.group(1) if match else None


def _internal_leaf(name: str) -> str | None:
    """The ATen leaf of an internal spelling (torch.ops.aten.<op>[.<overload>], torch._C._nn.<op>), else None."""
    parts = name.split(".")
    if name.startswith(("torch.ops.aten.", "torch.ops.prims.")):
        return parts[3] if len(parts) >= 4 else None
    for prefix, _, _ in C_MODULES:
        if name.startswith(prefix) and len(parts) == prefix.count(".") + 1:
            return parts[-1]
    return None


def is_backward_spelling(name: str) -> bool:
    """``name`` is an internal spelling of a backward kernel (``torch.ops.aten.cumprod_backward.default``)."""
    if public_op(name) is None:  # also turns away names too long to be an op
        return False
    leaf = _internal_leaf(name)
    return leaf is not None and forward_of(leaf) is not None


@lru_cache(maxsize=4096)
def public_op(name: str) -> str | None:
    """The public, fuzzable op that ``name`` stands for; ``name`` itself when it is one; None if none."""
    if not name or len(name) > 200 or name.count(".") > _MAX_PARTS + 3:
        return None
    if _allowed(name):
        return name
    parts = name.split(".")
    internal = _internal_leaf(name)
    if internal is not None:
        forward = forward_of(internal) or internal
        own_module = next((module + forward.lstrip("_")[len(strip):] for prefix, module, strip in C_MODULES
                           if name.startswith(prefix) and forward.lstrip("_").startswith(strip)), None)
        candidates = [own_module] if own_module else []
        candidates += _leaf_candidates(aten_leaf(forward)) + _leaf_candidates(forward)
    elif parts[0] == "torch" and len(parts) >= 2 and not name.startswith("torch._C.") and _absent(name):
        candidates = _leaf_candidates(parts[-1])
    else:
        return None
    return next((candidate for candidate in candidates if _allowed(candidate)), None)


def is_internal_spelling(name: str) -> bool:
    return name.startswith(INTERNAL_PREFIXES)


def api_for_mode(api: str, test_mode: str) -> str:
    """The API a harness of `test_mode` calls: for ``variant:inplace`` the plain op whose in-place variant the mode
    runs (``torch.Tensor.add_`` -> ``torch.add``), since the mode adds the trailing underscore itself and an
    in-place spelling has no in-place variant of its own; a Tensor method is the same op as the ``torch`` function
    of its name, so both spellings name the function where one exists (one harness, not two). Any other API or
    mode as it is; a name is only ever replaced by one the allow-list accepts."""
    namespace, _, leaf = api.rpartition(".")
    if test_mode != "variant:inplace" or not namespace or leaf.endswith("__"):
        return api
    plain = leaf[:-1] if leaf.endswith("_") else leaf
    if plain == leaf and namespace != "torch.Tensor":
        return api
    from fuzz_core.api_names import is_opinfo_spelling

    for candidate in (f"torch.{plain}", f"torch.Tensor.{plain}"):
        if _allowed(candidate) and not is_opinfo_spelling(candidate):  # a callable torch has, not only OpInfo's name
            return candidate
    return api
