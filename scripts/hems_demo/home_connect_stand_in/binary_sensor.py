"""The dishwasher's "Remote start": on while the appliance allows a start from the app (always, in the stand-in)."""

from __future__ import annotations

from homeassistant.components.binary_sensor import BinarySensorEntity
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from . import StandInConfigEntry
from .entity import StandInEntity

PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant, entry: StandInConfigEntry, async_add_entities: AddConfigEntryEntitiesCallback
) -> None:
    """Add the binary sensor."""
    async_add_entities([RemoteStart(entry.runtime_data, "BSH.Common.Status.RemoteControlStartAllowed", "remote_start")])


class RemoteStart(StandInEntity, BinarySensorEntity):
    """Remote start allowed."""

    _attr_is_on = True  # the demo shows the allowed path; agentic_hems' tests cover a refused one
