"""What every importer shares: named input bytes, the result, the error list and model families.

Pure: no Django.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from content.bundle import BundleError

MAX_ERRORS = 100


@dataclass(frozen=True)
class Source:
    """One input file: the name errors cite (the path as the host gave it) and its bytes."""

    name: str
    data: bytes


@dataclass
class Imported:
    """A converted run: `bundle` is a `blindjudge.run/2` object; `summary` counts what is in it."""

    bundle: dict
    summary: dict = field(default_factory=dict)
    # Where the bundle's texts came from in the host's own files, by their path in the bundle
    # ("copies[3].content" -> "preds.jsonl:4: model_patch"), so a problem found after the
    # conversion (a NUL, a lone surrogate, a text past its limit) names the host's place
    # (content.importers.conversion.at_host_places).
    places: dict[str, str] = field(default_factory=dict)


class ConversionError(BundleError):
    """Input that cannot become a bundle; `errors` lists each problem as `file:line: field: …`
    (at most MAX_ERRORS; `more` counts the rest). A BundleError, so whoever shows a refused
    bundle's problems (`lines()`) shows these the same way."""


class Problems:
    """Collects problems by place, capped; `raise_if_any()` at the end of a conversion."""

    def __init__(self, cap: int = MAX_ERRORS):
        self.items: list[str] = []
        self.more = 0
        self.cap = cap

    def add(self, where: str, message: str) -> None:
        """`where` is `file`, `file:line` or `file:line: field` (lines 1-based)."""
        if len(self.items) >= self.cap:
            self.more += 1
        else:
            self.items.append(f"{where}: {message}")

    def __bool__(self) -> bool:
        return bool(self.items)

    def raise_if_any(self) -> None:
        if self.items:
            raise ConversionError(self.items, self.more)


def version_refusal(what: str, version, readable: tuple[int, ...]) -> str | None:
    """None when `version` is one of the `readable` versions (those an importer was written and
    tested for); otherwise the refusal that names it: "log format version 3: this importer reads
    version 2". A format's later versions are refused, never read as if they were the known one."""
    if isinstance(version, int) and not isinstance(version, bool) and version in readable:
        return None
    shown = version if isinstance(version, int) and not isinstance(version, bool) else repr(version)
    known = ", ".join(str(v) for v in readable)
    return f"{what} {shown}: this importer reads {'versions' if len(readable) > 1 else 'version'} {known}"


def place(source: Source | str, line: int | None = None, field_name: str | None = None) -> str:
    name = source.name if isinstance(source, Source) else source
    out = name if line is None else f"{name}:{line}"
    return out if field_name is None else f"{out}: {field_name}"


# --- model families ------------------------------------------------------------------------------
# Same-family analysis (a reviewer judging its own organisation's copies) depends on the family, so
# a model whose family is not known is refused with the list of models that need one, never guessed.
# Matching: the model name is lower-cased, a provider prefix (`openai/`, `anthropic/`, …) names
# the organisation directly; otherwise the first pattern that matches the name (after any `org/`
# prefix) does.

PROVIDER_FAMILIES = {
    "openai": "OpenAI", "azureai": None, "azure": None, "anthropic": "Anthropic",
    "google": "Google", "vertex": None, "gemini": "Google", "meta-llama": "Meta", "meta": "Meta",
    "mistral": "Mistral", "mistralai": "Mistral", "deepseek": "DeepSeek",
    "deepseek-ai": "DeepSeek", "qwen": "Alibaba", "alibaba": "Alibaba", "grok": "xAI",
    "xai": "xAI", "x-ai": "xAI", "cohere": "Cohere", "CohereForAI": "Cohere",
    "microsoft": "Microsoft", "nvidia": "NVIDIA", "01-ai": "01.AI", "moonshotai": "Moonshot AI",
    "zhipuai": "Zhipu AI", "thudm": "Zhipu AI", "amazon": "Amazon", "ibm-granite": "IBM",
    "allenai": "Ai2", "tiiuae": "TII",
    # Hosting and routing services name no organisation: the model after them does.
    "together": None, "groq": None, "fireworks": None, "openrouter": None, "bedrock": None,
    "hf": None, "vllm": None, "ollama": None, "llama-cpp-python": None, "perplexity": None,
}

MODEL_FAMILIES = [
    (r"^(gpt|o[1-9]|chatgpt|text-davinci|davinci|codex|openai)", "OpenAI"),
    (r"^claude", "Anthropic"),
    (r"^(gemini|gemma|palm|bard|codegemma)", "Google"),
    (r"^(llama|meta-llama|code-?llama)", "Meta"),
    (r"^(qwen|qwq|codeqwen)", "Alibaba"),
    (r"^(mistral|mixtral|codestral|devstral|magistral|ministral|pixtral)", "Mistral"),
    (r"^deepseek", "DeepSeek"),
    (r"^grok", "xAI"),
    (r"^(command|c4ai|aya)", "Cohere"),
    (r"^phi-?\d", "Microsoft"),
    (r"^(nemotron|nvidia)", "NVIDIA"),
    (r"^(yi-|yi\d)", "01.AI"),
    (r"^(kimi|moonshot)", "Moonshot AI"),
    (r"^(glm|chatglm|codegeex)", "Zhipu AI"),
    (r"^(nova|titan)", "Amazon"),
    (r"^granite", "IBM"),
    (r"^(olmo|tulu)", "Ai2"),
    (r"^falcon", "TII"),
]
_MODEL_PATTERNS = [(re.compile(p), org) for p, org in MODEL_FAMILIES]


class Families:
    """Model name -> developer organisation: the built-in table, then the host's own entries
    (`--family MODEL=ORG`, exact model names, which win)."""

    def __init__(self, overrides: dict[str, str] | None = None):
        self.overrides = dict(overrides or {})
        self.unknown: Counter[str] = Counter()

    def of(self, model: str) -> str | None:
        """The organisation that trained `model`, or None (and the model is remembered)."""
        if model in self.overrides:
            return self.overrides[model]
        family = family_of(model)
        if family is None:
            self.unknown[model] += 1
        return family

    def check(self, problems: Problems) -> None:
        """One problem listing every model whose family is not known, with the fix."""
        if self.unknown:
            names = ", ".join(sorted(self.unknown))
            problems.add("families", f"no known family for {names}; say which organisation "
                         "trained each with --family MODEL=ORG")


def family_of(model: str) -> str | None:
    name = model.strip()
    parts = [p for p in name.split("/") if p]
    while len(parts) > 1:
        provider = parts[0].lower()
        match = next((v for k, v in PROVIDER_FAMILIES.items() if k.lower() == provider), "")
        if match:
            return match
        if match is None:  # a host or router: look at what follows
            parts = parts[1:]
            continue
        break  # an unknown prefix: maybe an organisation's own repo name; try the model itself
    last = parts[-1].lower() if parts else ""
    for pattern, org in _MODEL_PATTERNS:
        if pattern.search(last):
            return org
    return None


def parse_family_overrides(entries: list[str], problems: Problems) -> dict[str, str]:
    """`--family MODEL=ORG` entries as a dict; a malformed entry is a problem."""
    out = {}
    for entry in entries:
        model, sep, org = entry.partition("=")
        if not sep or not model.strip() or not org.strip():
            problems.add("--family", f'"{entry}" is not MODEL=ORG')
            continue
        out[model.strip()] = org.strip()
    return out
