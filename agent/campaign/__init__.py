"""The fuzz stage: pending harnesses through fuzz_core's worker pool, findings stored as they come."""
