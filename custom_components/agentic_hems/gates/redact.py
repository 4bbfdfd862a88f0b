"""Redaction of trace records before storage (issue 3, "Traces and services").

- Text and containers under secret-looking keys (token, password, secret, api_key, authorization, credential,
  cookie, ...) become ``REDACTED``; numbers stay (a token count is not a token).
- Secret-looking text anywhere (bearer tokens, JWTs, ``sk-``/``ghp_`` style API keys, long hex or base64 runs) is
  replaced inside strings, so a token pasted into ``raw_input`` is not stored.
- Strings longer than ``MAX_STRING`` characters and lists longer than ``MAX_ITEMS`` are cut, with a marker saying how
  much was dropped; nesting deeper than ``MAX_DEPTH`` is summarized.
"""

from __future__ import annotations

import re
from typing import Any

REDACTED = "**REDACTED**"
MAX_STRING = 2000
MAX_ITEMS = 100
MAX_DEPTH = 12
SECRET_KEY = re.compile(
    r"(?i)(pass(word|wd)?|secret|token|api[_-]?key|apikey|auth(orization)?|credential|cookie|session|private[_-]?key)"
)
SECRET_TEXT = re.compile(
    r"(?i)\bbearer\s+[a-z0-9._~+/=-]{8,}"  # Authorization: Bearer ...
    r"|\beyJ[a-zA-Z0-9_-]{8,}\.[a-zA-Z0-9_-]{8,}\.[a-zA-Z0-9_-]*"  # JWT (HA long-lived tokens)
    r"|\b(?:sk|pk|rk|ghp|gho|ghs|xox[abp]|AKIA)[-_]?[A-Za-z0-9_-]{16,}"  # API keys (OpenAI, GitHub, Slack, AWS)
    r"|\b[0-9a-f]{40,}\b"  # long hex secrets (but not 64-hex idempotency keys, see KEEP_KEYS)
    r"|\b[A-Za-z0-9+/]{48,}={0,2}"  # long base64 runs
)
# Keys whose values are our own digests or ids, never secrets.
KEEP_KEYS = frozenset({"idempotency_key", "trace_id", "user_id", "requested_by", "confirmed_by", "config_entry_id"})


def redact_text(text: str) -> str:
    """``text`` with secret-looking runs replaced and cut to ``MAX_STRING`` characters."""
    text = SECRET_TEXT.sub(REDACTED, text)
    if len(text) > MAX_STRING:
        return f"{text[:MAX_STRING]}... [{len(text) - MAX_STRING} characters cut]"
    return text


def redact(value: Any, _depth: int = 0) -> Any:
    """A redacted copy of a JSON-safe ``value`` (dicts, lists, strings, numbers, None)."""
    if _depth > MAX_DEPTH:
        return "[nested too deep]"
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            name = str(key)
            if name in KEEP_KEYS:
                out[name] = item if not isinstance(item, str) else item[:MAX_STRING]
            elif SECRET_KEY.search(name) and isinstance(item, (str, dict, list)) and item:  # counts stay
                out[name] = REDACTED
            else:
                out[name] = redact(item, _depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        items = [redact(item, _depth + 1) for item in value[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            items.append(f"[{len(value) - MAX_ITEMS} items cut]")
        return items
    if isinstance(value, str):
        return redact_text(value)
    return value
