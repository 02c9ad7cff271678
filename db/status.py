"""String values of the status columns, shared by every stage."""

PATTERN_STATUSES = ("extracted", "error", "not_silent", "false_alarm", "no_pattern", "transferred", "unsupported")
CANDIDATE_STATUSES = ("proposed", "vetoed", "harnessed", "no_harness")
HARNESS_STATUSES = ("pending", "running", "done", "error")
VERDICTS = ("confirmed", "suspicious", "passed", "crash", "hang", "error", "not_applicable", "flaky", "inconclusive")
REVIEW_STATUSES = ("unreviewed", "accepted", "rejected")
# The source re-check (db/queries/source_recheck.py): does the reported bug still reproduce on this torch?
SOURCE_OUTCOMES = ("reproduces", "does_not_reproduce", "fixed", "inconclusive", "not_checked")
SOURCE_BASES = ("report_repro", "harness")
