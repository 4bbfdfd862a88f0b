"""The pattern library: one set of compiled, case-insensitive patterns for user requests and model output.

Six categories of prompt injection (:data:`CORE_CATEGORIES`, the ones the security layer was specified with), plus
command smuggling for the InputGuard gate. :func:`screen` applies every pattern with no length cap and returns the
matched categories; the security layer's ``assess`` adds the length caps, and the InputGuard gate screens model output
with it.

Text is NFKC-normalized, case-folded, with Latin look-alikes (Cyrillic, Greek) folded to Latin, and matched in three
variants: as is, whitespace runs collapsed (tabs, newlines), and spaced letters joined ("i g n o r e"). Between key
terms up to ~20 other characters are allowed (:data:`.pattern_terms.GAP`). Every pattern is linear-time: spans are
bounded, never unbounded lazy. Invisible and bidirectional control characters are checked on the raw text.

Every entry of :data:`PATTERNS` has a provenance in :data:`PATTERN_SOURCES`: the sources of the labelled test corpus
it was written from, so that the corpus can measure the library on sources it was not written from.

The entries are kept by topic: :mod:`.patterns_steering` (instruction override, role manipulation, behaviour
modification), :mod:`.patterns_leak` (system prompt and credentials) and :mod:`.patterns_smuggling` (delimiters,
commands, templates, actions, encoded payloads), over the shared vocabulary of :mod:`.pattern_terms`.
"""

from __future__ import annotations

from collections.abc import Sequence
import re
import unicodedata

from .pattern_terms import (
    BEHAVIOUR_MODIFICATION,
    COMMAND_INJECTION,
    CONTROL_CHARACTERS,
    CORE_CATEGORIES,
    CREDENTIAL_LEAK,
    DELIMITER_INJECTION,
    ENCODED_PAYLOAD,
    INSTRUCTION_OVERRIDE,
    INVISIBLE_CHARACTERS,
    ROLE_MANIPULATION,
    SERVICE_SMUGGLING,
    SYSTEM_PROMPT_LEAK,
    TEMPLATE_INJECTION,
    PatternEntry,
)
from .patterns_leak import CREDENTIAL_PATTERNS, PROMPT_LEAK_PATTERNS
from .patterns_smuggling import DELIMITER_PATTERNS, SMUGGLING_PATTERNS
from .patterns_steering import BEHAVIOUR_PATTERNS, OVERRIDE_PATTERNS, ROLE_PATTERNS

__all__ = [
    "BEHAVIOUR_MODIFICATION",
    "COMMAND_INJECTION",
    "COMPACT_PHRASES",
    "CONTROL",
    "CONTROL_CHARACTERS",
    "CREDENTIAL_LEAK",
    "DELIMITER_INJECTION",
    "ENCODED_PAYLOAD",
    "INSTRUCTION_OVERRIDE",
    "INVISIBLE",
    "INVISIBLE_CHARACTERS",
    "PATTERNS",
    "PATTERN_SOURCES",
    "ROLE_MANIPULATION",
    "CORE_CATEGORIES",
    "SERVICE_SMUGGLING",
    "SYSTEM_PROMPT_LEAK",
    "TEMPLATE_INJECTION",
    "normalize",
    "screen",
    "variants",
]

# (category, pattern, provenance), in the library's order
_PATTERNS: tuple[PatternEntry, ...] = (
    *OVERRIDE_PATTERNS,
    *PROMPT_LEAK_PATTERNS,
    *CREDENTIAL_PATTERNS,
    *ROLE_PATTERNS,
    *DELIMITER_PATTERNS,
    *BEHAVIOUR_PATTERNS,
    *SMUGGLING_PATTERNS,
)
PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (category, re.compile(pattern, re.IGNORECASE | re.MULTILINE)) for category, pattern, _ in _PATTERNS
)
# The provenance of each entry of PATTERNS, in the same order. The checks outside PATTERNS (spaced-out key phrases,
# base64 runs, invisible and control characters) were written without the corpus.
PATTERN_SOURCES: tuple[tuple[str, ...], ...] = tuple(sources for _, _, sources in _PATTERNS)

# base64-looking runs: 32+ characters of the alphabet with at least one digit, "+" or "/" (a plain long word is not).
_BASE64_RUN = re.compile(r"[a-z0-9+/]{32,}={0,2}")
_BASE64_MARK = re.compile(r"[0-9+/]")
# Latin look-alikes (Cyrillic, Greek) folded to Latin before matching: "ignоre" with a Cyrillic o is "ignore".
_CONFUSABLES = str.maketrans("аеорсухіјѕԁɡһкмнтвοαειкνρτυχ", "aeopcyxijsdghkmhtboaeikvptux")
_WHITESPACE = re.compile(r"\s+")
_SPACED_LETTERS = re.compile(r"\b(?:\w ){3,}\w\b")  # "i g n o r e" -> "ignore"
_NON_WORD = re.compile(r"[\W_]+")
# Key phrases looked for in text written letter by letter ("i g n o r e a l l p r e v i o u s ..."), where word
# boundaries are gone: the letters are joined and searched for these.
COMPACT_PHRASES: tuple[tuple[str, str], ...] = (
    ("ignoreallprevious", INSTRUCTION_OVERRIDE),
    ("ignoreprevious", INSTRUCTION_OVERRIDE),
    ("ignoretheprevious", INSTRUCTION_OVERRIDE),
    ("ignoreyourinstructions", INSTRUCTION_OVERRIDE),
    ("previousinstructions", INSTRUCTION_OVERRIDE),
    ("disregardprevious", INSTRUCTION_OVERRIDE),
    ("forgetyourinstructions", INSTRUCTION_OVERRIDE),
    ("systemprompt", SYSTEM_PROMPT_LEAK),
    ("yourinstructions", SYSTEM_PROMPT_LEAK),
    ("apikey", CREDENTIAL_LEAK),
    ("password", CREDENTIAL_LEAK),
    ("youarenow", ROLE_MANIPULATION),
    ("developermode", ROLE_MANIPULATION),
    ("doanythingnow", ROLE_MANIPULATION),
    ("jailbreak", ROLE_MANIPULATION),
)
# Invisible and bidirectional controls (zero-width, bidi embeddings/isolates, BOM, tag characters) on the raw text.
INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]")
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def normalize(text: str) -> str:
    """NFKC-normalized, case-folded ``text`` with Latin look-alikes folded to Latin."""
    return unicodedata.normalize("NFKC", text).casefold().translate(_CONFUSABLES)


def variants(folded: str) -> tuple[str, ...]:
    """Return what the patterns see: the folded text, whitespace runs as one space, and spaced letters joined."""
    spaced = _WHITESPACE.sub(" ", folded)
    return folded, spaced, _SPACED_LETTERS.sub(lambda m: m.group(0).replace(" ", ""), spaced)


def screen(text: str, patterns: Sequence[tuple[str, re.Pattern[str]]] = PATTERNS) -> tuple[str, ...]:
    """Return the categories the pattern library finds in ``text``, sorted; empty when clean. No length cap.

    ``patterns`` replaces :data:`PATTERNS` (a subset, to measure the library without some of its entries).
    """
    seen = variants(normalize(text))
    distinct = tuple(dict.fromkeys(seen))  # a variant equal to another is searched once
    flags = {category for category, pattern in patterns if any(pattern.search(v) for v in distinct)}
    if seen[2] != seen[1]:  # letters were spaced out: look for key phrases in the joined letters
        joined = _NON_WORD.sub("", seen[1])
        flags |= {category for phrase, category in COMPACT_PHRASES if phrase in joined}
    if any(_BASE64_MARK.search(run.group(0)) for run in _BASE64_RUN.finditer(seen[0])):
        flags.add(ENCODED_PAYLOAD)
    if INVISIBLE.search(text):
        flags.add(INVISIBLE_CHARACTERS)
    if CONTROL.search(text):
        flags.add(CONTROL_CHARACTERS)
    return tuple(sorted(flags))
