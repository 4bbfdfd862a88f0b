"""Gate 1, InputGuard: screen raw model output for known bad patterns.

The gate applies :func:`..security.patterns.screen`, the one pattern library the security layer's ``assess`` also
uses (with its length caps), to the raw input and every string (keys and values, nested) of the candidate. First
the size caps of :mod:`..bounds` apply to both together (``too_large``): an oversized input is blocked before any
scanning, so no input can stall the event loop. Flags are the library's categories.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..bounds import TooLarge, check_size
from ..security.patterns import screen
from .models import GateContext, GateResult

__all__ = ["NAME", "evaluate", "screen"]

NAME = "input_guard"
EXCERPT_CHARS = 200


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
    """Block an input over the size caps (flag ``too_large``) or with a flagged string.

    Pass when neither ``ctx.raw_input`` nor any string in ``ctx.raw_candidate`` raises a flag.

    Evidence: ``flags`` (sorted union), ``fields`` (path -> flags for each flagged field) and ``excerpt`` (the first
    ``EXCERPT_CHARS`` characters of the first flagged field).
    """
    try:
        check_size({"raw_input": ctx.raw_input, "candidate": ctx.raw_candidate})
    except TooLarge as err:
        where = ".".join(map(str, err.path))
        return GateResult(
            NAME,
            False,
            f"blocked by input guard: {err.msg} at {where}",
            {"flags": ["too_large"], "limit": err.limit, "maximum": err.maximum, "path": where},
        )
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
