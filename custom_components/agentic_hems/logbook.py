"""Logbook: each ``agentic_hems_gate_decision`` event in words."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from homeassistant.components.logbook.const import LOGBOOK_ENTRY_ENTITY_ID, LOGBOOK_ENTRY_MESSAGE, LOGBOOK_ENTRY_NAME
from homeassistant.core import Event, HomeAssistant, callback

from .const import DOMAIN, EVENT_GATE_DECISION
from .gates.models import SOURCE_GRID, SOURCE_ORCHESTRATOR, SOURCE_SCHEDULER
from .orchestrator.texts import GATES_EN

# Who asked, in words; another source (an automation's or outside agent's own name) is shown as it is.
SOURCES = {
    SOURCE_ORCHESTRATOR: "the assistant",
    SOURCE_SCHEDULER: "the scheduler",
    SOURCE_GRID: "the grid plan",
    "mcp": "an MCP assistant",  # assistant.llm_base.SOURCE_NO_REQUEST: an assistant outside HA
}

MESSAGES = {
    "blocked": "was blocked by the {failed_gate} check for {source_agent}",
    "dry_run": "passed every gate for {source_agent} (dry run, nothing executed)",
    "executed": "was switched by {source_agent} through the gates",
    "pending_confirmation": "waits for an administrator to confirm {source_agent}'s command",
    "confirmed": "had {source_agent}'s command confirmed",
    "rejected": "had {source_agent}'s command rejected",
    "failed": "did not reach the expected state after {source_agent}'s command",
    "cancelled": "had {source_agent}'s command cancelled on confirmation",
    "expired": "had {source_agent}'s command expire unconfirmed",
}


def describe(data: dict[str, Any]) -> str:
    """One sentence for a decision event's data."""
    template = MESSAGES.get(str(data.get("outcome")), "got gate decision {outcome} for {source_agent}")
    values = {key: str(data.get(key) or "unknown") for key in ("failed_gate", "source_agent", "outcome")}
    values["failed_gate"] = GATES_EN.get(values["failed_gate"], values["failed_gate"])
    values["source_agent"] = SOURCES.get(values["source_agent"], values["source_agent"])
    return template.format(**values)


@callback
def async_describe_events(
    hass: HomeAssistant, async_describe_event: Callable[[str, str, Callable[[Event], dict[str, str]]], None]
) -> None:
    """Describe ``agentic_hems_gate_decision`` events."""

    @callback
    def _describe(event: Event) -> dict[str, str]:
        entry = {LOGBOOK_ENTRY_NAME: "Agentic HEMS", LOGBOOK_ENTRY_MESSAGE: describe(dict(event.data))}
        if entity_id := event.data.get("entity_id"):
            entry[LOGBOOK_ENTRY_ENTITY_ID] = entity_id
        return entry

    async_describe_event(DOMAIN, EVENT_GATE_DECISION, _describe)
