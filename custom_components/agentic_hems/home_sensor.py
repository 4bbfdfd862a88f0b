"""Sensors of the whole-home plan, on the entry's device, on each battery's and on each heat pump's.

The entry's: the plan's cost, grid import/export and PV curtailment now; each battery's (its own device, under its
subentry): the planned power and state of charge now; each heat pump's: the planned power and temperature now, with
the reason now and the per-slot plan as attributes (the plan not recorded).

Other per-slot arrays are not attributes: the ``plan_home`` service and the schedule websocket's ``home`` field carry them.
Each sensor follows the :class:`~.planning.home_manager.HomePlanManager`, which re-plans at every slot boundary.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from homeassistant.components.sensor import SensorDeviceClass, SensorEntity, SensorEntityDescription, SensorStateClass
from homeassistant.const import UnitOfPower, UnitOfTemperature
from homeassistant.helpers.device_registry import DeviceEntryType, DeviceInfo
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.helpers.typing import StateType
from homeassistant.util import dt as dt_util

from .const import DOMAIN
from .entity import entry_device_info, via_entry_device
from .planning.heat_config import HeatPumpConfig
from .planning.heat_view import heat_kw, heat_slots, temp_c
from .planning.home_config import BatteryConfig
from .planning.home_manager import HomePlanManager
from .planning.home_view import phase_over_payload, slot_index, soc_pct, value_now
from .runtime import AgenticHemsConfigEntry


@dataclass(frozen=True, kw_only=True)
class HomeSensorEntityDescription(SensorEntityDescription):
    """A sensor of the whole-home plan; ``battery`` is None for the home's own sensors."""

    value_fn: Callable[[HomePlanManager, BatteryConfig | None], StateType]
    attr_fn: Callable[[HomePlanManager], dict[str, Any] | None] = lambda _: None


def value_in_slot(field: str) -> Callable[[HomePlanManager, BatteryConfig | None], StateType]:
    """Return the reader of the plan's ``field`` array (import_kw, export_kw, curtail_kw) in the current slot."""

    def value(home: HomePlanManager, _: BatteryConfig | None) -> StateType:
        plan = home.result.plan if home.result else None
        return value_now(plan, getattr(plan, field, None), dt_util.utcnow())

    return value


def plan_cost(home: HomePlanManager, _: BatteryConfig | None) -> StateType:
    """Return the plan's cost in its currency, 2 decimals (None without a plan)."""
    plan = home.result.plan if home.result else None
    return None if plan is None else round(plan.cost, 2)


def plan_attributes(home: HomePlanManager) -> dict[str, Any] | None:
    """Return the baseline, saving, status and what the plan stands on (small, recorded).

    ``phase_over`` (:func:`~.planning.home_view.phase_over_payload`) names the phase and its devices when a phase
    limit left no plan.
    """
    result = home.result
    if result is None:
        return None
    plan, inputs = result.plan, result.inputs
    measured = inputs.soc_measured_at.values() if inputs else ()
    return {
        "baseline_cost": round(plan.baseline_cost, 2) if plan else None,
        "saving": round(plan.saving, 2) if plan else None,
        "status": result.reason,
        "detail": result.detail,
        "phase_over": phase_over_payload(result.phase_over),
        "price_horizon_end": plan.horizon_end.isoformat() if plan else None,
        "pv_source": inputs.pv_source if inputs else None,
        "pv_unknown_from": inputs.pv_unknown_from.isoformat() if inputs and inputs.pv_unknown_from else None,
        "soc_measured_at": min(measured).isoformat() if measured else None,
        "planned_at": result.made_at.isoformat(),
    }


def battery_power(home: HomePlanManager, bat: BatteryConfig | None) -> StateType:
    """Return the battery's planned kW in the current slot (+ charging)."""
    plan = home.result.plan if home.result else None
    return value_now(plan, plan.battery_kw.get(bat.subentry_id) if plan and bat else None, dt_util.utcnow())


def battery_soc(home: HomePlanManager, bat: BatteryConfig | None) -> StateType:
    """Return the battery's planned state of charge (percent) at the end of the current slot."""
    plan = home.result.plan if home.result else None
    if plan is None or bat is None or (soc := soc_pct(plan, bat)) is None:
        return None
    i = slot_index(plan, dt_util.utcnow())
    return None if i is None else round(float(soc[i + 1]), 1)  # at the end of the current slot


def async_add_home_sensors(
    entry: AgenticHemsConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
    home_sensors: Iterable[HomeSensorEntityDescription],
    battery_sensors: Iterable[HomeSensorEntityDescription],
) -> None:
    """Add the whole-home plan's sensors (the home's, then each battery's) when the entry plans the home."""
    if (home := entry.runtime_data.home) is None:
        return
    async_add_entities(HomeSensor(entry, home, description) for description in home_sensors)
    for bat in home.config.batteries:
        async_add_entities(
            (HomeSensor(entry, home, description, bat) for description in battery_sensors),
            config_subentry_id=bat.subentry_id,
        )


class HomeSensor(SensorEntity):
    """A sensor of the whole-home plan (see the module docstring)."""

    _attr_has_entity_name = True
    _attr_should_poll = False
    entity_description: HomeSensorEntityDescription

    def __init__(
        self,
        entry: AgenticHemsConfigEntry,
        home: HomePlanManager,
        description: HomeSensorEntityDescription,
        battery: BatteryConfig | None = None,
    ) -> None:
        """Attach to the entry's device, or to the battery's own device."""
        self.entity_description = description
        self.home = home
        self.battery = battery
        self._attr_unique_id = f"{battery.subentry_id if battery else entry.entry_id}_{description.key}"
        self._attr_device_info = (
            entry_device_info(entry)
            if battery is None
            else DeviceInfo(
                identifiers={(DOMAIN, battery.subentry_id)},
                name=battery.name,
                manufacturer="Agentic HEMS",
                model="Battery",
                entry_type=DeviceEntryType.SERVICE,
                **via_entry_device(entry),
            )
        )

    @property
    def native_unit_of_measurement(self) -> str | None:
        """The currency of the plan's cost (the entry's prices'), else the description's unit."""
        if self.entity_description.device_class is SensorDeviceClass.MONETARY:
            data = self.home.coordinator.data
            return data.total.currency if data is not None else None
        return super().native_unit_of_measurement

    @property
    def native_value(self) -> StateType:
        """The description's value."""
        return self.entity_description.value_fn(self.home, self.battery)

    @property
    def extra_state_attributes(self) -> dict[str, Any] | None:
        """The description's attributes."""
        return self.entity_description.attr_fn(self.home)

    async def async_added_to_hass(self) -> None:
        """Follow the plan."""
        await super().async_added_to_hass()
        self.async_on_remove(self.home.async_add_listener(self.async_write_ha_state))


# --------------------------------------------------------------------------------------------- heat pumps


@dataclass(frozen=True, kw_only=True)
class HeatPumpSensorEntityDescription(SensorEntityDescription):
    """A sensor of one heat pump of the whole-home plan."""

    value_fn: Callable[[HomePlanManager, HeatPumpConfig], StateType]


def heat_pump_power(home: HomePlanManager, hp: HeatPumpConfig) -> StateType:
    """Return the heat pump's planned electrical kW in the current slot."""
    plan = home.result.plan if home.result else None
    return value_now(plan, heat_kw(plan, hp.subentry_id), dt_util.utcnow())


def heat_pump_temperature(home: HomePlanManager, hp: HeatPumpConfig) -> StateType:
    """Return the store's planned temperature (°C) at the end of the current slot."""
    plan = home.result.plan if home.result else None
    temps = temp_c(plan, hp.subentry_id)
    if plan is None or temps is None or (i := slot_index(plan, dt_util.utcnow())) is None:
        return None
    return round(float(temps[i + 1]), 2)


def heat_pump_attributes(home: HomePlanManager, hp: HeatPumpConfig) -> dict[str, Any]:
    """Return the reason now, the comfort band now and the per-slot plan (``plan``, not recorded)."""
    result = home.result
    plan = result.plan if result else None
    slots = heat_slots(result, hp)
    i = slot_index(plan, dt_util.utcnow()) if plan is not None else None
    now = slots[i] if i is not None and i < len(slots) else {}
    return {
        "reason": now.get("reason"),
        "comfort_low_c": now.get("low_c"),
        "comfort_high_c": now.get("high_c"),
        "plan": slots,
    }


def heat_pump_sensor(*, translation_key: str) -> HeatPumpSensorEntityDescription:
    """Return the description of a heat pump's sensor: ``heat_pump_planned_power`` (kW) or ``..._temperature``."""
    power = translation_key == "heat_pump_planned_power"
    unit: str = UnitOfPower.KILO_WATT if power else UnitOfTemperature.CELSIUS
    device_class = SensorDeviceClass.POWER if power else SensorDeviceClass.TEMPERATURE
    value_fn = heat_pump_power if power else heat_pump_temperature
    precision = 2 if power else 1
    return HeatPumpSensorEntityDescription(
        key=translation_key,
        translation_key=translation_key,
        device_class=device_class,
        state_class=SensorStateClass.MEASUREMENT,
        native_unit_of_measurement=unit,
        suggested_display_precision=precision,
        value_fn=value_fn,
    )


def async_add_heat_pump_sensors(
    entry: AgenticHemsConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
    descriptions: Iterable[HeatPumpSensorEntityDescription],
) -> None:
    """Add each heat pump's sensors (on its own device, under its subentry) when the entry plans the home."""
    if (home := entry.runtime_data.home) is None:
        return
    descriptions = tuple(descriptions)
    for hp in home.config.heat_pumps:
        async_add_entities(
            (HeatPumpSensor(entry, home, description, hp) for description in descriptions),
            config_subentry_id=hp.subentry_id,
        )


class HeatPumpSensor(SensorEntity):
    """A heat pump's planned power or temperature now; the per-slot plan is an unrecorded attribute."""

    _attr_has_entity_name = True
    _attr_should_poll = False
    _unrecorded_attributes = frozenset({"plan"})
    entity_description: HeatPumpSensorEntityDescription

    def __init__(
        self,
        entry: AgenticHemsConfigEntry,
        home: HomePlanManager,
        description: HeatPumpSensorEntityDescription,
        heat_pump: HeatPumpConfig,
    ) -> None:
        """Attach to the heat pump's own device."""
        self.entity_description = description
        self.home = home
        self.heat_pump = heat_pump
        self._attr_unique_id = f"{heat_pump.subentry_id}_{description.key}"
        self._attr_device_info = DeviceInfo(
            identifiers={(DOMAIN, heat_pump.subentry_id)},
            name=heat_pump.name,
            manufacturer="Agentic HEMS",
            model="Heat pump",
            entry_type=DeviceEntryType.SERVICE,
            **via_entry_device(entry),
        )

    @property
    def native_value(self) -> StateType:
        """The description's value."""
        return self.entity_description.value_fn(self.home, self.heat_pump)

    @property
    def extra_state_attributes(self) -> dict[str, Any] | None:
        """The reason and band now, and the per-slot plan."""
        return heat_pump_attributes(self.home, self.heat_pump)

    async def async_added_to_hass(self) -> None:
        """Follow the plan."""
        await super().async_added_to_hass()
        self.async_on_remove(self.home.async_add_listener(self.async_write_ha_state))
