"""Harness generation: a transfer candidate becomes a runnable fuzz_core harness spec."""
