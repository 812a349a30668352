"""The limits on every text a run bundle carries, in one place for every bundle format.

Pure: no Django. The values here are the defaults; the product's are settings
(`BLINDJUDGE_MAX_*`, blindjudge/settings.py, documented in README's Configuration section), which
judging.services.checks.bundle_limits() reads into a `TextLimits` and passes to the validator.
A bundle format's validator names, per place, which limit applies (content/bundle.py,
`_LIMITED_TEXTS`); a new format reuses these limits rather than inventing its own.

Characters are code points (Python's `len`); bytes are UTF-8. Copies and requests are counted
in bytes because they are hashed as bytes; every other text in characters. The ceilings
(`CEILINGS`) are the database columns' sizes: a limit above one would let a text through the
validator that the database then refuses.
"""

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class TextLimits:
    """What each text in a bundle may hold at most (the copy content's limit is separate:
    `max_copy_bytes`, a setting older than these)."""

    name_chars: int = 200            # run name, builder / reviewer model and family, authorship guess
    id_chars: int = 200              # every id, a copy's cluster, each of request_keys
    task_chars: int = 100_000        # the task statement
    finding_chars: int = 20_000      # a finding's text
    review_reason_chars: int = 20_000  # a model review's reason
    note_chars: int = 10_000         # a copy's defect note
    request_bytes: int = 6 * 1024 * 1024  # a review's serialized request (it holds the copy)

    def __post_init__(self):
        for field in fields(self):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"TextLimits.{field.name}: expected a whole number ≥ 1, got {value!r}")
            ceiling = CEILINGS.get(field.name)
            if ceiling is not None and value > ceiling:
                raise ValueError(f"TextLimits.{field.name}: at most {ceiling} (the column's size)")


# Database column sizes the limits may not exceed (judging/models.py).
CEILINGS = {"name_chars": 200, "id_chars": 200}
