"""Switches: "Allow device control" (the entry's; Execution, the eighth gate, runs only while it is on) and, per
appliance, automatic planning."""

from __future__ import annotations

from typing import Any

from homeassistant.components.homeassistant.const import DATA_EXPOSED_ENTITIES
from homeassistant.components.homeassistant.exposed_entities import async_expose_entity
from homeassistant.components.switch import SwitchEntity
from homeassistant.const import EntityCategory
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .runtime import AgenticHemsConfigEntry
from .entity import AgenticHemsSiteEntity, ApplianceEntity
from .control.ha_view import ASSISTANT
from .people import async_require_admin

PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant, entry: AgenticHemsConfigEntry, async_add_entities: AddConfigEntryEntitiesCallback
) -> None:
    """Add the device-control switch and each appliance's switch."""
    async_add_entities([AllowDeviceControlSwitch(entry)])
    for appliance in entry.runtime_data.planner.appliances.values():
        async_add_entities(
            [AutoPlanningSwitch(entry, appliance, "automatic_planning")], config_subentry_id=appliance.appliance_id
        )


class AutoPlanningSwitch(ApplianceEntity, SwitchEntity):
    """Automatic planning on or off."""

    _attr_entity_category = EntityCategory.CONFIG

    @property
    def is_on(self) -> bool:
        """Automatic planning is on."""
        return self.state_data.auto

    async def async_turn_on(self, **kwargs: Any) -> None:
        """Plan automatically."""
        await self.planner.async_set_auto(self.appliance.appliance_id, True)

    async def async_turn_off(self, **kwargs: Any) -> None:
        """Stop planning automatically (the current plan stays)."""
        await self.planner.async_set_auto(self.appliance.appliance_id, False)


class AllowDeviceControlSwitch(AgenticHemsSiteEntity, SwitchEntity):
    """Allow device control: off (the default), every command that passes the gates ends as a dry run.

    It is a configuration entity and never exposed to Assist, so no voice or model request can turn it on.
    """

    _attr_entity_category = EntityCategory.CONFIG

    def __init__(self, entry: AgenticHemsConfigEntry) -> None:
        """Create the entry's switch."""
        super().__init__(entry, "allow_device_control")
        self.control = entry.runtime_data.control

    @property
    def is_on(self) -> bool:
        """Device control is allowed."""
        return self.control.allow_control

    async def async_turn_on(self, **kwargs: Any) -> None:
        """Allow device control: only an administrator may; other users, automations and agents (no user) may not."""
        await async_require_admin(self.hass, self._context or Context(), "admin_required_control")
        await self.control.async_set_allow_control(True)

    async def async_turn_off(self, **kwargs: Any) -> None:
        """Stop device control; anyone may (pending confirmations are cancelled when confirmed)."""
        await self.control.async_set_allow_control(False)

    async def async_added_to_hass(self) -> None:
        """Never expose to Assist; follow changes."""
        await super().async_added_to_hass()
        if DATA_EXPOSED_ENTITIES in self.hass.data:
            async_expose_entity(self.hass, ASSISTANT, self.entity_id, False)
        self.async_on_remove(self.control.async_add_listener(self.async_write_ha_state))
