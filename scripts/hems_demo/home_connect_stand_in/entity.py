"""The stand-in's entity base: HA core home_connect's naming (device name + translated entity name, push updates)."""

from __future__ import annotations

from homeassistant.helpers.device_registry import DeviceInfo
from homeassistant.helpers.entity import Entity

from . import DOMAIN, HA_ID, Dishwasher


class StandInEntity(Entity):
    """One of the dishwasher's entities; ``key`` is the Home Connect key its unique id ends with."""

    _attr_has_entity_name = True
    _attr_should_poll = False

    def __init__(self, dishwasher: Dishwasher, key: str, translation_key: str) -> None:
        """Name it by ``translation_key``; its unique id is the appliance's id and ``key``."""
        self.dishwasher = dishwasher
        self._attr_unique_id = f"{HA_ID}-{key}"
        self._attr_translation_key = translation_key
        self._attr_device_info = DeviceInfo(identifiers={(DOMAIN, HA_ID)})

    async def async_added_to_hass(self) -> None:
        """Follow the appliance."""
        self.async_on_remove(self.dishwasher.listen(self.async_write_ha_state))
