"""What the product tells judges itself on the instructions page, beside the host's own text
(issue 17 item 2): what each mark in a copy means, shown with the mark's own look, and the time
estimate. Facts of the product, not model output: the pages render them from a template; nothing
here is stored.
"""

from dataclasses import dataclass

from content.vocabulary import VERDICT_LABELS


@dataclass(frozen=True)
class MarkMeaning:
    kind: str
    name: str  # the mark's own title (the tooltip a copy's mark carries)
    sample_html: str  # a mark as the renderer draws it, with the same classes as in a copy
    meaning: str


# One sample of each mark, as content.rendering.mark_html draws it (the same classes and title),
# written out: the judge's page serves them without running the renderer (nothing on a judge's
# path renders), and tests/judge/test_instructions.py holds each to the renderer's own output,
# so the legend cannot drift from the look. (kind, the normaliser's segment text, its mark.)
# The mixed-script sample is "paypal" with a Cyrillic "а" (U+0430) among Latin letters.
MARK_SAMPLES = (
    ("redacted", "[redacted]",
     '<span class="mark redacted" title="redacted by the host">[redacted]</span>'),
    ("invisible", "U+200B",
     '<span class="mark invisible" title="an invisible character">\u27e6U+200B\u27e7</span>'),
    ("bidi", "U+202E",
     '<span class="mark bidi" title="a text-direction control character">\u27e6U+202E\u27e7</span>'),
    ("mixed_script", "p\u0430ypal",
     '<span class="mark mixed" title="letters from mixed scripts">p\u0430ypal</span>'),
)
_MARK_NAMES = {"redacted": "redacted by the host", "bidi": "a text-direction control character",
               "invisible": "an invisible character", "mixed_script": "letters from mixed scripts"}
_MEANINGS = {
    "redacted":
        "The host hid a word here before you saw the copy, usually a name or a model id that "
        "could tell who built it. Judge the copy as if the word were neutral; its absence is not "
        "a fault.",
    "invisible":
        "An invisible character (here a zero-width space) was in the copy. It is shown by its "
        "code so you can see it; it may matter (text that looks equal but is not) or be harmless.",
    "bidi":
        "A control character that changes the direction text is displayed in was in the copy. "
        "Such characters can make code read differently from what it does; it is shown by its "
        "code and has no effect on the page.",
    "mixed_script":
        "A word mixes letters of different alphabets (here a Cyrillic letter among Latin ones), "
        "so it may look like another word that it is not.",
}


def mark_meanings() -> list[MarkMeaning]:
    """Every mark a copy can carry: its title, a sample in its own look, and what it means."""
    return [MarkMeaning(kind=kind, name=_MARK_NAMES[kind], sample_html=sample,
                        meaning=_MEANINGS[kind])
            for kind, _, sample in MARK_SAMPLES]


# The verdicts' keys and words, per kind of session, as the item page numbers and words them
# (judge.pages: verdict_values in order, then keep; tests/judge/test_instructions.py holds the
# order to judging.services.verdict_values). Here so the host's preview shows them too.
_VERDICT_WORDS = {"copies": (VERDICT_LABELS["pass"], VERDICT_LABELS["fail"]),
                  "findings": (VERDICT_LABELS["real"], VERDICT_LABELS["false_alarm"]),
                  "reasons": tuple(VERDICT_LABELS[v] for v in
                                   ("grounded", "partly", "not_grounded", "no_claim")),
                  "pairs": tuple(VERDICT_LABELS[v] for v in ("left", "right", "tie", "both_bad"))}
KEEP_WORDS = VERDICT_LABELS["keep"]


ADJUDICATION_WORDS = (f'{VERDICT_LABELS["real"]} (a finding) or {VERDICT_LABELS["pass"]} (a copy)',
                      f'{VERDICT_LABELS["false_alarm"]} (a finding) or {VERDICT_LABELS["fail"]} '
                      "(a copy)",
                      f'{VERDICT_LABELS["cannot_tell"]}: what is shown does not settle it')


def verdict_keys(kind: str) -> list[tuple[str, str]]:
    """(key, words) of each verdict of a `kind` session, then keep (phase 2 only); an
    adjudication ("adjudication": judging.enums.SessionKind) has one phase and no keep."""
    if kind == "adjudication":
        return [(str(index + 1), words) for index, words in enumerate(ADJUDICATION_WORDS)]
    words = _VERDICT_WORDS[kind]
    return ([(str(index + 1), word) for index, word in enumerate(words)]
            + [(str(len(words) + 1), KEEP_WORDS + " (phase 2 only)")])


@dataclass(frozen=True)
class TimeEstimate:
    items: int
    minutes_per_item: int
    minutes: int  # for phase 1: items × minutes per item


def time_estimate(items: int, minutes_per_item: int) -> TimeEstimate:
    """The host's per-item estimate times the judge's items: a figure the host stands behind, not
    one derived from the copies' sizes (no measurement here ties length to judging time)."""
    return TimeEstimate(items=items, minutes_per_item=minutes_per_item,
                        minutes=items * minutes_per_item)
