"""Size caps on every input, checked before any scanning or parsing, so no input can stall the event loop.

The InputGuard gate and the security layer scan text with a pattern library at 2-8 ms per 1000 characters
on a small machine, so a 4 MB string in a service call or a model reply froze the event loop for seconds.
:func:`check_size` walks a value (strings, mappings, lists, tuples, nested) and stops at the first limit it
exceeds, so its own cost is bounded by the limits, not by the input. Every entry point applies it first: the
service schemas (through the shell's ``bounded``), ``ask`` and Assist, the model's replies (the parser), and the
gates (InputGuard). The limits live here, in one place, with the caps on pending confirmations.

No ``homeassistant`` import: the pure core packages use this module too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .validation import vol

__all__ = [
    "MAX_ASK_CHARS",
    "MAX_DEPTH",
    "MAX_ID_CHARS",
    "MAX_ITEMS",
    "MAX_PENDING_PER_USER",
    "MAX_PLAN_TOTAL_CHARS",
    "MAX_PENDING_TOTAL",
    "MAX_REPLY_CHARS",
    "MAX_TEXT_CHARS",
    "MAX_TOTAL_CHARS",
    "TOOL_CALLS_PER_DAY",
    "TOOL_CALLS_PER_HOUR",
    "TOOL_CALLS_PER_USER_MINUTE",
    "TooLarge",
    "check_size",
]

MAX_TEXT_CHARS: Final = 2_000
"""Characters in any one string of an input (the longest ``raw_input`` of ``evaluate_command``)."""
MAX_TOTAL_CHARS: Final = 4_000
"""Characters of all strings and keys of one input together: word-dense text costs the pattern screening up to
about 7.5 ms per 1000 characters on a busy 2-core machine, so 4000 stay near 30 ms."""
MAX_PLAN_TOTAL_CHARS: Final = 20_000
"""Characters of all strings and keys of one grid toolkit call together: a 24-hour dispatch plan's actions (up to
96 runs of about 130 characters each) sent back to ``simulate_action`` or ``validate_constraints``."""
MAX_ITEMS: Final = 1_000
"""Entries of all mappings and lists of one input together."""
MAX_DEPTH: Final = 8
"""Nesting levels of mappings and lists in one input (the input itself is level 1)."""
MAX_ASK_CHARS: Final = 2_000
"""Characters of one ``ask`` request or Assist sentence (the security layer refuses more than 150 anyway)."""
MAX_REPLY_CHARS: Final = 20_000
"""Characters of one model reply: its text and its tool calls' names and arguments together."""
MAX_ID_CHARS: Final = 64
"""Characters of an identifier (a config entry id, a trace id) in a websocket command."""
MAX_PENDING_PER_USER: Final = 5
"""Pending confirmations one requester (an HA user, or the automations and scheduler together) may have."""
MAX_PENDING_TOTAL: Final = 20
"""Pending confirmations of one site (config entry) together."""
TOOL_CALLS_PER_USER_MINUTE: Final = 30
"""Calls of the site's LLM API tools (any conversation agent or MCP client) one HA user may make per minute."""
TOOL_CALLS_PER_HOUR: Final = 300
"""Calls of the site's LLM API tools one HA user (or all calls without a user together) may make per hour;
administrators have no hour limit (the minute limit bounds them)."""
TOOL_CALLS_PER_DAY: Final = 2_000
"""Calls of the site's LLM API tools one HA user (or all calls without a user together) may make per day;
administrators have no day limit."""


class TooLarge(vol.Invalid):  # type: ignore[misc, unused-ignore]
    """An input exceeds a size limit.

    ``limit`` names it (``chars``, ``total_chars``, ``items``, ``depth``) and ``maximum`` is its value. ``path`` is
    where the walk stopped.
    """

    def __init__(self, limit: str, maximum: int, path: list[Any]) -> None:
        """Name the exceeded ``limit``, its ``maximum`` and the ``path`` where the walk stopped."""
        super().__init__(f"input too large: more than {maximum} {limit.replace('_', ' ')}", path)
        self.limit = limit
        self.maximum = maximum


def check_size(
    value: Any,
    *,
    max_chars: int = MAX_TEXT_CHARS,
    max_total_chars: int = MAX_TOTAL_CHARS,
    max_items: int = MAX_ITEMS,
    max_depth: int = MAX_DEPTH,
) -> None:
    """Raise :class:`TooLarge` when ``value`` exceeds a limit; otherwise return.

    Strings (and bytes) count their length against ``max_chars`` (each) and ``max_total_chars`` (all, mapping keys
    included); mappings, lists and tuples count their entries against ``max_items`` (all together) and their
    nesting against ``max_depth``. Other values (numbers, booleans, None, dates) count as nothing. The walk stops at
    the first limit exceeded, so it visits at most ``max_items`` entries whatever the input's size.
    """
    total_chars = 0
    items = 0
    stack: list[tuple[Any, int, list[Any]]] = [(value, 1, [])]
    while stack:
        item, depth, path = stack.pop()
        if isinstance(item, str | bytes | bytearray):
            if len(item) > max_chars:
                raise TooLarge("chars", max_chars, path)
            total_chars += len(item)
            if total_chars > max_total_chars:
                raise TooLarge("total_chars", max_total_chars, path)
            continue
        if not isinstance(item, Mapping | list | tuple):
            continue
        if depth > max_depth:
            raise TooLarge("depth", max_depth, path)
        items += len(item)
        if items > max_items:
            raise TooLarge("items", max_items, path)
        if isinstance(item, Mapping):
            for key, child in item.items():
                stack.append((key, depth, [*path, "#key"]))
                stack.append((child, depth + 1, [*path, key]))
        else:
            stack.extend((child, depth + 1, [*path, index]) for index, child in enumerate(item))
