"""Redaction of trace records before storage.

- Text and containers under secret-looking keys (token, password, secret, api_key, authorization, credential,
  cookie, ...) become ``REDACTED``; numbers stay (a token count is not a token).
- Secret-looking text anywhere, keys included (bearer tokens, JWTs, ``sk-``/``ghp_`` style API keys, long hex or
  base64 runs, ``password=...``), is replaced, so a token pasted into ``raw_input`` or a candidate is not stored.
- Strings longer than ``MAX_STRING`` characters and lists longer than ``MAX_ITEMS`` are cut, with a marker saying how
  much was dropped; nesting deeper than ``MAX_DEPTH`` is summarized.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

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
SECRET_ASSIGNMENT = re.compile(r"(?i)\b(pass(?:word|wd)?|pwd|secret|token|api[_-]?key|apikey)(\s*[:=]\s*)\S+")
# Keys whose values are our own digests or ids, kept when they have an id's shape (uuid4 hex, sha256 hex, ULID);
# anything else under these keys (a caller can send them too) is redacted like any other text.
KEEP_KEYS = frozenset({"idempotency_key", "trace_id", "user_id", "requested_by", "confirmed_by", "config_entry_id"})
ID_SHAPE = re.compile(r"[0-9a-f]{32}|[0-9a-f]{64}|[0-9A-HJKMNP-TV-Z]{26}")


def redact_text(text: str) -> str:
    """Return ``text`` with secrets replaced, cut to ``MAX_STRING`` characters.

    Secret-looking runs and ``password=...`` style values are replaced.
    """
    text = SECRET_ASSIGNMENT.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", SECRET_TEXT.sub(REDACTED, text))
    if len(text) > MAX_STRING:
        return f"{text[:MAX_STRING]}... [{len(text) - MAX_STRING} characters cut]"
    return text


def redact(value: Any, _depth: int = 0) -> Any:
    """Return a redacted copy of a JSON-safe ``value`` (dicts, lists, strings, numbers, None)."""
    if _depth > MAX_DEPTH:
        return "[nested too deep]"
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            name = str(key)
            if name in KEEP_KEYS and (item is None or (isinstance(item, str) and ID_SHAPE.fullmatch(item))):
                out[name] = item
                continue
            safe = redact_text(name)
            if safe != name:  # a secret used as a key
                safe = f"{safe}#{len(out)}"
            if SECRET_KEY.search(name) and isinstance(item, (str, dict, list)) and item:  # counts stay
                out[safe] = REDACTED
            else:
                out[safe] = redact(item, _depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        items = [redact(item, _depth + 1) for item in value[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            items.append(f"[{len(value) - MAX_ITEMS} items cut]")
        return items
    if isinstance(value, str):
        return redact_text(value)
    return value


def redact_url(url: str) -> str:
    """``url`` without its credentials (``user:password@``) and with every query value redacted."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return REDACTED
    netloc = (f"[{host}]" if ":" in host else host) + (f":{port}" if port is not None else "")
    if parts.username is not None or parts.password is not None:
        netloc = f"{REDACTED}@{netloc}"
    query = urlencode([(key, REDACTED) for key, _ in parse_qsl(parts.query, keep_blank_values=True)])
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))
