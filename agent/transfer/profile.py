"""ApiProfile: the structural view of an ApiSemantics record that ranking needs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

FLOAT_DTYPES = frozenset({"float16", "bfloat16", "float32", "float64"})
# Roles whose value changes the structure of what an API computes (window, reduced dims, output
# shape, boundary handling, in-place path). A trigger condition on one of these is a requirement
# the target must meet. Other trigger parameters (eps, scalars such as num_groups or p, sizes a
# module is built with) configure the source API itself: a target without them keeps the pattern
# and the condition is dropped. Note [Structural trigger parameters] in agent/transfer/rank.py.
STRUCTURAL_ROLES = frozenset({"padding", "padding_mode", "stride", "dilation", "kernel_size", "output_size", "dim",
                              "keepdim", "reduction", "bounds", "mode_flag", "alignment", "inplace", "index"})
# Parameters that name one quantity under different names across APIs.
PARAM_SYNONYMS: dict[str, tuple[str, ...]] = {
    "num_channels": ("num_features",),
    "num_features": ("num_channels",),
}
TENSOR_PARAM_NAMES = frozenset({"input", "self", "other", "x", "tensor", "weight", "mat1", "mat2", "tensors", "a", "b"})


@dataclass(frozen=True)
class ApiProfile:
    api: str
    category: str
    summary: str
    params: tuple[str, ...]
    roles: frozenset[str]
    role_params: tuple[tuple[str, str], ...]  # (role, parameter name), first parameter per role
    dtypes: frozenset[str]
    n_tensor_inputs: int
    has_out: bool
    has_inplace: bool
    has_method: bool
    is_module: bool
    param_roles: tuple[tuple[str, str], ...] = ()  # (parameter name, role) for every parameter

    @property
    def text(self) -> str:
        """What TF-IDF sees: the API's own words, never an issue's scenario."""
        leaf = self.api.rsplit(".", 1)[-1].replace("_", " ")
        return " ".join([leaf, self.category, self.summary, " ".join(self.params), " ".join(sorted(self.roles))])

    def param_or_role(self, name: str) -> str | None:
        """The target's parameter that plays `name`'s part (same name, a synonym, or the role `name` names).

        Parameters are never paired by a shared generic role: ceil_mode and count_include_pad are
        both mode flags, min and max both bounds, yet each means something else.
        """
        if name in self.params:
            return name
        for synonym in PARAM_SYNONYMS.get(name, ()):
            if synonym in self.params:
                return synonym
        return dict(self.role_params).get(name)

    def role_of(self, name: str) -> str | None:
        return dict(self.param_roles).get(name)


def profile_from_semantics(api: str, category: str, summary: str, parameters: list[Any],
                           dtypes: list[Any], details: Mapping[str, Any] | None = None) -> ApiProfile:
    """Build a profile from the columns of an api_semantics row (tolerant of missing keys)."""
    details = details or {}
    names: list[str] = []
    roles: set[str] = set()
    role_params: dict[str, str] = {}
    param_roles: list[tuple[str, str]] = []
    tensor_inputs = 0
    for param in parameters or []:
        if isinstance(param, str):
            name, role, kind = param, None, None
        else:
            name, role, kind = param.get("name"), param.get("role"), str(param.get("kind") or param.get("type") or "")
        if not name:
            continue
        names.append(str(name))
        param_roles.append((str(name), str(role or "other")))
        if role and role not in ("other", "unknown", "input", "tensor"):
            roles.add(str(role))
            role_params.setdefault(str(role), str(name))
        if "tensor" in (kind or "").lower() or name in TENSOR_PARAM_NAMES:
            tensor_inputs += 1
    has_out = bool(details.get("has_out") or details.get("supports_out") or "out" in names)
    return ApiProfile(
        api=api,
        category=category or "other",
        summary=summary or "",
        params=tuple(n for n in names if n != "out"),
        roles=frozenset(roles),
        role_params=tuple(sorted(role_params.items())),
        dtypes=frozenset(str(d).replace("torch.", "") for d in dtypes or []),
        n_tensor_inputs=int(details.get("n_tensor_inputs", tensor_inputs) or tensor_inputs),
        has_out=has_out,
        has_inplace=bool(details.get("has_inplace") or details.get("inplace_variant")),
        has_method=bool(details.get("has_method") or details.get("method_variant")),
        is_module=bool(details.get("is_module")) or api.split(".")[-1][:1].isupper(),
        param_roles=tuple(param_roles),
    )
