"""Binary sensors: tomorrow's prices available (entry) and "run now" per appliance."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from homeassistant.components.binary_sensor import BinarySensorEntity, BinarySensorEntityDescription
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.util import dt as dt_util

from .coordinator import tomorrow_available
from .entity import AgenticHemsEntity, AgenticHemsEntityDescription, ApplianceEntity, prices_available
from .planning.manager import ApplianceState
from .runtime import AgenticHemsConfigEntry, RuntimeData

PARALLEL_UPDATES = 0


@dataclass(frozen=True, kw_only=True)
class AgenticHemsBinarySensorEntityDescription(BinarySensorEntityDescription, AgenticHemsEntityDescription):
    """A binary sensor of the entry's device, read from the entry's runtime."""

    is_on_fn: Callable[[RuntimeData], bool | None]


@dataclass(frozen=True, kw_only=True)
class ApplianceBinarySensorEntityDescription(BinarySensorEntityDescription):
    """A binary sensor of an appliance's device, read from its planning state."""

    is_on_fn: Callable[[ApplianceState], bool]
    attr_fn: Callable[[ApplianceState], dict[str, Any]]


def _tomorrow_priced(runtime: RuntimeData) -> bool | None:
    """On when every slot of the local tomorrow has a known price (as far as the day-ahead market has published it).

    Off while tomorrow is doubtful (a day of zeros, a tail of zeros) or has unknown slots (refused or not published).
    """
    data = runtime.coordinator.data
    if data is None:
        return None
    daily = runtime.coordinator.source.daily_publication
    return tomorrow_available(data.total, dt_util.utcnow(), daily_publication=daily)


def _run_now_attributes(state: ApplianceState) -> dict[str, Any]:
    """Start and end of the plan (ISO UTC); its slots are in the schedule card (websocket ``agentic_hems/schedule``)."""
    plan = state.plan
    return {
        "start": plan.start.isoformat() if plan and plan.start else None,
        "end": plan.end.isoformat() if plan and plan.end else None,
    }


TOMORROW_PRICES = AgenticHemsBinarySensorEntityDescription(
    key="tomorrow_prices", translation_key="tomorrow_prices", is_on_fn=_tomorrow_priced, available_fn=prices_available
)
RUN_NOW = ApplianceBinarySensorEntityDescription(
    key="run_now",
    translation_key="run_now",
    is_on_fn=lambda state: state.plan is not None and state.plan.is_running(dt_util.utcnow()),
    attr_fn=_run_now_attributes,
)


async def async_setup_entry(
    hass: HomeAssistant, entry: AgenticHemsConfigEntry, async_add_entities: AddConfigEntryEntitiesCallback
) -> None:
    """Add the entry's and each appliance's binary sensors."""
    async_add_entities([AgenticHemsBinarySensor(entry, TOMORROW_PRICES)])
    for appliance in entry.runtime_data.planner.appliances.values():
        async_add_entities(
            [ApplianceBinarySensor(entry, appliance, RUN_NOW)], config_subentry_id=appliance.appliance_id
        )


class AgenticHemsBinarySensor(AgenticHemsEntity, BinarySensorEntity):
    """A binary sensor of the entry's device."""

    entity_description: AgenticHemsBinarySensorEntityDescription

    @property
    def is_on(self) -> bool | None:
        """The description's state."""
        return self.entity_description.is_on_fn(self.runtime)


class ApplianceBinarySensor(ApplianceEntity, BinarySensorEntity):
    """A binary sensor of an appliance's device."""

    entity_description: ApplianceBinarySensorEntityDescription

    @property
    def is_on(self) -> bool:
        """The description's state."""
        return self.entity_description.is_on_fn(self.state_data)

    @property
    def extra_state_attributes(self) -> dict[str, Any]:
        """The description's attributes."""
        return self.entity_description.attr_fn(self.state_data)
