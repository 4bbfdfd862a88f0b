"""What every tool of the "Agentic HEMS" LLM API shares (:mod:`.llm_api`): the person's request, results, errors.

:class:`EnergyTool` checks a call's arguments against its ``parameters``, runs it as the conversation's person
(``llm_context.context``) with the assistant's :class:`.tools.HassTools`, and returns small JSON data; a failure is
``{"error": key, ..., "message": text}`` with the integration's translated text in the conversation's language
(English or German) where it has one. An acting tool first reads the person's request (:func:`person_request`);
called without one (an MCP client: no conversation), it holds the call for a person's confirmation instead
(:meth:`EnergyTool.async_hold`, :func:`pending_result`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from homeassistant.components.conversation import UserContent
from homeassistant.components.conversation.chat_log import current_chat_log
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
from homeassistant.helpers import llm
from homeassistant.util import dt as dt_util

from ..bounds import MAX_ASK_CHARS
from ..const import DOMAIN
from ..gates.models import Outcome, RequestedAction
from ..orchestrator.texts import language as text_language, rejection
from ..security import assess, clearly_out_of_scope
from ..service_helpers import invalid
from ..validation import describe, vol
from .assistant import async_exception_text, rate_limited
from .tools import HassTools

if TYPE_CHECKING:
    from ..runtime import AgenticHemsConfigEntry

# Version-specific: HA 2026.10 has llm.ToolResult and llm.ToolAnnotations (a tool returning a plain dict is logged
# as deprecated there); HA 2026.4 takes the dict and has no annotations. Drop the fallback when the oldest supported
# HA has both.
_TOOL_RESULT: Any = getattr(llm, "ToolResult", None)
_TOOL_ANNOTATIONS: Any = getattr(llm, "ToolAnnotations", None)
PENDING = str(Outcome.PENDING_CONFIRMATION)
PENDING_MESSAGE = {  # a held call's message, by language; {expires_at} is the local time HH:MM
    "en": (
        "Not done yet: a person must confirm this in Home Assistant (an administrator, in the Agentic HEMS "
        "notification or trace card) by {expires_at}; until then nothing changes. Tell the person; do not call the "
        "tool again."
    ),
    "de": (
        "Noch nicht ausgeführt: Eine Person muss das bis {expires_at} in Home Assistant bestätigen (ein Administrator, "
        "in der Agentic-HEMS-Benachrichtigung oder der Trace-Karte); bis dahin ändert sich nichts. Sag es der Person "
        "und rufe das Werkzeug nicht noch einmal auf."
    ),
}
SOURCE_NO_REQUEST = "mcp"  # the source agent of an acting call without a person's request (an MCP client)


def tool_annotations(*, read_only: bool) -> Any:
    """Return the tool's MCP annotations (a reading tool: read only; none reaches outside HA); None on HA 2026.4."""
    if _TOOL_ANNOTATIONS is None:
        return None
    return _TOOL_ANNOTATIONS(read_only=read_only, destructive=False, idempotent=read_only, open_world=False)


@dataclass(frozen=True)
class PersonRequest:
    """The request intent binding checks: ``text`` (sanitized) and what it asks for (``requested``).

    ``refusal`` is the error acting tools raise instead of running (a request the security layer refused);
    ``absent``: there is no conversation, so no person's request (acting tools hold the call for confirmation).
    """

    text: str
    requested: frozenset[RequestedAction]
    refusal: ServiceValidationError | None = None
    absent: bool = False


def person_request(entry: AgenticHemsConfigEntry, lang: str) -> PersonRequest:
    """Return the conversation's current request: its last user message, read as ``ask`` reads a request.

    ``absent`` without a conversation. Refused (``refusal``): longer than ``MAX_ASK_CHARS``
    (``input_too_large_chars``) or rejected by the security layer (``llm_request_rejected``, the reason in
    ``lang``). A request plainly not about home energy asks for nothing.
    """
    chat_log = current_chat_log.get()
    prompts = [c.content for c in chat_log.content if isinstance(c, UserContent)] if chat_log else []
    if not prompts:
        return PersonRequest("", frozenset(), absent=True)
    text = prompts[-1]
    if len(text) > MAX_ASK_CHARS:  # checked before anything reads it, as ask does
        return PersonRequest("", frozenset(), invalid("input_too_large_chars", maximum=str(MAX_ASK_CHARS), path="text"))
    assessment = assess(text)
    if not assessment.accepted:
        return PersonRequest("", frozenset(), invalid("llm_request_rejected", reason=rejection(assessment, lang)))
    request = assessment.sanitized
    if clearly_out_of_scope(request):
        return PersonRequest(request, frozenset())
    return PersonRequest(request, entry.runtime_data.control.read_request(request))


def pending_result(record: dict[str, Any]) -> dict[str, Any]:
    """Return what a tool says of a held call (``record``, its pending trace).

    That is ``{status, confirmation_id, trace_id, expires_at}`` (local ISO 8601, from the Execution result).
    """
    expires = datetime.fromisoformat(str(record["gate_results"][-1]["evidence"]["expires_at"]))
    return {
        "status": PENDING,
        "confirmation_id": record["trace_id"],
        "trace_id": record["trace_id"],
        "expires_at": dt_util.as_local(expires).isoformat(timespec="minutes"),
    }


def result(data: dict[str, Any], *, error: bool = False) -> Any:
    """Return ``data`` as the tool's result (an ``llm.ToolResult`` where HA has it)."""
    return data if _TOOL_RESULT is None else _TOOL_RESULT(data=data, error=error)


class EnergyTool(llm.Tool):
    """A tool of the entry's API: arguments checked, run as the conversation's person, failures as error data.

    Subclasses set ``name``, ``description``, ``parameters`` and ``acts`` (an acting tool needs the person's
    request, :func:`person_request`) and implement :meth:`async_run`, and an acting tool :meth:`async_hold`.
    """

    integration = DOMAIN
    acts = False

    def __init__(self, entry: AgenticHemsConfigEntry) -> None:
        """Serve the entry ``entry``."""
        self.entry = entry
        self.annotations = tool_annotations(read_only=not self.acts)

    async def async_call(self, hass: HomeAssistant, tool_input: llm.ToolInput, llm_context: llm.LLMContext) -> Any:
        """Check the arguments, then run the tool; an error is ``{"error": ..., "message": ...}`` (an error result)."""
        code = llm_context.language
        lang = text_language(code if code and code != "*" else hass.config.language)
        request = person_request(self.entry, lang) if self.acts else PersonRequest("", frozenset())
        tools = HassTools(
            hass,
            self.entry,
            llm_context.context or Context(),
            request=request.text,
            requested=request.requested,
        )
        try:
            await self._count(hass, tools.context.user_id, lang)
            args = self._arguments(tool_input.tool_args, request.refusal)
            data = await (self.async_hold(tools, args) if request.absent else self.async_run(tools, args))
        except ServiceValidationError as err:
            placeholders = dict(err.translation_placeholders or {})
            data = {**placeholders, "error": err.translation_key or str(err)}  # a placeholder may be named "error"
            return await self._failure(hass, lang, data, placeholders)
        except (HomeAssistantError, ValueError, vol.Invalid) as err:
            data = {"error": str(err) or type(err).__name__}
        if data.get("status") == PENDING:
            when = f"{datetime.fromisoformat(data['expires_at']):%H:%M}"  # local time
            return result(data | {"message": PENDING_MESSAGE[lang].format(expires_at=when)})
        if "error" not in data:
            return result(data)
        return await self._failure(hass, lang, data, {k: str(v) for k, v in data.items() if k != "error"})

    async def _failure(self, hass: HomeAssistant, lang: str, data: dict[str, Any], placeholders: dict[str, str]) -> Any:
        """Return ``data`` (``{"error": key, ...}``) as an error result, with the key's message in ``lang`` if any."""
        message = await async_exception_text(hass, lang, str(data["error"]), placeholders)
        return result(data | ({"message": message} if message else {}), error=True)

    async def _count(self, hass: HomeAssistant, user_id: str | None, lang: str) -> None:
        """Count the call against the caller's own tool limits.

        Each HA user, and the calls without a user together, have their own minute, hour and day windows
        (:mod:`..bounds`); an administrator has the minute window only.

        Raises:
            ServiceValidationError: ``rate_limited`` with the window in ``lang`` and when a call is possible again;
                nothing runs.

        """
        user = await hass.auth.async_get_user(user_id) if user_id else None
        now = dt_util.utcnow()
        limiter = self.entry.runtime_data.assistant.tool_limiter
        if (refusal := limiter.check(user_id, now, exempt=user is not None and user.is_admin)) is not None:
            raise rate_limited(refusal, now, lang)

    def _arguments(self, args: dict[str, Any], refusal: ServiceValidationError | None) -> dict[str, Any]:
        """Return ``args`` checked against ``parameters``; raise ``refusal`` (an acting tool's) after that.

        Raises:
            ServiceValidationError: ``tool_invalid_input`` with the errors, or ``refusal``.

        """
        try:
            checked: dict[str, Any] = self.parameters(dict(args))
        except vol.Invalid as err:
            raise invalid("tool_invalid_input", tool=self.name, error=describe(err)) from None
        if refusal is not None:
            raise refusal
        return checked

    async def async_run(self, tools: HassTools, args: dict[str, Any]) -> dict[str, Any]:
        """Run the tool with checked ``args``; ``{"error": ...}`` or a raised error for a failure."""
        raise NotImplementedError

    async def async_hold(self, tools: HassTools, args: dict[str, Any]) -> dict[str, Any]:
        """Run an acting tool called without a person's request: nothing acts, a person must confirm it.

        Returns :func:`pending_result`, or what the gates decided when they deny; an error as for :meth:`async_run`.
        """
        raise NotImplementedError
