"""String values of the status columns, shared by every stage."""

PATTERN_STATUSES = ("extracted", "error", "not_silent", "false_alarm", "no_pattern", "transferred", "unsupported")
CANDIDATE_STATUSES = ("proposed", "vetoed", "harnessed", "no_harness")
HARNESS_STATUSES = ("pending", "running", "done", "error")
VERDICTS = ("confirmed", "suspicious", "passed", "crash", "hang", "error", "not_applicable", "flaky", "inconclusive")
REVIEW_STATUSES = ("unreviewed", "accepted", "rejected")
