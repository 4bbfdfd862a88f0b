"""Every service action of the integration, registered once (in ``async_setup``) by each feature's package."""

from __future__ import annotations

from homeassistant.core import HomeAssistant, callback

from .assistant.services import async_setup_assistant_services
from .control.services import async_setup_control_services
from .grid_ha.services import async_setup_grid_services
from .planning.services import async_setup_planning_services


@callback
def async_setup_services(hass: HomeAssistant) -> None:
    """Register the plan, device-control, assistant and grid toolkit service actions."""
    async_setup_planning_services(hass)
    async_setup_control_services(hass)
    async_setup_assistant_services(hass)
    async_setup_grid_services(hass)
