"""Gate 1, InputGuard: screen raw model output for known bad patterns (seed 001 section 4.1).

:func:`screen` applies one pattern library to text of any length (no length cap: the security layer's
``assess()`` adds the caps and calls :func:`screen`, so both use this library). Patterns are linear-time regexes (no
unbounded lazy spans: a delimiter alone flags) over the NFKC-normalized, case-folded text with Latin look-alikes
folded, in three variants (as is, whitespace collapsed, spaced letters joined); invisible and bidirectional control
characters are checked on the raw text. The gate screens the raw input and every string (keys and values, nested) of the candidate.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
import re
import unicodedata
from typing import Any

from .models import GateContext, GateResult

NAME = "input_guard"
EXCERPT_CHARS = 200

# flag -> pattern over normalized (NFKC, casefolded) text.
PATTERNS: dict[str, re.Pattern[str]] = {
    # prompt injection
    "override_instructions": re.compile(
        r"\b(ignore|disregard|forget|override|bypass)\b[^.]{0,40}?\b(previous|prior|above|earlier|all|any|your|the)\b"
        r"[^.]{0,40}?\b(instructions?|rules?|prompts?|polic(y|ies)|guardrails?|gates?|restrictions?)\b"
        r"|\b(forget|ignore|disregard)\b (everything|all|what)\b[^.]{0,20}?\b(above|before|previous|said|told)\b"
        r"|\bnew (instructions?|rules?|task)\s*:"
        r"|\b(ignorier\w*|vergiss\w*|missachte\w*)\b[^.]{0,40}?\b(vorherigen?|obigen?|bisherigen?|alle[nr]?)\b"
        r"[^.]{0,40}?\b(anweisung\w*|regeln?|vorgaben?|richtlinien?)\b"
    ),
    "role_hijack": re.compile(
        r"\byou are now\b|\bact as (an? )?(admin|root|system|developer)\b|\bdeveloper mode\b|\bjailbreak\b|\bdo anything now\b"
    ),
    "system_prompt_probe": re.compile(r"\b(system|hidden|initial) prompt\b|\breveal (your|the) (instructions|prompt)\b"),
    "role_marker": re.compile(r"<\|?(im_start|im_end|system|assistant|endoftext)\|?>|\[/?inst\]|^\s*#{2,}\s*(system|assistant)\b|^\s*(system|assistant)\s*:", re.MULTILINE),
    "gate_bypass": re.compile(
        r"\b(skip|disable|turn off|bypass|deactivate|circumvent)\b[^.]{0,30}?\b(confirmations?|polic(y|ies)|audit"
        r"|gates?\b(?! (light|lamp|opener|door|sensor|lock|camera|motor|bell))"
        r"|(safety|security) (checks?|rules?|layers?|measures|protocols?|filters?|guard\w*|gates?|polic(y|ies)))"
    ),
    # command smuggling
    "shell_injection": re.compile(r"(;|&&|\|\|)\s*(rm|curl|wget|sh|bash|nc|python3?|chmod|sudo)\b|\$\(|\$\{|`[^`]{1,200}`|\brm\s+-rf\b"),
    "network_fetch": re.compile(r"\b(curl|wget)\s+\S+|\bhttps?://"),
    "path_traversal": re.compile(r"\.\./|\.\.\\"),
    "code_execution": re.compile(r"\b(__import__|eval|exec|os\.system|subprocess)\s*\(|\bimport\s+os\b"),
    "template_injection": re.compile(r"\{\{|\{%|\{#|\}\}|%\}"),  # any Jinja delimiter (HA templates)
    "sql_injection": re.compile(r"'\s*(;|or\s+'?1'?\s*=\s*'?1)|\b(drop|truncate)\s+table\b|\bunion\s+select\b"),
    "markup_injection": re.compile(r"<\s*(script|iframe|object|embed)\b|\bjavascript:|\bon(error|load)\s*="),
    "service_smuggling": re.compile(
        r"\b(shell_command|python_script|rest_command|pyscript|hassio|homeassistant\.(stop|restart|reload\w*))\b"
        r"|\bservice\s*:|\baction\s*:\s*\w+\.\w+|\bentity_id\s*:"
    ),
    "encoded_payload": re.compile(r"(\\x[0-9a-f]{2}){4,}|(%[0-9a-f]{2}){4,}|(\\u[0-9a-f]{4}){3,}"),
}
# base64-looking runs: 32+ characters of the alphabet with at least one digit, "+" or "/" (a plain long word is not).
_BASE64_RUN = re.compile(r"[a-z0-9+/]{32,}={0,2}")
_BASE64_MARK = re.compile(r"[0-9+/]")
# Latin look-alikes (Cyrillic, Greek) folded to Latin before matching: "ignоre" with a Cyrillic o is "ignore".
_CONFUSABLES = str.maketrans(
    "аеорсухіјѕԁɡһкмнтвοαειкνρτυχ", "aeopcyxijsdghkmhtboaeikvptux"
)
_WHITESPACE = re.compile(r"\s+")
_SPACED_LETTERS = re.compile(r"\b(?:\w ){3,}\w\b")  # "i g n o r e" -> "ignore"
# Invisible and bidirectional controls (zero-width, bidi embeddings/isolates, BOM, tag characters) on the raw text.
_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def normalize(text: str) -> str:
    """NFKC-normalized, case-folded ``text`` with Latin look-alikes folded to Latin."""
    return unicodedata.normalize("NFKC", text).casefold().translate(_CONFUSABLES)


def variants(folded: str) -> tuple[str, ...]:
    """What the patterns see: the folded text, with whitespace runs (tabs, newlines) as one space, and with spaced
    letters joined ("i g n o r e")."""
    spaced = _WHITESPACE.sub(" ", folded)
    return folded, spaced, _SPACED_LETTERS.sub(lambda m: m.group(0).replace(" ", ""), spaced)


def screen(text: str) -> tuple[str, ...]:
    """The pattern library's flags raised by ``text``, sorted; empty when clean. No length cap."""
    seen = variants(normalize(text))
    flags = {name for name, pattern in PATTERNS.items() if any(pattern.search(v) for v in seen)}
    if any(_BASE64_MARK.search(run.group(0)) for run in _BASE64_RUN.finditer(seen[0])):
        flags.add("encoded_payload")
    if _INVISIBLE.search(text):
        flags.add("invisible_characters")
    if _CONTROL.search(text):
        flags.add("control_characters")
    return tuple(sorted(flags))


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield f"{path}.{key}#key", str(key)
            yield from _strings(item, f"{path}.{key}")
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _strings(item, f"{path}[{index}]")


def evaluate(ctx: GateContext) -> GateResult:
    """Pass when neither ``ctx.raw_input`` nor any string in ``ctx.raw_candidate`` raises a flag.

    Evidence: ``flags`` (sorted union), ``fields`` (path -> flags for each flagged field) and ``excerpt`` (the first
    ``EXCERPT_CHARS`` characters of the first flagged field).
    """
    sources = [("raw_input", ctx.raw_input)] if ctx.raw_input else []
    if ctx.raw_candidate is not None:
        sources.extend(_strings(ctx.raw_candidate, "candidate"))
    flagged: dict[str, list[str]] = {}
    excerpt = ""
    for path, text in sources:
        if found := screen(text):
            flagged[path] = list(found)
            excerpt = excerpt or text[:EXCERPT_CHARS]
    if not flagged:
        return GateResult(NAME, True, "no suspicious patterns", {"flags": [], "screened": len(sources)})
    flags = sorted({f for found in flagged.values() for f in found})
    return GateResult(
        NAME,
        False,
        f"blocked by input guard: {', '.join(flags)}",
        {"flags": flags, "fields": flagged, "excerpt": excerpt, "screened": len(sources)},
    )
