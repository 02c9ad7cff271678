"""CI mode: a gate over a fuzz run's verdicts and machine-readable result files."""
