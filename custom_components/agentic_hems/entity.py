"""Entity bases: one service device per entry (prices) and one device per appliance subentry."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers.device_registry import DeviceEntryType, DeviceInfo
from homeassistant.helpers.entity import EntityDescription
from homeassistant.helpers.update_coordinator import CoordinatorEntity

from .const import DOMAIN
from .coordinator import PriceCoordinator

if TYPE_CHECKING:
    from .listeners import ChangeListeners
    from .planning.manager import ApplianceState
    from .runtime import AgenticHemsConfigEntry, RuntimeData
    from .scheduling.appliance import Appliance


# Version-specific: HA 2026.8 links a device to its parent by the parent's registry id (DeviceInfo.via_device_id);
# the parent's identifier (via_device) is deprecated there and breaks in 2027.8, and HA 2026.4 knows only that one.
VIA_DEVICE_ID = "via_device_id" in DeviceInfo.__annotations__


def entry_device_info(entry: AgenticHemsConfigEntry) -> DeviceInfo:
    """Return the entry's device (prices, device control, the assistant).

    ``runtime.async_build_runtime`` registers it before the platforms start, so the appliances' devices can name it
    as their parent.
    """
    return DeviceInfo(
        identifiers={(DOMAIN, entry.entry_id)},
        name="Agentic HEMS",
        manufacturer="Agentic HEMS",
        model=entry.title,
        entry_type=DeviceEntryType.SERVICE,
    )


# The model an appliance's device shows, by kind.
MODELS = {
    "dishwasher": "Dishwasher",
    "washing_machine": "Washing machine",
    "ev_charger": "EV charger",
    "heat_pump": "Heat pump",
    "battery": "Home battery",
    "generic": "Flexible load",
}


def appliance_device_info(entry: AgenticHemsConfigEntry, appliance: Appliance) -> DeviceInfo:
    """Return an appliance's device: a device (no entry type) linked to the entry's, its kind as the model."""
    return DeviceInfo(
        identifiers={(DOMAIN, appliance.appliance_id)},
        name=appliance.name,
        model=MODELS.get(appliance.kind, appliance.kind),
        **via_entry_device(entry),
    )


@callback
def async_migrate_appliance_devices(hass: HomeAssistant, entry: AgenticHemsConfigEntry) -> None:
    """Turn the entry's appliance devices that earlier versions registered as services into devices.

    They lose the service entry type and the integration's name as their manufacturer; the entry's own device stays
    a service.
    """
    registry = dr.async_get(hass)
    for device in dr.async_entries_for_config_entry(registry, entry.entry_id):
        if (DOMAIN, entry.entry_id) not in device.identifiers and device.entry_type is DeviceEntryType.SERVICE:
            registry.async_update_device(device.id, entry_type=None, manufacturer=None)


def via_entry_device(entry: AgenticHemsConfigEntry) -> DeviceInfo:
    """Return the link from an appliance's device to the entry's device (see :data:`VIA_DEVICE_ID`)."""
    link: dict[str, Any] = (
        {"via_device_id": entry.runtime_data.device_id} if VIA_DEVICE_ID else {"via_device": (DOMAIN, entry.entry_id)}
    )
    return cast("DeviceInfo", link)


def prices_available(runtime: RuntimeData) -> bool:
    """Tell whether the price of now is known (cached prices count while a fetch fails); unavailable otherwise."""
    return runtime.coordinator.has_price_now()


@dataclass(frozen=True, kw_only=True)
class AgenticHemsEntityDescription(EntityDescription):
    """An entity of the entry's device: ``key`` is its translation key and the suffix of its unique id.

    ``available_fn`` says from the entry's runtime whether it is available (by default always: device control,
    gate decisions and the assistant do not depend on prices); ``follow_fn`` names the manager whose changes it
    shows besides the prices.
    """

    available_fn: Callable[[RuntimeData], bool] = lambda _: True
    follow_fn: Callable[[RuntimeData], ChangeListeners] | None = None


class AgenticHemsEntity(CoordinatorEntity[PriceCoordinator]):
    """An entity of the entry's device, described by an :class:`AgenticHemsEntityDescription`."""

    _attr_has_entity_name = True
    entity_description: AgenticHemsEntityDescription

    def __init__(self, entry: AgenticHemsConfigEntry, description: AgenticHemsEntityDescription) -> None:
        """Attach to the entry device."""
        super().__init__(entry.runtime_data.coordinator)
        self.entity_description = description
        self.runtime = entry.runtime_data
        self._attr_unique_id = f"{entry.entry_id}_{description.key}"
        self._attr_device_info = entry_device_info(entry)

    @property
    def available(self) -> bool:
        """As the description says."""
        return self.entity_description.available_fn(self.runtime)

    async def async_added_to_hass(self) -> None:
        """Also follow the manager the description names."""
        await super().async_added_to_hass()
        if (follow := self.entity_description.follow_fn) is not None:
            self.async_on_remove(follow(self.runtime).async_add_listener(self.async_write_ha_state))


class ApplianceEntity(CoordinatorEntity[PriceCoordinator]):
    """An entity of one appliance's device; updates with prices and with its plan.

    The description's ``key`` is its translation key and the suffix of its unique id.
    """

    _attr_has_entity_name = True

    def __init__(self, entry: AgenticHemsConfigEntry, appliance: Appliance, description: EntityDescription) -> None:
        """Attach to the appliance device."""
        super().__init__(entry.runtime_data.coordinator)
        self.entity_description = description
        self.planner = entry.runtime_data.planner
        self.appliance = appliance
        self._attr_unique_id = f"{appliance.appliance_id}_{description.key}"
        self._attr_device_info = appliance_device_info(entry, appliance)

    @property
    def available(self) -> bool:
        """Plans and settings stay readable while prices are briefly unavailable."""
        return True

    @property
    def state_data(self) -> ApplianceState:
        """Return this appliance's planning state."""
        return self.planner.states[self.appliance.appliance_id]

    async def async_added_to_hass(self) -> None:
        """Also follow plan changes."""
        await super().async_added_to_hass()
        self.async_on_remove(self.planner.async_add_listener(self.async_write_ha_state))
