"""A hot-water tank's heat pump controlled by a water heater in a real Home Assistant: the form offers it for a tank
only, and the plan sets its target temperature through the gates."""

from __future__ import annotations

from typing import Any

from freezegun.api import FrozenDateTimeFactory
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_capture_events,
    setup_test_component_platform,
)

from homeassistant.components.water_heater import WaterHeaterEntity, WaterHeaterEntityFeature
from homeassistant.const import UnitOfTemperature
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.setup import async_setup_component
from homeassistant.util.unit_system import US_CUSTOMARY_SYSTEM

from custom_components.agentic_hems.planning.heat_exec import temperature_target

from .conftest import NOW, sample_entry
from .test_heat_pump import (
    DEVICE,
    HEAT_ID,
    HEAT_PUMP,
    MODEL,
    TANK,
    _heated_house,
    add_heat_pump,
    boundary,
    device_step,
    error_text,
    heat_pumps,
    heated_entry,
    open_form,
)

HEATER = "water_heater.tank_heat_pump"
LOW_C, HIGH_C = 40.0, 60.0  # the water heater's own range


class TankHeatPump(WaterHeaterEntity):
    """A heat pump water heater whose integration pushes its state: target 40-60 °C in 0.5 K steps."""

    _attr_should_poll = False
    _attr_name = "Tank heat pump"
    _attr_unique_id = "tank_heat_pump"
    _attr_supported_features = WaterHeaterEntityFeature.TARGET_TEMPERATURE
    _attr_temperature_unit = UnitOfTemperature.CELSIUS
    _attr_min_temp, _attr_max_temp = LOW_C, HIGH_C
    _attr_target_temperature_step = 0.5
    _attr_current_operation = "heat_pump"

    def __init__(self) -> None:
        self._attr_target_temperature = 42.0
        self._attr_current_temperature = 50.0

    async def async_set_temperature(self, **kwargs: Any) -> None:
        self._attr_target_temperature = kwargs["temperature"]
        self.async_write_ha_state()


async def _water_heater(hass: HomeAssistant) -> None:
    setup_test_component_platform(hass, "water_heater", [TankHeatPump()])
    assert await async_setup_component(hass, "water_heater", {"water_heater": {"platform": "test"}})
    await hass.async_block_till_done()
    assert hass.states.get(HEATER) is not None


def control_domains(result: dict[str, Any]) -> list[str]:
    """The domains the device step's control entity picker offers."""
    (selector,) = [v for k, v in result["data_schema"].schema.items() if str(k) == "control_entity"]
    return list(selector.config["domain"])


async def test_the_form_takes_a_water_heater_for_a_tank_only(hass: HomeAssistant) -> None:
    await _water_heater(hass)
    entry = sample_entry()
    entry.add_to_hass(hass)
    flow_id = (await open_form(hass, entry))["flow_id"]
    space = await hass.config_entries.subentries.async_configure(flow_id, {"name": "House", "store": "space_heating"})
    assert control_domains(space) == ["climate", "switch", "input_boolean"]
    result = await hass.config_entries.subentries.async_configure(
        flow_id, {k: v for k, v in {**DEVICE, "control_entity": HEATER}.items() if k not in ("name", "store")})
    assert (result["step_id"], result["errors"]) == ("space_heating", {"control_entity": "water_heater_needs_tank"})
    texts = {lang: error_text(lang, "water_heater_needs_tank") for lang in ("en", "de")}
    assert "water heater" in texts["en"] and "Warmwasserbereiter" in texts["de"]
    tank_step = await hass.config_entries.subentries.async_configure(
        (await open_form(hass, entry))["flow_id"], {"name": "Tank", "store": "hot_water"})
    assert control_domains(tank_step) == ["climate", "switch", "input_boolean", "water_heater"]
    result = await add_heat_pump(hass, entry, {**TANK, "control_entity": HEATER}, MODEL)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert heat_pumps(entry)["Tank"]["control_entity"] == HEATER
    refused = await device_step(hass, (await open_form(hass, entry))["flow_id"],
                                {**TANK, "name": "Other", "control_entity": "light.kitchen"})
    assert refused["errors"] == {"control_entity": "entity_invalid"}  # a domain the plan cannot set


async def _tank_home(hass: HomeAssistant) -> MockConfigEntry:
    """The sample entry with a hot-water tank heat pump on the water heater (its sensor at 50 °C), in automatic mode
    with device control on."""
    hass.states.async_set("sensor.tank", "50", {"unit_of_measurement": "°C", "device_class": "temperature"})
    tank = {**HEAT_PUMP, "name": "Tank", "store": "hot_water", "control_entity": HEATER,
            "temperature_entity": "sensor.tank", "max_kw": 2.0, "ua_w_per_k": 3.0, "capacity_kwh_per_k": 0.25,
            "day_low_c": 45.0, "day_high_c": 55.0, "night_low_c": 45.0, "night_high_c": 55.0, "room_temp_c": 18.0,
            "hot_water_kwh": 6.0, "hot_water_hours": [7, 19, 20]}
    entry: MockConfigEntry = heated_entry(tank, battery_control="automatic")
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)
    await entry.runtime_data.control.async_set_allow_control(True)
    return entry


async def test_automatic_mode_sets_the_water_heaters_planned_target(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """At a slot boundary the executor sets the water heater to the plan's temperature at the slot's end (while it
    runs the heat pump) or the comfort floor, on its 0.5 K step within its 40-60 °C; the gates execute it."""
    await hass.config.async_set_time_zone("Europe/Brussels")
    freezer.move_to(NOW)
    await _heated_house(hass)
    await _water_heater(hass)
    entry = await _tank_home(hass)
    events = async_capture_events(hass, "call_service")
    slot = await boundary(hass, freezer)
    result = entry.runtime_data.home.result
    plan = result.plan
    assert plan is not None and plan.start == slot
    running = plan.heat_kw[HEAT_ID][0] > 1e-3
    wanted = round(plan.temp_c[HEAT_ID][1] * 2) / 2 if running else result.inputs.heat_pumps[0].comfort_low_c[0]
    wanted = min(max(wanted, LOW_C), HIGH_C)
    calls = [e.data["service_data"] for e in events
             if (e.data["domain"], e.data["service"]) == ("water_heater", "set_temperature")]
    assert calls == [{"entity_id": HEATER, "temperature": pytest.approx(wanted)}]
    assert hass.states.get(HEATER).attributes["temperature"] == pytest.approx(wanted)
    (trace,) = [t for t in entry.runtime_data.control.traces.values()
                if str(t.get("raw_input", "")).startswith(f"set {HEATER}") and slot.isoformat() in t["raw_input"]]
    assert trace["outcome"] == "executed" and trace["source_agent"] == "scheduler"
    assert trace["command"]["risk_level"] == 2 and trace["command"]["backend_action"] == "water_heater.set_temperature"


async def test_an_imperial_home_sets_the_planned_celsius_in_fahrenheit(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """HA in US customary units: the water heater's range and target are °F in its state and in the service call
    (HA converts them to the device's °C). The plan's °C target must reach the device as that temperature, not as
    the same number of °F (clamped to the range's 104 °F floor, 40 °C, whatever the plan asked)."""
    hass.config.units = US_CUSTOMARY_SYSTEM
    await hass.config.async_set_time_zone("Europe/Brussels")
    freezer.move_to(NOW)
    await _heated_house(hass)
    heater = TankHeatPump()
    setup_test_component_platform(hass, "water_heater", [heater])
    assert await async_setup_component(hass, "water_heater", {"water_heater": {"platform": "test"}})
    await hass.async_block_till_done()
    assert hass.states.get(HEATER).attributes["min_temp"] == pytest.approx(104.0)  # 40 °C
    entry = await _tank_home(hass)
    slot = await boundary(hass, freezer)
    result = entry.runtime_data.home.result
    plan = result.plan
    assert plan is not None and plan.start == slot
    running = plan.heat_kw[HEAT_ID][0] > 1e-3
    wanted_c = plan.temp_c[HEAT_ID][1] if running else result.inputs.heat_pumps[0].comfort_low_c[0]
    assert wanted_c >= 44.0  # the tank's band is 45-55 °C: well above the range's floor
    # the device's own (°C) target: the plan's, on a 0.5 °F step (HA's unit), so within 0.3 K
    assert heater.target_temperature == pytest.approx(wanted_c, abs=0.3)
    state_f = hass.states.get(HEATER).attributes["temperature"]
    assert state_f == pytest.approx(wanted_c * 1.8 + 32, abs=0.5)


@pytest.mark.parametrize(("attributes", "expected"), [
    ({"min_temp": 40, "max_temp": 60, "target_temp_step": 1}, 47.0),  # well formed: 46.6 rounded to a whole degree
    ({"min_temp": "cold", "max_temp": 60, "target_temp_step": 1}, 47.0),  # a text range end is HA's default (43.3)
    ({"min_temp": 50, "max_temp": float("nan"), "target_temp_step": "x"}, 50.0),  # NaN: default 60 °C; step 0.5
    ({"min_temp": 70, "max_temp": 40, "target_temp_step": 0}, 46.5),  # low above high: defaults; step 0: 0.5
    ({"min_temp": True, "max_temp": [60], "target_temp_step": float("inf")}, 46.5),
])
async def test_a_malformed_range_or_step_counts_as_missing(
    hass: HomeAssistant, attributes: dict[str, Any], expected: float
) -> None:
    """A water heater whose min_temp, max_temp or target_temp_step is not a finite number (or whose range is
    inverted) gets HA's defaults for them (43.3-60 °C, a 0.5 step) instead of a TypeError in every replan."""
    hass.states.async_set(HEATER, "heat_pump", attributes)
    assert temperature_target(hass, HEATER, 46.6) == expected
