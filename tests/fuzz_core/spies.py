"""Test helpers that watch a Campaign run without changing what it does."""

from __future__ import annotations

from fuzz_core.campaign import Campaign
from fuzz_core.inputs import Sample


def evaluated_samples(campaign: Campaign) -> list[Sample]:
    """The list every input the campaign evaluates from now on is appended to, in order."""
    seen: list[Sample] = []
    original = campaign.evaluate

    def spy(entry):  # type: ignore[no-untyped-def]
        seen.append(entry.sample)
        return original(entry)

    campaign.evaluate = spy  # type: ignore[method-assign]
    return seen
