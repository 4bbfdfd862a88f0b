"""Time entity per appliance: "ready by", the deadline of its daily window."""

from __future__ import annotations

from datetime import time

from homeassistant.components.time import TimeEntity, TimeEntityDescription
from homeassistant.const import EntityCategory
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .const import DOMAIN
from .entity import ApplianceEntity
from .runtime import AgenticHemsConfigEntry
from .scheduling.appliance import window_length

PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant, entry: AgenticHemsConfigEntry, async_add_entities: AddConfigEntryEntitiesCallback
) -> None:
    """Add each appliance's "ready by" time."""
    for appliance in entry.runtime_data.planner.appliances.values():
        async_add_entities([ReadyByTime(entry, appliance, READY_BY)], config_subentry_id=appliance.appliance_id)


READY_BY = TimeEntityDescription(key="ready_by", translation_key="ready_by", entity_category=EntityCategory.CONFIG)


class ReadyByTime(ApplianceEntity, TimeEntity):
    """The local time by which the appliance must be done (at or before the earliest start: the next day)."""

    @property
    def native_value(self) -> time:
        """The deadline in force."""
        return self.planner.deadline_for(self.appliance.appliance_id)

    async def async_set_value(self, value: time) -> None:
        """Change the deadline and replan; a window too short for the run is refused."""
        if self.appliance.run_time > window_length(self.appliance.earliest_start, value):
            raise ServiceValidationError(
                translation_domain=DOMAIN,
                translation_key="window_too_short",
                translation_placeholders={"appliance": self.appliance.name, "time": value.isoformat("minutes")},
            )
        await self.planner.async_set_ready_by(self.appliance.appliance_id, value)
