"""Assist: a conversation agent that answers with the orchestrator.

Pick "Agentic HEMS" as the conversation agent of an Assist pipeline. Each sentence goes through ``ask`` as the user
who spoke: the security layer, the rate limits, and the loop. The spoken answer is the run's summary, or the reason
a request was refused.
"""

from __future__ import annotations

from typing import Literal

from homeassistant.components.conversation import (
    ConversationEntity,
    ConversationEntityFeature,
    ConversationInput,
    ConversationResult,
)
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import intent
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .assistant.assistant import async_exception_text
from .const import DOMAIN
from .entity import AgenticHemsEntity, AgenticHemsEntityDescription
from .runtime import AgenticHemsConfigEntry

PARALLEL_UPDATES = 0

AGENT = AgenticHemsEntityDescription(key="assistant", translation_key="assistant")


async def async_setup_entry(
    hass: HomeAssistant, entry: AgenticHemsConfigEntry, async_add_entities: AddConfigEntryEntitiesCallback
) -> None:
    """Add the entry's conversation agent."""
    async_add_entities([AgenticHemsConversation(entry, AGENT)])


class AgenticHemsConversation(AgenticHemsEntity, ConversationEntity):
    """Answers Assist requests about home energy through the orchestrator.

    It controls devices (through the gates), so it says so: without ``CONTROL`` HA's Assist dialog warns "This
    assistant cannot control your home" for a pipeline that does not prefer local handling.
    """

    _attr_name = None
    _attr_supported_features = ConversationEntityFeature.CONTROL

    @property
    def supported_languages(self) -> list[str] | Literal["*"]:
        """Return English and German.

        The offline planner and intent binding read both; answers and refusals come in the speaker's language.
        """
        return ["en", "de"]

    async def async_process(self, user_input: ConversationInput) -> ConversationResult:
        """Run the request and speak the summary."""
        response = intent.IntentResponse(language=user_input.language)
        try:
            result = await self.runtime.assistant.async_ask(user_input.text, user_input.context, user_input.language)
        except HomeAssistantError as err:
            message = await self._message(err, user_input.language)
            response.async_set_error(intent.IntentResponseErrorCode.UNKNOWN, message)
        else:
            if not result["actions"] or not result["success"]:  # nothing was planned: an answer, not an action
                response.response_type = intent.IntentResponseType.QUERY_ANSWER
            response.async_set_speech(str(result["summary"]))
        return ConversationResult(response=response, conversation_id=user_input.conversation_id)

    async def _message(self, err: HomeAssistantError, language: str) -> str:
        """Return the error in the speaker's language (the integration's exception strings), else its English text."""
        if err.translation_domain != DOMAIN or not err.translation_key:
            return str(err)
        text = await async_exception_text(self.hass, language, err.translation_key, err.translation_placeholders)
        return str(err) if text is None else text
