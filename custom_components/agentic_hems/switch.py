"""Switches: "Allow device control" (the entry's) and, per appliance, automatic planning.

Execution, the eighth gate, runs only while "Allow device control" is on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from homeassistant.components.homeassistant.const import DATA_EXPOSED_ENTITIES
from homeassistant.components.homeassistant.exposed_entities import async_expose_entity
from homeassistant.components.switch import SwitchEntity, SwitchEntityDescription
from homeassistant.const import EntityCategory
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .control.ha_view import ASSISTANT
from .entity import AgenticHemsEntity, AgenticHemsEntityDescription, ApplianceEntity
from .people import async_require_admin
from .runtime import AgenticHemsConfigEntry

PARALLEL_UPDATES = 0


@dataclass(frozen=True, kw_only=True)
class AgenticHemsSwitchEntityDescription(SwitchEntityDescription, AgenticHemsEntityDescription):
    """A switch of the entry's device."""


ALLOW_DEVICE_CONTROL = AgenticHemsSwitchEntityDescription(
    key="allow_device_control",
    translation_key="allow_device_control",
    entity_category=EntityCategory.CONFIG,
    follow_fn=lambda runtime: runtime.control,
)
AUTOMATIC_PLANNING = SwitchEntityDescription(
    key="automatic_planning", translation_key="automatic_planning", entity_category=EntityCategory.CONFIG
)


async def async_setup_entry(
    hass: HomeAssistant, entry: AgenticHemsConfigEntry, async_add_entities: AddConfigEntryEntitiesCallback
) -> None:
    """Add the device-control switch and each appliance's switch."""
    async_add_entities([AllowDeviceControlSwitch(entry, ALLOW_DEVICE_CONTROL)])
    for appliance in entry.runtime_data.planner.appliances.values():
        async_add_entities(
            [AutoPlanningSwitch(entry, appliance, AUTOMATIC_PLANNING)], config_subentry_id=appliance.appliance_id
        )


class AutoPlanningSwitch(ApplianceEntity, SwitchEntity):
    """Automatic planning on or off."""

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


class AllowDeviceControlSwitch(AgenticHemsEntity, SwitchEntity):
    """Allow device control: off (the default), every command that passes the gates ends as a dry run.

    It is a configuration entity and never exposed to Assist, so no voice or model request can turn it on.
    """

    entity_description: AgenticHemsSwitchEntityDescription

    @property
    def is_on(self) -> bool:
        """Device control is allowed."""
        return self.runtime.control.allow_control

    async def async_turn_on(self, **kwargs: Any) -> None:
        """Allow device control: only an administrator may; other users, automations and agents (no user) may not."""
        await async_require_admin(self.hass, self._context or Context(), "admin_required_control")
        await self.runtime.control.async_set_allow_control(True)

    async def async_turn_off(self, **kwargs: Any) -> None:
        """Stop device control; anyone may (pending confirmations are cancelled when confirmed)."""
        await self.runtime.control.async_set_allow_control(False)

    async def async_added_to_hass(self) -> None:
        """Never expose to Assist."""
        await super().async_added_to_hass()
        if DATA_EXPOSED_ENTITIES in self.hass.data:
            async_expose_entity(self.hass, ASSISTANT, self.entity_id, False)
