"""An EV charger with a current setpoint follows the whole-home plan's power and the PV surplus, in a real HA.

The charger has the shape of HA core's wallbox: a charging-current number without a unit (min 6, max 16, step 1 A)
and an on/off charging switch (here input helpers with those attributes). Oracle at each slot boundary: the stored
plan's own kW for the slot, raised by the grid meter's export, turned into amperes by hand (kW x 1000 / (3 x 230 V),
rounded down to whole amperes, at least 6, at most 16).
"""

from __future__ import annotations

from datetime import timedelta
import math
from types import SimpleNamespace
from typing import Any

from freezegun.api import FrozenDateTimeFactory
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    MockModule,
    async_capture_events,
    async_fire_time_changed,
    mock_integration,
    mock_platform,
)

from custom_components.agentic_hems.const import DEFAULT_OPTIONS, DOMAIN
from custom_components.agentic_hems.planning.ev_exec import planned_kw
from custom_components.agentic_hems.scheduling.appliance import Appliance
from homeassistant.config_entries import ConfigSubentryData
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util

from .conftest import APPLIANCES, NOW, sample_entry
from .test_config_flow import add_appliance
from .test_home_plan import BATTERY, solar_wh

CURRENT = "input_number.ev_current"
SWITCH = "input_boolean.ev_charger"
GRID = "sensor.grid_power"
SLOT = timedelta(minutes=15)
EV = {**APPLIANCES["ev"], "energy_kwh": 12.0, "charger_current_entity": CURRENT, "charger_min_a": 6,
      "charger_step_a": 1, "charger_phases": 3, "charger_voltage_v": 230}


def amps(kw: float) -> float:
    """The oracle: whole amperes at or below kW on three phases of 230 V (1e-4 A of noise forgiven), within 6..16 A."""
    return 0.0 if kw <= 1e-3 else min(max(math.floor(kw * 1000 / 690 + 1e-4), 6), 16)


async def _entry(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, ev: dict[str, Any] | None = None, **options: Any
) -> MockConfigEntry:
    await hass.config.async_set_time_zone("Europe/Brussels")
    freezer.move_to(NOW)
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, "input_number", {"input_number": {
        "battery_power": {"min": -5, "max": 5, "step": 0.001, "unit_of_measurement": "kW", "initial": 0},
        "ev_current": {"min": 6, "max": 16, "step": 1, "initial": 6}}})
    hass.states.async_set("sensor.battery_soc", "50", {"unit_of_measurement": "%"})

    async def async_get_solar_forecast(hass: HomeAssistant, entry_id: str) -> dict[str, Any] | None:
        return {"wh_hours": solar_wh(NOW)}

    mock_integration(hass, MockModule("solar_test"))
    mock_platform(hass, "solar_test.energy", SimpleNamespace(async_get_solar_forecast=async_get_solar_forecast))
    solar = MockConfigEntry(domain="solar_test", title="roof")
    solar.add_to_hass(hass)
    assert await async_setup_component(hass, "input_boolean", {"input_boolean": {"ev_charger": {}}})
    hass.states.async_set(GRID, "500", {"unit_of_measurement": "W"})
    subentries = [
        ConfigSubentryData(data=ev or EV, subentry_id="ev", subentry_type="appliance", title="EV charger", unique_id=None),
        ConfigSubentryData(data=BATTERY, subentry_id="battery1", subentry_type="battery", title="Home battery",
                           unique_id=None),
    ]
    entry = MockConfigEntry(
        domain=DOMAIN, title="Sample prices", unique_id="sample", data={"price_source": "sample"},
        options={**DEFAULT_OPTIONS, "pv_forecast_entries": [solar.entry_id], "export_price_mode": "spot",
                 "export_spot_factor": 0.8, "export_spot_fee": 0.01, "execution_wait_s": 1,
                 "battery_control": "automatic", "grid_power_entity": GRID, **options},
        subentries_data=subentries, version=1, minor_version=1,
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)
    await entry.runtime_data.control.async_set_allow_control(True)
    return entry


async def _boundary(hass: HomeAssistant, freezer: FrozenDateTimeFactory, at: Any) -> None:
    freezer.move_to(at)
    async_fire_time_changed(hass, at)
    await hass.async_block_till_done(wait_background_tasks=True)


async def test_the_current_follows_the_plans_power_and_the_pv_surplus_over_the_night(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """Over 40 slots: the switch is on exactly where the plan charges, the current is the oracle's for the planned kW
    (plus 3 kW exported in two charging slots), and the plan's power varies under a 7 kW fuse."""
    entry = await _entry(hass, freezer, power_limit_kw=7.0)
    planner = entry.runtime_data.planner
    events = async_capture_events(hass, "call_service")
    first = dt_util.as_utc(NOW).replace(minute=15, second=0)
    seen: list[tuple[float, float]] = []
    raised = 0
    for k in range(40):
        moment = first + k * SLOT
        plan = planner.states["ev"].plan
        kw = planned_kw(plan, moment)
        export = 3.0 if kw > 0 and raised < 2 and kw + 3.0 <= 11.0 else 0.0
        raised += export > 0
        hass.states.async_set(GRID, str(-1000 * export) if export else "500", {"unit_of_measurement": "W"})
        await _boundary(hass, freezer, moment)
        assert planner.states["ev"].plan is plan or kw == 0  # a charging plan is the scheduler's, not replanned
        assert hass.states.get(SWITCH).state == ("on" if kw > 0 else "off"), moment
        if kw > 0:
            assert float(hass.states.get(CURRENT).state) == amps(kw + export), (moment, kw, export)
            seen.append((kw, export))
    assert raised == 2
    assert len({round(kw, 3) for kw, _ in seen}) >= 2, seen  # the plan's power varies
    assert min(kw for kw, _ in seen) >= 6 * 0.69 - 1e-6  # never planned below the minimum current's power
    sent = [c.data["service_data"]["value"] for c in events
            if c.data["service"] == "set_value" and c.data["service_data"]["entity_id"] == CURRENT]
    assert sent and all(6 <= v <= 16 and v == int(v) for v in sent)


@pytest.mark.parametrize("fault", ["gone", "max_below_minimum"])
async def test_a_charger_that_cannot_take_the_current_stays_off_with_a_trace(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, caplog: pytest.LogCaptureFixture, fault: str
) -> None:
    """The setpoint is gone (the gates find no fresh state) or its max is 5 A (below the 6 A minimum): no start is issued,
    the gates' refusal (gone) and a warning naming the cause stay; nothing is half-done."""
    entry = await _entry(hass, freezer, power_limit_kw=7.0)
    planner = entry.runtime_data.planner
    first = dt_util.as_utc(NOW).replace(minute=15, second=0)
    moment = next(first + k * SLOT for k in range(40) if planned_kw(planner.states["ev"].plan, first + k * SLOT) > 1)
    if fault == "gone":
        hass.states.async_remove(CURRENT)
    else:
        hass.states.async_set(CURRENT, "6", {"min": 0, "max": 5, "step": 1})
    await _boundary(hass, freezer, moment)
    assert hass.states.get(SWITCH).state == "off"
    traces = list(entry.runtime_data.control.traces.values())
    assert not [t for t in traces if t.get("entity_id") == SWITCH]
    refused = [t for t in traces if (t.get("candidate") or {}).get("device_alias") == CURRENT]
    if fault == "gone":
        assert refused and refused[-1]["outcome"] == "blocked" and refused[-1]["failed_gate"] == "freshness"
        assert "the current 10 A was not set (blocked: " in caplog.text
    else:
        assert not refused  # nothing could be sent
        assert "its maximum 5 A is below 6 A" in caplog.text


EV_FORM = {"name": "Wallbox", "kind": "ev_charger", "entity_id": "switch.wallbox_pause_resume", "power_kw": 11.0,
           "energy_kwh": 20.0, "contiguous": False, "earliest_start": "18:00", "deadline": "07:00"}
WALLBOX_CURRENT = "number.wallbox_maximum_charging_current"
STEP = {"charger_current_entity": WALLBOX_CURRENT, "charger_unit": "A", "charger_phases": "3", "charger_min_a": 6,
        "charger_step_a": 1, "charger_voltage_v": 230}


@pytest.mark.parametrize(
    ("change", "attributes", "errors"),
    [
        ({}, {"min": 6, "max": 5}, {"charger_current_entity": "charger_range"}),  # max below the minimum
        ({"charger_unit": "kW"}, {"min": 6, "max": 32}, {"charger_current_entity": "charger_range"}),  # 4.14 kW < 6
        ({"charger_min_a": 16.5}, {"min": 6, "max": 32}, {"charger_min_a": "charger_minimum_above_power"}),  # 11.39 kW
        ({"charger_current_entity": "number.none"}, {}, {"charger_current_entity": "charger_entity_missing"}),
        ({"charger_current_entity": "switch.wallbox_pause_resume"}, {}, {"charger_current_entity": "charger_entity_in_use"}),
        ({"charger_voltage_v": 400}, {"min": 6, "max": 32}, {"charger_voltage_v": "charger_number_out_of_range"}),
        # 6.5 A (0.5 A steps) is off a 1 A setpoint's grid, 4140 W (6 A x 3 x 230 V) off a 100 W one: the Capability
        # gate would refuse each such current at its slot boundary
        ({"charger_step_a": 0.5}, {"min": 6, "max": 32, "step": 1}, {"charger_step_a": "charger_step_grid"}),
        ({"charger_unit": "W"}, {"min": 0, "max": 22000, "step": 100}, {"charger_step_a": "charger_step_grid"}),
        ({"charger_min_a": 6.5}, {"min": 6, "max": 32, "step": 1}, {"charger_step_a": "charger_step_grid"}),
    ],
)
async def test_the_charger_step_refuses_what_cannot_drive_the_charger(
    hass: HomeAssistant, change: dict[str, Any], attributes: dict[str, Any], errors: dict[str, str]
) -> None:
    """A Wallbox-shaped current number (no unit, min 6, max from the charger) is checked against the profile."""
    entry = sample_entry()
    entry.add_to_hass(hass)
    hass.states.async_set(WALLBOX_CURRENT, "16", attributes)
    result = await add_appliance(hass, entry, EV_FORM)
    assert result["type"] is FlowResultType.FORM and result["step_id"] == "charger"
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], {**STEP, **change})
    assert result["type"] is FlowResultType.FORM and result["errors"] == errors


async def test_the_charger_step_stores_the_profile_or_nothing(hass: HomeAssistant) -> None:
    """With a setpoint the profile's fields are stored (phases as a number) and read back; without one, none."""
    entry = sample_entry()
    entry.add_to_hass(hass)
    hass.states.async_set(WALLBOX_CURRENT, "16", {"min": 6, "max": 32, "step": 1})
    result = await add_appliance(hass, entry, EV_FORM)
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], STEP)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"]["charger_phases"] == 3 and result["data"]["charger_current_entity"] == WALLBOX_CURRENT
    profile = Appliance.from_config("x", result["data"]).charger
    assert profile is not None and profile.min_kw == pytest.approx(4.14)
    watts = {"charger_current_entity": "number.watts", "charger_unit": "W"}  # 4140, 4830, ... W: on a 1 W grid
    hass.states.async_set("number.watts", "0", {"min": 0, "max": 22000, "step": 1, "unit_of_measurement": "W"})
    result = await add_appliance(hass, entry, {**EV_FORM, "name": "Watts", "entity_id": "switch.watts"})
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], {**STEP, **watts})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    plain = {k: v for k, v in STEP.items() if k != "charger_current_entity"}
    result = await add_appliance(hass, entry, {**EV_FORM, "name": "Second", "entity_id": "switch.second"})
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], plain)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert not [k for k in result["data"] if k.startswith("charger_")]


async def test_without_a_whole_home_plan_the_appliance_planners_ev_is_followed(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """No battery, no PV forecast: the appliance planner's plan (full slots and a partial one) drives the current."""
    await hass.config.async_set_time_zone("Europe/Brussels")
    freezer.move_to(NOW)
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, "input_number", {"input_number": {
        "ev_current": {"min": 6, "max": 16, "step": 1, "initial": 6}}})
    assert await async_setup_component(hass, "input_boolean", {"input_boolean": {"ev_charger": {}}})
    data = {**EV, "energy_kwh": 12.5}  # 4 slots at 11 kW and one at 6 kW
    entry = MockConfigEntry(
        domain=DOMAIN, title="Sample prices", unique_id="sample", data={"price_source": "sample"},
        options={**DEFAULT_OPTIONS, "execution_wait_s": 1},
        subentries_data=[ConfigSubentryData(data=data, subentry_id="ev", subentry_type="appliance",
                                            title="EV charger", unique_id=None)],
        version=1, minor_version=1,
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)
    await entry.runtime_data.control.async_set_allow_control(True)
    assert entry.runtime_data.home is None
    planner = entry.runtime_data.planner
    assert planner.states["ev"].plan.method != "home_milp"
    first = dt_util.as_utc(NOW).replace(minute=15, second=0)
    charged = []
    for k in range(44):
        moment = first + k * SLOT
        kw = planned_kw(planner.states["ev"].plan, moment)
        await _boundary(hass, freezer, moment)
        assert hass.states.get(SWITCH).state == ("on" if kw > 0 else "off"), moment
        if kw > 0:
            assert float(hass.states.get(CURRENT).state) == amps(kw), (moment, kw)
            charged.append(kw)
    assert len(set(charged)) >= 2  # a partial slot and full ones: two currents
    assert sum(charged) * 0.25 == pytest.approx(12.5)


async def test_with_device_control_off_the_current_and_the_start_are_dry_runs(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, caplog: pytest.LogCaptureFixture
) -> None:
    """Device control off: the slot's current and start both end as dry runs, in that order; nothing is set."""
    entry = await _entry(hass, freezer, power_limit_kw=7.0)
    await entry.runtime_data.control.async_set_allow_control(False)
    planner = entry.runtime_data.planner
    first = dt_util.as_utc(NOW).replace(minute=15, second=0)
    moment = next(first + k * SLOT for k in range(40) if planned_kw(planner.states["ev"].plan, first + k * SLOT) > 1)
    await _boundary(hass, freezer, moment)
    ours = [t for t in entry.runtime_data.control.traces.values()
            if (t.get("candidate") or {}).get("device_alias") in (CURRENT, SWITCH)]
    assert [(t["candidate"]["intent"], t["outcome"]) for t in ours] == [("set_value", "dry_run"), ("start", "dry_run")]
    assert hass.states.get(SWITCH).state == "off" and hass.states.get(CURRENT).state == "6.0"
    assert "not charging" not in caplog.text


async def test_reconfiguring_a_charger_offers_its_stored_setpoint_and_keeps_it(hass: HomeAssistant) -> None:
    """The reconfigure step suggests the stored setpoint and limits; submitting them keeps the profile."""
    stored = {**EV_FORM, "earliest_start": "18:00:00", "deadline": "07:00:00", **STEP, "charger_phases": 1,
              "charger_min_a": 8}
    entry = MockConfigEntry(
        domain=DOMAIN, title="Sample prices", unique_id="sample", data={"price_source": "sample"},
        options=dict(DEFAULT_OPTIONS),
        subentries_data=[ConfigSubentryData(data=stored, subentry_id="wb", subentry_type="appliance", title="Wallbox",
                                            unique_id=None)],
        version=1, minor_version=1,
    )
    entry.add_to_hass(hass)
    hass.states.async_set(WALLBOX_CURRENT, "16", {"min": 6, "max": 32, "step": 1})
    result = await entry.start_subentry_reconfigure_flow(hass, "wb")
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], {**EV_FORM, "power_kw": 7.4})
    assert result["step_id"] == "reconfigure_charger"
    suggested = {str(key): key.description["suggested_value"] for key in result["data_schema"].schema
                 if key.description and "suggested_value" in key.description}
    assert suggested["charger_current_entity"] == WALLBOX_CURRENT
    assert suggested["charger_phases"] == "1" and suggested["charger_min_a"] == 8
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], suggested)
    assert result["reason"] == "reconfigure_successful"
    data = entry.subentries["wb"].data
    assert data["power_kw"] == 7.4 and data["charger_phases"] == 1 and data["charger_min_a"] == 8
