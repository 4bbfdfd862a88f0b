"""Sensors of the entry and of each appliance.

The entry's: the current total price, the last gate decision and the assistant's run statistics; each appliance's:
the next start and the planned cost. The whole-home plan's (:mod:`.home_sensor`): its cost and the planned grid flows
now, and each battery's planned power and state of charge now.

Each sensor is a description: ``value_fn`` gives its state, ``attr_fn`` its attributes and ``unit_fn`` a unit known
only at run time (the prices' currency), from the entry's runtime or from the appliance's planning state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from homeassistant.components.sensor import SensorDeviceClass, SensorEntity, SensorEntityDescription, SensorStateClass
from homeassistant.const import PERCENTAGE, EntityCategory, UnitOfPower
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.helpers.typing import StateType
from homeassistant.util import dt as dt_util

from .coordinator import PriceData
from .entity import AgenticHemsEntity, AgenticHemsEntityDescription, ApplianceEntity, prices_available
from .gates.models import Outcome
from .home_sensor import (
    HomeSensorEntityDescription,
    async_add_heat_pump_sensors,
    async_add_home_sensors,
    battery_power,
    battery_soc,
    heat_pump_sensor,
    plan_attributes,
    plan_cost,
    value_in_slot,
)
from .listeners import ChangeListeners
from .planning.day_views import day_prices
from .planning.home_config import BatteryConfig
from .planning.home_manager import HomePlanManager
from .planning.manager import ApplianceState
from .price_trust import trust_attributes
from .runtime import AgenticHemsConfigEntry, RuntimeData

PARALLEL_UPDATES = 0


@dataclass(frozen=True, kw_only=True)
class AgenticHemsSensorEntityDescription(SensorEntityDescription, AgenticHemsEntityDescription):
    """A sensor of the entry's device, read from the entry's runtime."""

    value_fn: Callable[[RuntimeData], StateType]
    attr_fn: Callable[[RuntimeData], dict[str, Any] | None] = lambda _: None
    unit_fn: Callable[[RuntimeData], str | None] | None = None


@dataclass(frozen=True, kw_only=True)
class ApplianceSensorEntityDescription(SensorEntityDescription):
    """A sensor of an appliance's device, read from its planning state and the current prices.

    The prices are None before the first prices.
    """

    value_fn: Callable[[ApplianceState, PriceData | None], StateType | datetime]
    attr_fn: Callable[[ApplianceState, PriceData | None], dict[str, Any]]
    unit_fn: Callable[[ApplianceState], str | None] | None = None


def _price_now(runtime: RuntimeData) -> float | None:
    """Total price of the current slot, per kWh (None without prices)."""
    data = runtime.coordinator.data
    return None if data is None else data.total.price_at(dt_util.utcnow())


def _price_attributes(runtime: RuntimeData) -> dict[str, Any] | None:
    """Today's and tomorrow's total prices ([{start, price}], unrecorded), where they come from, and their trust.

    ``prices_trust`` and ``price_issues`` say per local date how far the prices can be trusted (see
    :func:`.price_trust.trust_attributes`).
    """
    data = runtime.coordinator.data
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
        **trust_attributes(data.total, today),
    }


def _last_decision(runtime: RuntimeData) -> str | None:
    """Return the newest trace's outcome, or None before the first decision."""
    last = runtime.control.last
    return None if last is None else str(last["outcome"])


def _decision_attributes(runtime: RuntimeData) -> dict[str, Any]:
    """Small fields of the newest trace and why it ended (the full trace is in the trace card and the services)."""
    last = runtime.control.last or {}
    gates = last.get("gate_results") or []
    return {
        "trace_id": last.get("trace_id"),
        "entity_id": last.get("entity_id"),
        "failed_gate": last.get("failed_gate"),
        "source_agent": last.get("source_agent"),
        "decided_at": last.get("timestamp"),
        "reason": gates[-1].get("reason") if gates else None,
        "pending_confirmations": len(runtime.control.pending_records()),
    }


def _run_stat(key: str) -> Callable[[RuntimeData], StateType]:
    """One statistic over the assistant's stored runs."""
    return lambda runtime: runtime.assistant.stats()[key]


def _follow_runs(runtime: RuntimeData) -> ChangeListeners:
    """Return the assistant: its runs change the statistics."""
    return runtime.assistant


ENTRY_SENSORS = (
    AgenticHemsSensorEntityDescription(
        key="electricity_price",
        translation_key="electricity_price",
        state_class=SensorStateClass.MEASUREMENT,
        suggested_display_precision=4,
        value_fn=_price_now,
        attr_fn=_price_attributes,
        unit_fn=lambda runtime: None if (data := runtime.coordinator.data) is None else f"{data.total.currency}/kWh",
        available_fn=lambda runtime: prices_available(runtime) and _price_now(runtime) is not None,
    ),
    AgenticHemsSensorEntityDescription(
        key="last_decision",
        translation_key="last_decision",
        device_class=SensorDeviceClass.ENUM,
        options=[str(o) for o in Outcome],
        entity_category=EntityCategory.DIAGNOSTIC,
        value_fn=_last_decision,
        attr_fn=_decision_attributes,
        follow_fn=lambda runtime: runtime.control,
    ),
    AgenticHemsSensorEntityDescription(
        key="run_runs",
        translation_key="run_runs",
        state_class=SensorStateClass.TOTAL,
        entity_category=EntityCategory.DIAGNOSTIC,
        entity_registry_enabled_default=False,
        value_fn=_run_stat("runs"),
        follow_fn=_follow_runs,
    ),
    AgenticHemsSensorEntityDescription(
        key="run_success_rate",
        translation_key="run_success_rate",
        native_unit_of_measurement=PERCENTAGE,
        state_class=SensorStateClass.MEASUREMENT,
        entity_category=EntityCategory.DIAGNOSTIC,
        entity_registry_enabled_default=False,
        value_fn=_run_stat("success_rate"),
        follow_fn=_follow_runs,
    ),
    AgenticHemsSensorEntityDescription(
        key="run_mean_iterations",
        translation_key="run_mean_iterations",
        state_class=SensorStateClass.MEASUREMENT,
        suggested_display_precision=1,
        entity_category=EntityCategory.DIAGNOSTIC,
        entity_registry_enabled_default=False,
        value_fn=_run_stat("mean_iterations"),
        follow_fn=_follow_runs,
    ),
    AgenticHemsSensorEntityDescription(
        key="run_mean_tokens",
        translation_key="run_mean_tokens",
        state_class=SensorStateClass.MEASUREMENT,
        suggested_display_precision=0,
        entity_category=EntityCategory.DIAGNOSTIC,
        entity_registry_enabled_default=False,
        value_fn=_run_stat("mean_tokens"),
        follow_fn=_follow_runs,
    ),
    AgenticHemsSensorEntityDescription(
        key="run_total_cost",
        translation_key="run_total_cost",
        device_class=SensorDeviceClass.MONETARY,
        state_class=SensorStateClass.TOTAL,
        suggested_display_precision=2,
        entity_category=EntityCategory.DIAGNOSTIC,
        entity_registry_enabled_default=False,
        value_fn=_run_stat("total_cost"),
        follow_fn=_follow_runs,
    ),
)


def _next_start(state: ApplianceState, _prices: PriceData | None) -> datetime | None:
    """Start of the planned run, if it has not ended (unknown when nothing is planned ahead)."""
    plan = state.plan
    if plan is None or not plan.feasible or plan.end is None or plan.end <= dt_util.utcnow():
        return None
    return plan.start


def _next_start_attributes(state: ApplianceState, _prices: PriceData | None) -> dict[str, Any]:
    """End, reason (``doubtful_prices`` on a doubtful slot), its detail and whether the schedule service made it."""
    plan = state.plan
    return {
        "end": plan.end.isoformat() if plan and plan.end else None,
        "reason": str(plan.reason) if plan else None,
        "detail": plan.detail if plan else None,
        "scheduled_by_service": state.pinned,
    }


def _planned_cost(state: ApplianceState, prices: PriceData | None) -> float | None:
    """Planned cost in the curve's currency, at the prices in force (a stored plan outlives a formula change)."""
    plan = state.plan
    if plan is None or plan.cost is None:
        return None
    cost = plan.cost_on(prices.total) if prices is not None else None
    return round(plan.cost if cost is None else cost, 6)


def _planned_cost_attributes(state: ApplianceState, prices: PriceData | None) -> dict[str, Any]:
    """Baseline (start at once) cost when planned, and the savings against the cost shown."""
    cost = _planned_cost(state, prices)
    baseline = None if state.plan is None else state.plan.baseline_cost
    return {
        "baseline_cost": None if baseline is None else round(baseline, 6),
        "savings": None if baseline is None or cost is None else round(baseline - cost, 6),
    }


APPLIANCE_SENSORS = (
    ApplianceSensorEntityDescription(
        key="next_start",
        translation_key="next_start",
        device_class=SensorDeviceClass.TIMESTAMP,
        value_fn=_next_start,
        attr_fn=_next_start_attributes,
    ),
    ApplianceSensorEntityDescription(
        key="planned_cost",
        translation_key="planned_cost",
        device_class=SensorDeviceClass.MONETARY,
        suggested_display_precision=2,
        value_fn=_planned_cost,
        attr_fn=_planned_cost_attributes,
        unit_fn=lambda state: state.plan.currency if state.plan else None,
    ),
)


def _planned_kw(key: str, value_fn: Callable[[HomePlanManager, BatteryConfig | None], StateType]) -> dict[str, Any]:
    """Return the fields every planned-power sensor of the whole-home plan shares."""
    return {
        "key": key,
        "device_class": SensorDeviceClass.POWER,
        "state_class": SensorStateClass.MEASUREMENT,
        "native_unit_of_measurement": UnitOfPower.KILO_WATT,
        "suggested_display_precision": 2,
        "value_fn": value_fn,
    }


HOME_SENSORS = (
    HomeSensorEntityDescription(
        key="home_plan",
        translation_key="home_plan",
        device_class=SensorDeviceClass.MONETARY,
        suggested_display_precision=2,
        value_fn=plan_cost,
        attr_fn=plan_attributes,
    ),
    HomeSensorEntityDescription(
        translation_key="grid_import_planned", **_planned_kw("grid_import_planned", value_in_slot("import_kw"))
    ),
    HomeSensorEntityDescription(
        translation_key="grid_export_planned", **_planned_kw("grid_export_planned", value_in_slot("export_kw"))
    ),
    HomeSensorEntityDescription(
        translation_key="pv_curtailment_planned", **_planned_kw("pv_curtailment_planned", value_in_slot("curtail_kw"))
    ),
)
BATTERY_SENSORS = (
    HomeSensorEntityDescription(
        translation_key="battery_planned_power", **_planned_kw("battery_planned_power", battery_power)
    ),
    HomeSensorEntityDescription(
        key="battery_planned_soc",
        translation_key="battery_planned_soc",
        device_class=SensorDeviceClass.BATTERY,
        state_class=SensorStateClass.MEASUREMENT,
        native_unit_of_measurement=PERCENTAGE,
        suggested_display_precision=0,
        value_fn=battery_soc,
    ),
)

HEAT_PUMP_SENSORS = (  # per heat pump: its planned power and temperature now (home_sensor.heat_pump_sensor)
    heat_pump_sensor(translation_key="heat_pump_planned_power"),
    heat_pump_sensor(translation_key="heat_pump_planned_temperature"),
)


async def async_setup_entry(
    hass: HomeAssistant, entry: AgenticHemsConfigEntry, async_add_entities: AddConfigEntryEntitiesCallback
) -> None:
    """Add the entry's sensors and each appliance's sensors."""
    async_add_entities(AgenticHemsSensor(entry, description) for description in ENTRY_SENSORS)
    for appliance in entry.runtime_data.planner.appliances.values():
        async_add_entities(
            (ApplianceSensor(entry, appliance, description) for description in APPLIANCE_SENSORS),
            config_subentry_id=appliance.appliance_id,
        )
    async_add_home_sensors(entry, async_add_entities, HOME_SENSORS, BATTERY_SENSORS)
    async_add_heat_pump_sensors(entry, async_add_entities, HEAT_PUMP_SENSORS)


def monetary_unit(sensor: SensorEntity, prices: PriceData | None) -> str | None:
    """Return a sensor's fixed unit; a monetary one without its own has the entry's currency.

    That is the prices' currency, or Home Assistant's before the first prices.
    """
    if sensor.device_class != SensorDeviceClass.MONETARY or sensor.entity_description.native_unit_of_measurement:
        return sensor.entity_description.native_unit_of_measurement
    return prices.total.currency if prices is not None else sensor.hass.config.currency


class AgenticHemsSensor(AgenticHemsEntity, SensorEntity):
    """A sensor of the entry's device; the price curves are not recorded."""

    entity_description: AgenticHemsSensorEntityDescription
    _unrecorded_attributes = frozenset({"today", "tomorrow"})

    @property
    def native_value(self) -> StateType:
        """The description's value."""
        return self.entity_description.value_fn(self.runtime)

    @property
    def native_unit_of_measurement(self) -> str | None:
        """The description's unit, or the one it reads at run time."""
        if (unit_fn := self.entity_description.unit_fn) is not None:
            return unit_fn(self.runtime)
        return monetary_unit(self, self.coordinator.data)

    @property
    def extra_state_attributes(self) -> dict[str, Any] | None:
        """The description's attributes."""
        return self.entity_description.attr_fn(self.runtime)


class ApplianceSensor(ApplianceEntity, SensorEntity):
    """A sensor of an appliance's device."""

    entity_description: ApplianceSensorEntityDescription

    @property
    def native_value(self) -> StateType | datetime:
        """The description's value."""
        return self.entity_description.value_fn(self.state_data, self.coordinator.data)

    @property
    def native_unit_of_measurement(self) -> str | None:
        """The description's unit, or the one it reads at run time."""
        if (unit_fn := self.entity_description.unit_fn) is not None and (unit := unit_fn(self.state_data)) is not None:
            return unit
        return monetary_unit(self, self.coordinator.data)

    @property
    def extra_state_attributes(self) -> dict[str, Any]:
        """The description's attributes."""
        return self.entity_description.attr_fn(self.state_data, self.coordinator.data)
