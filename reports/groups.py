"""The seal outcomes a model review can have and the scoring groups two of them put a review in.

Kept apart from the sections (which load numpy through reports.loading) so that the report's file
forms (reports.export), imported by the host's pages, name the same groups without loading it.
"""

# Every outcome of a review's seal check (judging.models.SealOutcome), in the order reports list them.
SEALS = ("sealed", "verdict_in_content", "failed", "absent")
# The seals that score a review apart, whatever its family, and the group they put it in.
SEAL_GROUPS = {"failed": "seal_failed", "verdict_in_content": "verdict_in_content"}
