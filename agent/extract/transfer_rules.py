"""Offline transfer check: can a pattern's trigger be expressed on a target API?"""

from __future__ import annotations

from agent.llm.schemas import ApiSemanticsModel, TransferCheck
from agent.patterns import BugPattern, Trigger
from agent.transfer.profile import PARAM_SYNONYMS, STRUCTURAL_ROLES

# Roles shared by parameters that mean different things (num_groups and momentum are both "scalar").
_UNPAIRED_ROLES = frozenset({"other", "scalar"})


def check_transfer(pattern: BugPattern, source: ApiSemanticsModel | None, target: ApiSemanticsModel) -> TransferCheck:
    """Keep when every structural trigger parameter maps to a target parameter (by name, a synonym,
    else by a specific role) and the target supports the trigger's dtypes; the adapted trigger uses
    the target's names. The source's own non-structural parameters (logit's eps, GroupNorm's
    num_groups) are dropped where the target lacks them (Note [Structural trigger parameters])."""
    by_name = {p.name: p for p in target.parameters}
    source_roles = {p.name: p.role for p in source.parameters} if source else {}
    adapted: dict[str, str] = {}
    dropped: list[str] = []
    for name, value in pattern.trigger.params.items():
        if name in by_name:
            adapted[name] = value
            continue
        role = source_roles.get(name)
        match = next((s for s in PARAM_SYNONYMS.get(name, ()) if s in by_name), None) or next(
            (p.name for p in target.parameters if role and role not in _UNPAIRED_ROLES and p.role == role), None)
        if match and match not in adapted:
            adapted[match] = value
        else:
            dropped.append(name)
    dtypes = list(pattern.trigger.dtypes)
    unsupported = [d for d in dtypes if target.dtypes and d not in target.dtypes]
    mode_dtype = pattern.test_mode.name.split(":", 1)[1] if pattern.test_mode.name.startswith(("dtype:", "autocast:")) else None
    if mode_dtype and target.dtypes and mode_dtype not in target.dtypes:
        unsupported.append(mode_dtype)
    trigger = Trigger(
        dtypes=[d for d in dtypes if d not in unsupported],
        special_values=list(pattern.trigger.special_values),
        layout=pattern.trigger.layout,
        shape=list(pattern.trigger.shape),
        params=adapted,
    )
    if unsupported:
        return TransferCheck(keep=False, reason=f"{target.api} does not support {', '.join(unsupported)}", adapted_trigger=trigger)
    needed = [name for name in dropped if source_roles.get(name) in STRUCTURAL_ROLES or name not in source_roles]
    if needed:
        return TransferCheck(
            keep=False,
            reason=f"{target.api} has no parameter for {', '.join(needed)}, which the trigger needs",
            adapted_trigger=trigger,
        )
    reason = f"{target.api} ({target.category}) takes the trigger"
    if dropped:
        reason += f"; without {', '.join(dropped)} ({pattern.api}'s own parameters, not structural)"
    return TransferCheck(keep=True, reason=reason, adapted_trigger=trigger)
