"""Entity bases: one device per entry (prices) and one per appliance subentry."""

from __future__ import annotations

from typing import TYPE_CHECKING

from homeassistant.helpers.device_registry import DeviceEntryType, DeviceInfo
from homeassistant.helpers.update_coordinator import CoordinatorEntity

from .const import DOMAIN
from .coordinator import PriceCoordinator

if TYPE_CHECKING:
    from . import AgenticHemsConfigEntry
    from .planner import ApplianceState
    from .scheduling.appliance import Appliance


class AgenticHemsEntity(CoordinatorEntity[PriceCoordinator]):
    """An entity of the entry's price device."""

    _attr_has_entity_name = True

    def __init__(self, entry: AgenticHemsConfigEntry, key: str) -> None:
        """Attach to the entry device."""
        super().__init__(entry.runtime_data.coordinator)
        self._attr_translation_key = key
        self._attr_unique_id = f"{entry.entry_id}_{key}"
        self._attr_device_info = DeviceInfo(
            identifiers={(DOMAIN, entry.entry_id)},
            name="Agentic HEMS",
            manufacturer="Agentic HEMS",
            model=entry.title,
            entry_type=DeviceEntryType.SERVICE,
        )


class AgenticHemsSiteEntity(AgenticHemsEntity):
    """An entity of the entry's device that does not depend on prices: device control, gate decisions, the
    assistant. It stays available while prices are not."""

    @property
    def available(self) -> bool:
        """Always available."""
        return True


class ApplianceEntity(CoordinatorEntity[PriceCoordinator]):
    """An entity of one appliance's device; updates with prices and with its plan."""

    _attr_has_entity_name = True

    def __init__(self, entry: AgenticHemsConfigEntry, appliance: Appliance, key: str) -> None:
        """Attach to the appliance device."""
        super().__init__(entry.runtime_data.coordinator)
        self.planner = entry.runtime_data.planner
        self.appliance = appliance
        self._attr_translation_key = key
        self._attr_unique_id = f"{appliance.appliance_id}_{key}"
        self._attr_device_info = DeviceInfo(
            identifiers={(DOMAIN, appliance.appliance_id)},
            name=appliance.name,
            manufacturer="Agentic HEMS",
            model=appliance.kind.replace("_", " ").capitalize(),
            via_device=(DOMAIN, entry.entry_id),
            entry_type=DeviceEntryType.SERVICE,
        )

    @property
    def available(self) -> bool:
        """Plans and settings stay readable while prices are briefly unavailable."""
        return True

    @property
    def state_data(self) -> ApplianceState:
        """This appliance's planning state."""
        return self.planner.states[self.appliance.appliance_id]

    async def async_added_to_hass(self) -> None:
        """Also follow plan changes."""
        await super().async_added_to_hass()
        self.async_on_remove(self.planner.async_add_listener(self.async_write_ha_state))
