"""Sensors: the current total price and the last gate decision (entry); per appliance, the next start and the
planned cost."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from homeassistant.components.sensor import (
    SensorDeviceClass,
    SensorEntity,
    SensorEntityDescription,
    SensorStateClass,
)
from homeassistant.const import PERCENTAGE, EntityCategory
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.util import dt as dt_util

from . import AgenticHemsConfigEntry
from .entity import AgenticHemsEntity, AgenticHemsSiteEntity, ApplianceEntity
from .gates.models import Outcome
from .views import day_prices

PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant, entry: AgenticHemsConfigEntry, async_add_entities: AddConfigEntryEntitiesCallback
) -> None:
    """Add the price sensor and each appliance's sensors."""
    async_add_entities([PriceSensor(entry), LastDecisionSensor(entry)])
    async_add_entities(RunStatsSensor(entry, description) for description in RUN_STATS)
    for appliance in entry.runtime_data.planner.appliances.values():
        async_add_entities(
            [NextStartSensor(entry, appliance, "next_start"), PlannedCostSensor(entry, appliance, "planned_cost")],
            config_subentry_id=appliance.appliance_id,
        )


class PriceSensor(AgenticHemsEntity, SensorEntity):
    """The total price now (spot with the price formula), usable as the Energy dashboard's current price."""

    _attr_state_class = SensorStateClass.MEASUREMENT
    _attr_suggested_display_precision = 4
    _unrecorded_attributes = frozenset({"today", "tomorrow"})

    def __init__(self, entry: AgenticHemsConfigEntry) -> None:
        """Create the entry's price sensor."""
        super().__init__(entry, "electricity_price")

    @property
    def available(self) -> bool:
        """Available while the cached curve has a price for now."""
        return super().available and self.coordinator.data is not None and self.native_value is not None

    @property
    def native_value(self) -> float | None:
        """Total price of the current slot, per kWh."""
        data = self.coordinator.data
        return None if data is None else data.total.price_at(dt_util.utcnow())

    @property
    def native_unit_of_measurement(self) -> str | None:
        """``<currency>/kWh``."""
        data = self.coordinator.data
        return None if data is None else f"{data.total.currency}/kWh"

    @property
    def extra_state_attributes(self) -> dict[str, Any] | None:
        """Today's and tomorrow's total prices ([{start, price}], unrecorded) and where they come from."""
        data = self.coordinator.data
        if data is None:
            return None
        tz = dt_util.get_default_time_zone()
        today = dt_util.now().date()
        return {
            "currency": data.total.currency,
            "source": data.total.source,
            "sample": data.sample,
            "spot_price": data.spot.price_at(dt_util.utcnow()),
            "today": day_prices(data.total, today, tz),
            "tomorrow": day_prices(data.total, today + timedelta(days=1), tz),
        }


class NextStartSensor(ApplianceEntity, SensorEntity):
    """When the appliance's planned run starts (unknown when nothing is planned ahead)."""

    _attr_device_class = SensorDeviceClass.TIMESTAMP

    @property
    def native_value(self) -> datetime | None:
        """Start of the planned run, if it has not ended."""
        plan = self.state_data.plan
        if plan is None or not plan.feasible or plan.end is None or plan.end <= dt_util.utcnow():
            return None
        return plan.start

    @property
    def extra_state_attributes(self) -> dict[str, Any]:
        """End, reason and whether the plan came from the schedule service."""
        plan = self.state_data.plan
        return {
            "end": plan.end.isoformat() if plan and plan.end else None,
            "reason": str(plan.reason) if plan else None,
            "scheduled_by_service": self.state_data.pinned,
        }


class PlannedCostSensor(ApplianceEntity, SensorEntity):
    """What the planned run costs at the total price, with the cost of starting at once for comparison."""

    _attr_device_class = SensorDeviceClass.MONETARY
    _attr_suggested_display_precision = 3

    @property
    def native_unit_of_measurement(self) -> str | None:
        """The plan's currency."""
        plan = self.state_data.plan
        return plan.currency if plan else None

    @property
    def native_value(self) -> float | None:
        """Planned cost in the curve's currency, at the prices in force (a stored plan outlives a formula change)."""
        plan = self.state_data.plan
        if plan is None or plan.cost is None:
            return None
        data = self.coordinator.data
        cost = plan.cost_on(data.total) if data is not None else None
        return round(plan.cost if cost is None else cost, 6)

    @property
    def extra_state_attributes(self) -> dict[str, Any]:
        """Baseline (start at once) cost when planned, and the savings against the cost shown."""
        plan = self.state_data.plan
        cost = self.native_value
        baseline = None if plan is None else plan.baseline_cost
        return {
            "baseline_cost": None if baseline is None else round(baseline, 6),
            "savings": None if baseline is None or cost is None else round(baseline - cost, 6),
        }


class LastDecisionSensor(AgenticHemsSiteEntity, SensorEntity):
    """The outcome of the newest gate decision; the full trace is an unrecorded attribute."""

    _attr_device_class = SensorDeviceClass.ENUM
    _attr_options = [str(o) for o in Outcome]
    _attr_entity_category = EntityCategory.DIAGNOSTIC
    _unrecorded_attributes = frozenset({"trace"})

    def __init__(self, entry: AgenticHemsConfigEntry) -> None:
        """Create the entry's last-decision sensor."""
        super().__init__(entry, "last_decision")
        self.control = entry.runtime_data.control

    @property
    def native_value(self) -> str | None:
        """The newest trace's outcome, or None before the first decision."""
        last = self.control.last
        return None if last is None else str(last["outcome"])

    @property
    def extra_state_attributes(self) -> dict[str, Any]:
        """Small recorded fields plus the full (redacted) trace."""
        last = self.control.last or {}
        return {
            "trace_id": last.get("trace_id"),
            "entity_id": last.get("entity_id"),
            "failed_gate": last.get("failed_gate"),
            "source_agent": last.get("source_agent"),
            "decided_at": last.get("timestamp"),
            "pending_confirmations": len(self.control.keeper.pending),
            "trace": last or None,
        }

    async def async_added_to_hass(self) -> None:
        """Also follow decisions."""
        await super().async_added_to_hass()
        self.async_on_remove(self.control.async_add_listener(self.async_write_ha_state))


RUN_STATS = (  # diagnostics of the assistant, off until a user enables them (the runs card shows the same figures)
    SensorEntityDescription(
        key="runs",
        translation_key="run_runs",
        state_class=SensorStateClass.TOTAL,
        entity_registry_enabled_default=False,
    ),
    SensorEntityDescription(
        key="success_rate",
        translation_key="run_success_rate",
        native_unit_of_measurement=PERCENTAGE,
        state_class=SensorStateClass.MEASUREMENT,
        entity_registry_enabled_default=False,
    ),
    SensorEntityDescription(
        key="mean_iterations",
        translation_key="run_mean_iterations",
        state_class=SensorStateClass.MEASUREMENT,
        suggested_display_precision=1,
        entity_registry_enabled_default=False,
    ),
    SensorEntityDescription(
        key="mean_tokens",
        translation_key="run_mean_tokens",
        state_class=SensorStateClass.MEASUREMENT,
        suggested_display_precision=0,
        entity_registry_enabled_default=False,
    ),
    SensorEntityDescription(
        key="total_cost",
        translation_key="run_total_cost",
        state_class=SensorStateClass.TOTAL,
        suggested_display_precision=4,
        entity_registry_enabled_default=False,
    ),
)


class RunStatsSensor(AgenticHemsSiteEntity, SensorEntity):
    """Analytics over the assistant's stored runs (seed 000's analytics page)."""

    _attr_entity_category = EntityCategory.DIAGNOSTIC

    def __init__(self, entry: AgenticHemsConfigEntry, description: SensorEntityDescription) -> None:
        """Create one statistic's sensor."""
        super().__init__(entry, str(description.translation_key))
        self.entity_description = description
        self.assistant = entry.runtime_data.assistant

    @property
    def native_value(self) -> float | int | None:
        """The statistic over the stored runs."""
        return self.assistant.stats()[self.entity_description.key]

    async def async_added_to_hass(self) -> None:
        """Also follow runs."""
        await super().async_added_to_hass()
        self.async_on_remove(self.assistant.async_add_listener(self.async_write_ha_state))
