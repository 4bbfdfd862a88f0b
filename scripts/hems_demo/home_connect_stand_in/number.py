"""The dishwasher's "Start in relative" option number (s): the delay its program waits before it starts."""

from __future__ import annotations

from homeassistant.components.number import NumberEntity
from homeassistant.const import UnitOfTime
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from . import MAX_START_IN_S, StandInConfigEntry
from .entity import StandInEntity

PARALLEL_UPDATES = 1


async def async_setup_entry(
    hass: HomeAssistant, entry: StandInConfigEntry, async_add_entities: AddConfigEntryEntitiesCallback
) -> None:
    """Add the number."""
    async_add_entities([StartIn(entry.runtime_data, "BSH.Common.Option.StartInRelative", "start_in_relative")])


class StartIn(StandInEntity, NumberEntity):
    """The start-in option of the selected or the delayed program (0 once it runs)."""

    _attr_native_min_value = 0
    _attr_native_max_value = MAX_START_IN_S
    _attr_native_step = 60
    _attr_native_unit_of_measurement = UnitOfTime.SECONDS

    @property
    def native_value(self) -> float:
        """The delay in s."""
        return float(self.dishwasher.start_in_s)

    async def async_set_native_value(self, value: float) -> None:
        """Set the selected program's delay."""
        self.dishwasher.start_in_s = int(value)
        self.dishwasher.changed()
