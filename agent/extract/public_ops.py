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
"""

from __future__ import annotations

from functools import lru_cache

# Namespaces an op may live in, most specific spelling last is never preferred over the function.
_NAMESPACES = ("torch", "torch.nn.functional", "torch.special", "torch.linalg", "torch.fft", "torch.Tensor")
# ATen name prefix -> the public submodule that holds the rest of the name
_ATEN_PREFIXES = (("linalg_", "torch.linalg"), ("special_", "torch.special"), ("fft_", "torch.fft"))
INTERNAL_PREFIXES = ("torch.ops.aten.", "torch.ops.prims.")
_MAX_PARTS = 6


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


@lru_cache(maxsize=4096)
def public_op(name: str) -> str | None:
    """The public, fuzzable op that ``name`` stands for; ``name`` itself when it is one; None if none."""
    if not name or len(name) > 200 or name.count(".") > _MAX_PARTS + 3:
        return None
    if _allowed(name):
        return name
    parts = name.split(".")
    if name.startswith(INTERNAL_PREFIXES) and len(parts) >= 4:
        leaf = parts[3]  # torch.ops.aten.<op>[.<overload>]
    elif parts[0] == "torch" and len(parts) >= 2 and _absent(name):
        leaf = parts[-1]
    else:
        return None
    for candidate in _leaf_candidates(leaf):
        if _allowed(candidate):
            return candidate
    return None


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
