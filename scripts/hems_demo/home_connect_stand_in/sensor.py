"""The dishwasher's "Operation state": an enum sensor with home_connect's options."""

from __future__ import annotations

from homeassistant.components.sensor import SensorDeviceClass, SensorEntity
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from . import OPERATION_STATES, StandInConfigEntry
from .entity import StandInEntity

PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant, entry: StandInConfigEntry, async_add_entities: AddConfigEntryEntitiesCallback
) -> None:
    """Add the sensor."""
    async_add_entities([OperationState(entry.runtime_data, "BSH.Common.Status.OperationState", "operation_state")])


class OperationState(StandInEntity, SensorEntity):
    """What the appliance does: ready, delayedstart, run, ..."""

    _attr_device_class = SensorDeviceClass.ENUM
    _attr_options = OPERATION_STATES

    @property
    def native_value(self) -> str:
        """The operation state."""
        return self.dishwasher.operation
