"""Reading one model reply into one action (``ACTION: TYPE | k=v | k=v`` or JSON).

Accepted: the text form in any case and spacing, with ``k=v`` (or ``k: v``) or JSON arguments; a JSON object
``{"action": ..., "args": {...}}`` or ``{"name": ..., "arguments": {...}}`` in the content (tool calls written as
text); native OpenAI ``tool_calls``; code fences and ``<think>`` blocks around any of them.

Refused, with the reason going back to the model as the Observation:
- a reply longer than ``MAX_REPLY_CHARS`` (text, tool call names and arguments together): refused before any
  parsing, so no reply can stall the event loop (:mod:`..bounds`);
- arguments over the input caps of :func:`..bounds.check_size` (items, nesting depth, characters): a reply within
  ``MAX_REPLY_CHARS`` can still nest thousands of levels deep, which nothing after the parser (traces, stored runs)
  could record;
- a truncated reply (``finish_reason == "length"``): nothing in it is trusted;
- a reply with no action, or malformed JSON arguments (never repaired);
- more than one action: the first is taken and the others are reported in ``ignored``, never executed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
import json
import re
from typing import Any

from ..bounds import MAX_REPLY_CHARS, TooLarge, check_size
from .actions import Action

__all__ = [
    "MAX_REPLY_CHARS",
    "ParseError",
    "Parsed",
    "Reply",
    "ToolCall",
    "bounded_reply",
    "json_objects",
    "parse",
    "reply_chars",
]


@dataclass(frozen=True)
class ToolCall:
    """A native tool call: the function ``name``, its ``arguments`` (a JSON text, as the API sends it) and ``id``."""

    name: str
    arguments: str = "{}"
    id: str = ""


@dataclass(frozen=True)
class Reply:
    """One model reply: ``content`` text, native ``tool_calls`` and the API's ``finish_reason``."""

    content: str | None
    tool_calls: Sequence[ToolCall] = ()
    finish_reason: str | None = "stop"


@dataclass(frozen=True)
class Parsed:
    """The action to run (or None with ``error``), the model's ``thought``, and ``ignored`` extra actions."""

    action: Action | None
    thought: str = ""
    error: str | None = None
    ignored: list[str] = field(default_factory=list)


_THINK = re.compile(r"<think(?:ing)?>.*?(?:</think(?:ing)?>|\Z)", re.IGNORECASE | re.DOTALL)
_FENCE = re.compile(r"^\s*```[\w-]*\s*$", re.MULTILINE)
_ACTION_LINE = re.compile(
    r"^[ \t*_>#`-]*action[ \t]*[:=][ \t]*\**[ \t]*([a-z][a-z_-]{1,40})\**[ \t]*(.*)$", re.IGNORECASE | re.MULTILINE
)
_THOUGHT = re.compile(r"^[ \t*_>#-]*thought[ \t]*[:=][ \t]*(.*)$", re.IGNORECASE | re.MULTILINE)


def reply_chars(reply: Reply, limit: int = MAX_REPLY_CHARS) -> int:
    """Return the characters of ``reply`` (text, tool call names and arguments), counted until they pass ``limit``."""
    total = len(reply.content or "")
    for call in reply.tool_calls:
        if total > limit:
            break
        total += len(call.name) + len(call.arguments) + len(call.id)
    return total


def bounded_reply(reply: Reply) -> Reply:
    """Return ``reply``, or a placeholder without tool calls when it is longer than ``MAX_REPLY_CHARS``.

    The placeholder is what the conversation keeps and sends back to the model instead of the oversized text.
    """
    if reply_chars(reply) <= MAX_REPLY_CHARS:
        return reply
    return Reply(f"(a reply of more than {MAX_REPLY_CHARS} characters, omitted)", (), reply.finish_reason)


class ParseError(ValueError):
    """The reply holds no usable action; the message says why (for the Observation)."""


def _type(name: str) -> str:
    return re.sub(r"[\s-]+", "_", name.strip()).upper()


def _scalar(text: str) -> Any:
    value = text.strip().strip("\"'`")
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    return value


def _args_text(rest: str) -> dict[str, Any]:
    """``| k=v | k=v`` or a JSON object after the action type."""
    rest = rest.strip().lstrip(":").strip()
    if rest.startswith("{"):
        try:
            loaded = json.loads(rest)
        except json.JSONDecodeError as err:
            raise ParseError(f"arguments are not valid JSON ({err.msg} at {err.pos})") from None
        if not isinstance(loaded, dict):
            raise ParseError("arguments must be a JSON object")
        return loaded
    args: dict[str, Any] = {}
    for part in rest.split("|"):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep:
            key, sep, value = part.partition(":")
        if not sep or not key.strip():
            raise ParseError(f"argument {part.strip()!r} is not key=value")
        args[key.strip().lower()] = _scalar(value)
    return args


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object in ``text`` (prose and code fences around them are skipped)."""
    found: list[dict[str, Any]] = []
    decoder = json.JSONDecoder()
    index = text.find("{")
    while index != -1:
        try:
            value, end = decoder.raw_decode(text, index)
        except json.JSONDecodeError:
            index = text.find("{", index + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        index = text.find("{", end)
    return found


def _from_json(obj: dict[str, Any]) -> Action:
    name = obj.get("action", obj.get("name"))
    if not isinstance(name, str):
        raise ParseError("the action name must be a string")
    raw = obj.get("args", obj.get("arguments", obj.get("parameters")))
    if raw is None:
        raw = {k: v for k, v in obj.items() if k not in ("action", "name", "thought")}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError as err:
            raise ParseError(f"arguments are not valid JSON ({err.msg})") from None
    if not isinstance(raw, dict):
        raise ParseError("arguments must be an object")
    return Action(_type(name), raw)


def parse(reply: Reply) -> Parsed:
    """Return the one action in ``reply`` (see the module docstring); never raises."""
    try:
        parsed = _parse(reply)
        if parsed.action is not None:
            check_size(dict(parsed.action.args))
    except ParseError as err:
        return Parsed(None, error=str(err))
    except TooLarge as err:
        return Parsed(None, error=f"the action's arguments are too large ({err.msg}); send a short action")
    return parsed


def _parse(reply: Reply) -> Parsed:
    if reply_chars(reply) > MAX_REPLY_CHARS:  # first: nothing below scans an oversized reply
        raise ParseError(f"the reply is longer than {MAX_REPLY_CHARS} characters; answer with one short action")
    if reply.finish_reason == "length":
        raise ParseError("the reply was cut off (finish_reason=length); send a shorter, complete action")
    if reply.tool_calls:
        call, *rest = reply.tool_calls
        try:
            args = json.loads(call.arguments) if call.arguments.strip() else {}
        except json.JSONDecodeError as err:
            raise ParseError(f"tool call arguments are not valid JSON ({err.msg})") from None
        if not isinstance(args, dict):
            raise ParseError("tool call arguments must be a JSON object")
        thought = (reply.content or "").strip()[:500]
        return Parsed(Action(_type(call.name), args), thought, ignored=[_type(c.name) for c in rest])
    text = reply.content or ""
    text = _FENCE.sub("", _THINK.sub("", text))
    if not text.strip():
        raise ParseError("empty reply: answer with one action, e.g. ACTION: GET_PRICES")
    thought_match = _THOUGHT.search(text)
    lines = list(_ACTION_LINE.finditer(text))
    if lines:
        first = lines[0]
        thought = thought_match.group(1).strip() if thought_match else text[: first.start()].strip()
        action = Action(_type(first.group(1)), _args_text(first.group(2)))
        return Parsed(action, thought[:500], ignored=[_type(m.group(1)) for m in lines[1:]])
    objects = [o for o in json_objects(text) if "action" in o or "name" in o]
    if objects:
        action = _from_json(objects[0])
        ignored = [str(o.get("action", o.get("name"))).upper() for o in objects[1:]]
        thought = thought_match.group(1).strip() if thought_match else str(objects[0].get("thought", ""))
        return Parsed(action, thought[:500], ignored=ignored)
    raise ParseError("no action found: end the reply with one line ACTION: TYPE | key=value | ...")
