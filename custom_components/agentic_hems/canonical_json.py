"""One JSON form for every stored record and every hash: :func:`json_safe`, :func:`canonical_json`, :func:`digest`.

Traces, audit records, tool results and their provenance, idempotency keys and plan signatures are all hashed from
the same canonical text, so a value hashes alike wherever it is hashed.

No ``homeassistant`` import: the pure core packages use this module too.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, time
from enum import StrEnum
import hashlib
import json
from typing import Any


def json_safe(value: Any) -> Any:
    """Return ``value`` as plain JSON data.

    Dates and times become ISO 8601, string enums their values, numpy scalars and arrays Python numbers and lists,
    tuples as lists, sets as lists sorted by their text, mapping keys as text, objects with ``as_dict()`` as that
    mapping, anything else as its ``repr``. Nested data is walked.
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, StrEnum):
        return str(value)
    if callable(getattr(value, "tolist", None)):  # numpy scalars and arrays (np.float64 is also a float)
        return json_safe(value.tolist())
    if isinstance(value, (int, float, str)):
        return value
    if isinstance(value, (date, time)):  # datetime is a date
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return [json_safe(v) for v in sorted(value, key=str)]
    if callable(as_dict := getattr(value, "as_dict", None)):
        return json_safe(as_dict())
    return repr(value)


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, UTF-8 kept: one text per value.

    Raises ``TypeError`` for a value that is not JSON data (pass it through :func:`json_safe` first) and ``ValueError``
    for a circular one.
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest(value: Any) -> str:
    """SHA-256 hex of the canonical JSON of ``value``."""
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()
