"""Switch per appliance: automatic planning (replans when prices or the deadline change)."""

from __future__ import annotations

from typing import Any

from homeassistant.components.switch import SwitchEntity
from homeassistant.const import EntityCategory
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from . import AgenticHemsConfigEntry
from .entity import ApplianceEntity

PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant, entry: AgenticHemsConfigEntry, async_add_entities: AddConfigEntryEntitiesCallback
) -> None:
    """Add each appliance's switch."""
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
