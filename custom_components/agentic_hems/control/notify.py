"""Notifications of what waits for an administrator: a persistent notification, and an actionable mobile one.

Each pending command or plan change gets the persistent notification ``agentic_hems_confirm_<trace_id>`` and, when a
notify service is configured, a mobile notification with Confirm and Reject actions (``ACTION_CONFIRM`` /
``ACTION_REJECT`` followed by the trace id; the control manager handles the taps).
"""

from __future__ import annotations

from typing import Any

from homeassistant.components import persistent_notification
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.util import dt as dt_util

from ..const import DOMAIN, LOGGER
from ..gates.keeper import PendingConfirmation
from ..gates.models import SOURCE_GRID, SOURCE_ORCHESTRATOR, SOURCE_SCHEDULER
from ..gates.words import command_words
from .plan_changes import PendingPlanChange

MOBILE_ACTION_EVENT = "mobile_app_notification_action"
ACTION_CONFIRM = "AGENTIC_HEMS_CONFIRM_"
ACTION_REJECT = "AGENTIC_HEMS_REJECT_"
TITLE = "Agentic HEMS: confirmation needed"
type Pending = PendingConfirmation | PendingPlanChange


def notification_id(trace_id: str) -> str:
    """Return the persistent notification id of a pending confirmation."""
    return f"{DOMAIN}_confirm_{trace_id}"


# Who asked, in words (a source_agent of the gates; another one, an outside agent's own name, is shown as it is).
SOURCES = {
    SOURCE_ORCHESTRATOR: "The assistant",
    SOURCE_SCHEDULER: "The scheduler",
    SOURCE_GRID: "The grid plan",
    "mcp": "An assistant outside Home Assistant (MCP)",  # assistant.llm_base.SOURCE_NO_REQUEST
    "user": "A person",
    "automation": "An automation",
}


def what(pending: Pending, name: str | None = None) -> str:
    """Return the pending item in words: "Open Garage door", "Set Heat pump to 21.5°", "Plan Dishwasher".

    ``name`` is the device's name as users see it (else its entity id).
    """
    if isinstance(pending, PendingPlanChange):
        return command_words(pending.trace["candidate"]["intent"], pending.args.get("appliance"))
    return command_words(pending.candidate.get("intent"), name or pending.entity_id, pending.candidate.get("params"))


def describe(pending: Pending, name: str | None = None) -> str:
    """Return the persistent notification's Markdown text for ``pending`` (``name``: the device's name)."""
    who = SOURCES.get(pending.source_agent, pending.source_agent)
    return (
        f"{who} asks: **{what(pending, name)}**.\n\n"
        f"An administrator can confirm or reject it until {dt_util.as_local(pending.expires_at):%H:%M}: "
        f"action `agentic_hems.confirm` (or `agentic_hems.reject`) with `trace_id: {pending.trace_id}`."
    )


@callback
def notify_pending(hass: HomeAssistant, pending: Pending, notify_service: str | None) -> None:
    """Create the persistent notification; send the mobile one through ``notify_service`` (``notify.x``) if given."""
    entity_id = getattr(pending, "entity_id", None)
    state = hass.states.get(entity_id) if entity_id else None
    name = state.name if state else None
    persistent_notification.async_create(
        hass, describe(pending, name), title=TITLE, notification_id=notification_id(pending.trace_id)
    )
    if not notify_service:
        return
    domain, _, service = notify_service.partition(".")
    data = {
        "title": TITLE,
        "message": f"{SOURCES.get(pending.source_agent, pending.source_agent)}: {what(pending, name)}",
        "data": {
            "tag": pending.trace_id,
            "actions": [
                {"action": f"{ACTION_CONFIRM}{pending.trace_id}", "title": "Confirm"},
                {"action": f"{ACTION_REJECT}{pending.trace_id}", "title": "Reject"},
            ],
        },
    }
    hass.async_create_task(
        _async_mobile(hass, domain, service, data), f"{DOMAIN} notify {pending.trace_id}", eager_start=False
    )


async def _async_mobile(hass: HomeAssistant, domain: str, service: str, data: dict[str, Any]) -> None:
    try:
        await hass.services.async_call(domain, service, data, blocking=True)
    except HomeAssistantError as err:
        LOGGER.warning("Could not send the confirmation request through %s.%s: %s", domain, service, err)
