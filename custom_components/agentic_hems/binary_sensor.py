"""Binary sensors: tomorrow's prices available (entry) and "run now" per appliance."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from homeassistant.components.binary_sensor import BinarySensorEntity
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.util import dt as dt_util

from .runtime import AgenticHemsConfigEntry
from .coordinator import tomorrow_available
from .entity import AgenticHemsEntity, ApplianceEntity
from .planning.day_views import day_plan

PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant, entry: AgenticHemsConfigEntry, async_add_entities: AddConfigEntryEntitiesCallback
) -> None:
    """Add the entry's and each appliance's binary sensors."""
    async_add_entities([TomorrowPricesSensor(entry, "tomorrow_prices")])
    for appliance in entry.runtime_data.planner.appliances.values():
        async_add_entities([RunNowSensor(entry, appliance, "run_now")], config_subentry_id=appliance.appliance_id)


class TomorrowPricesSensor(AgenticHemsEntity, BinarySensorEntity):
    """On when the local tomorrow is priced (as far as the day-ahead market has published it)."""

    @property
    def is_on(self) -> bool | None:
        """Tomorrow priced."""
        data = self.coordinator.data
        if data is None:
            return None
        daily = self.coordinator.source.daily_publication
        return tomorrow_available(data.total, dt_util.utcnow(), daily_publication=daily)


class RunNowSensor(ApplianceEntity, BinarySensorEntity):
    """On during the appliance's planned slots; carries today's and tomorrow's plan per slot."""

    _unrecorded_attributes = frozenset({"slots", "slot_starts", "slots_tomorrow", "slot_starts_tomorrow"})

    @property
    def is_on(self) -> bool:
        """A planned slot covers now."""
        plan = self.state_data.plan
        return plan is not None and plan.is_running(dt_util.utcnow())

    @property
    def extra_state_attributes(self) -> dict[str, Any]:
        """kW per 15-minute slot of the local today (92/96/100) and tomorrow, with UTC slot starts."""
        tz = dt_util.get_default_time_zone()
        today = dt_util.now().date()
        plan = self.state_data.plan
        starts, slots = day_plan(plan, today, tz)
        starts_tomorrow, slots_tomorrow = day_plan(plan, today + timedelta(days=1), tz)
        return {
            "start": plan.start.isoformat() if plan and plan.start else None,
            "end": plan.end.isoformat() if plan and plan.end else None,
            "slots": slots,
            "slot_starts": starts,
            "slots_tomorrow": slots_tomorrow,
            "slot_starts_tomorrow": starts_tomorrow,
        }
