"""Time entity per appliance: "ready by", the deadline of its daily window or of the plan a person asked for."""

from __future__ import annotations

from datetime import time

from homeassistant.components.time import TimeEntity, TimeEntityDescription
from homeassistant.const import EntityCategory
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.util import dt as dt_util

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
    """The local time by which the appliance must be done (at or before the earliest start: the next day).

    While a plan that a person asked for (``ask`` or the ``schedule`` service) waits or runs, the deadline they gave;
    else the daily deadline in force.
    """

    @property
    def native_value(self) -> time:
        """The requested plan's deadline (local) until that plan ends, else the daily deadline."""
        state = self.state_data
        plan, asked = state.plan, state.window_end
        if state.pinned and asked is not None and plan is not None and plan.end and plan.end > dt_util.utcnow():
            return dt_util.as_local(asked).time().replace(second=0, microsecond=0)
        return self.planner.deadline_for(self.appliance.appliance_id)

    async def async_set_value(self, value: time) -> None:
        """Change the daily deadline and replan, a requested plan too; a window too short for the run is refused."""
        if self.appliance.run_time > window_length(self.appliance.earliest_start, value):
            raise ServiceValidationError(
                translation_domain=DOMAIN,
                translation_key="window_too_short",
                translation_placeholders={"appliance": self.appliance.name, "time": value.isoformat("minutes")},
            )
        await self.planner.async_set_ready_by(self.appliance.appliance_id, value)
        if self.state_data.pinned and self.state_data.auto:
            await self.planner.async_clear_plan(self.appliance.appliance_id)
