"""The whole-home plan's forms: the battery subentry flow and the options step "home", against HA's flow managers.

A battery added or changed through the form is what the home plan manager plans with after the reload; the options
the step stores are what ``home_config`` reads back.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import voluptuous as vol
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockModule, mock_integration, mock_platform

from homeassistant.config_entries import SOURCE_USER, ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType

from custom_components.agentic_hems.planning.home_config import home_config

from .conftest import APPLIANCES

TRANSLATIONS = Path(__file__).parents[2] / "custom_components" / "agentic_hems" / "translations"
FORM = {
    "name": "Garage battery", "capacity_kwh": 12.5, "charge_kw": 4.0, "discharge_kw": 3.5, "soc_min_pct": 10,
    "soc_max_pct": 90, "reserve_pct": 20, "soc_entity": "sensor.garage_battery_soc",
    "control_entity": "select.garage_battery_mode", "charge_option": " Force charge ",
    "discharge_option": "Force discharge", "idle_option": "Standby",
}
# What the subentry stores for FORM, written out by hand: numbers as floats, the defaults filled in, the three
# option fields as control_modes.
STORED = {
    "name": "Garage battery", "capacity_kwh": 12.5, "charge_kw": 4.0, "discharge_kw": 3.5, "soc_min_pct": 10.0,
    "soc_max_pct": 90.0, "reserve_pct": 20.0, "charge_efficiency": 0.95, "discharge_efficiency": 0.95,
    "wear_cost": 0.0, "soc_entity": "sensor.garage_battery_soc", "control_entity": "select.garage_battery_mode",
    "control_modes": {"charge": "Force charge", "discharge": "Force discharge", "idle": "Standby"},
}


def error_text(lang: str, reason: str) -> str:
    """The battery form's error text of ``reason`` in ``lang``."""
    strings = json.loads((TRANSLATIONS / f"{lang}.json").read_text(encoding="utf-8"))
    return str(strings["config_subentries"]["battery"]["error"][reason])


async def add_battery(hass: HomeAssistant, entry: MockConfigEntry, user_input: dict[str, Any]) -> dict[str, Any]:
    """Open the add-battery form and submit ``user_input``."""
    result = await hass.config_entries.subentries.async_init((entry.entry_id, "battery"), context={"source": SOURCE_USER})
    assert result["type"] is FlowResultType.FORM and result["step_id"] == "user"
    return await hass.config_entries.subentries.async_configure(result["flow_id"], user_input)


def batteries(entry: MockConfigEntry) -> dict[str, dict[str, Any]]:
    """The entry's battery subentries' data by title."""
    return {s.title: dict(s.data) for s in entry.subentries.values() if s.subentry_type == "battery"}


async def test_an_added_battery_is_planned_after_the_reload(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """Without a battery or PV forecast there is no home plan; the form's battery is stored and then planned."""
    assert loaded_entry.runtime_data.home is None
    hass.states.async_set("sensor.garage_battery_soc", "40", {"unit_of_measurement": "%", "device_class": "battery"})
    result = await add_battery(hass, loaded_entry, FORM)
    assert result["type"] is FlowResultType.CREATE_ENTRY and result["title"] == "Garage battery"
    assert result["data"] == STORED
    await hass.async_block_till_done(wait_background_tasks=True)

    assert batteries(loaded_entry) == {"Garage battery": STORED}
    assert loaded_entry.state is ConfigEntryState.LOADED
    manager = loaded_entry.runtime_data.home
    (battery,) = manager.config.batteries  # no home plan: AttributeError on None
    assert (battery.capacity_kwh, battery.charge_kw, battery.discharge_kw) == (12.5, 4.0, 3.5)
    assert (battery.soc_min_pct, battery.soc_max_pct, battery.reserve_pct) == (10.0, 90.0, 20.0)
    assert battery.control_modes == STORED["control_modes"]
    assert manager.config.control_entities() == {"select.garage_battery_mode"}


LOFT_SOC = "sensor.loft_battery_soc"  # a second battery's own state of charge sensor
NUMBER_ONLY = {k: v for k, v in FORM.items() if k not in ("control_entity", "charge_option", "discharge_option",
                                                          "idle_option")}


@pytest.mark.parametrize(
    ("changes", "errors"),
    [
        ({"soc_min_pct": 80, "soc_max_pct": 20}, {"soc_max_pct": "soc_max_below_min"}),
        ({"soc_max_pct": 80, "reserve_pct": 85}, {"reserve_pct": "reserve_above_max"}),
        ({"capacity_kwh": 0, "discharge_kw": -1}, {"capacity_kwh": "capacity_range", "discharge_kw": "power_range"}),
        # a battery of 1,000,000,000 kWh is not a home's (stored, it would cut the plan's cost by 85 %)
        ({"capacity_kwh": 1e9, "charge_kw": 1e6}, {"capacity_kwh": "capacity_range", "charge_kw": "power_range"}),
        ({"capacity_kwh": 250.01, "charge_kw": 50.01}, {"capacity_kwh": "capacity_range", "charge_kw": "power_range"}),
        ({"capacity_kwh": float("nan")}, {"capacity_kwh": "capacity_range"}),
        ({"soc_min_pct": 120, "soc_max_pct": 150}, {"soc_min_pct": "percent_range", "soc_max_pct": "percent_range"}),
        ({"charge_efficiency": 1.5, "discharge_efficiency": 0}, {"charge_efficiency": "efficiency_range",
                                                                 "discharge_efficiency": "efficiency_range"}),
        ({"wear_cost": -0.01}, {"wear_cost": "wear_cost_range"}),
        ({"charge_efficiency": 0.49}, {"charge_efficiency": "efficiency_range"}),
        ({"name": "   "}, {"name": "name_empty"}),
        ({"control_entity": "select.garage_battery_mode", "idle_option": "Standby"},
         {"control_entity": "select_needs_modes"}),
    ],
    ids=["min-above-max", "reserve-above-max", "not-positive", "absurd", "just-above", "nan", "percent-over-100",
         "efficiency", "wear", "efficiency-below-half", "no-name", "select-without-modes"],
)
async def test_bad_battery_values_are_field_errors(
    hass: HomeAssistant, changes: dict[str, Any], errors: dict[str, str]
) -> None:
    """Each bad value is refused on its own field with a text in English and German; nothing is stored and the typed
    values are shown again."""
    from .conftest import sample_entry  # noqa: PLC0415 - the entry without set-up, as the appliance tests use it

    entry = sample_entry()
    entry.add_to_hass(hass)
    result = await add_battery(hass, entry, {**NUMBER_ONLY, **changes})
    assert result["type"] is FlowResultType.FORM and result["step_id"] == "user"
    assert result["errors"] == errors
    assert all(error_text(lang, reason) for lang in ("en", "de") for reason in errors.values())
    suggested = {str(k): (k.description or {}).get("suggested_value") for k in result["data_schema"].schema}
    typed = {**NUMBER_ONLY, **changes}["capacity_kwh"]
    assert suggested["capacity_kwh"] == typed or typed != typed  # NaN is not equal to itself
    assert sorted(entry.subentries) == sorted(APPLIANCES)


async def test_a_number_control_needs_no_modes_and_stores_none(hass: HomeAssistant) -> None:
    """An input_number setpoint: option names typed anyway are not stored (they only matter for a select)."""
    from .conftest import sample_entry  # noqa: PLC0415

    entry = sample_entry()
    entry.add_to_hass(hass)
    result = await add_battery(hass, entry, {**FORM, "control_entity": "input_number.garage_battery_power"})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"] == {**STORED, "control_entity": "input_number.garage_battery_power", "control_modes": {}}
    result = await add_battery(hass, entry, {**NUMBER_ONLY, "name": "Loft battery", "soc_entity": LOFT_SOC})
    assert result["data"]["control_entity"] is None and result["data"]["control_modes"] == {}


async def test_reconfigure_changes_the_capacity_the_plan_uses(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """The form starts from the stored battery (modes as the three option fields); another battery's name is refused,
    its own is not; the new capacity is planned after the reload."""
    hass.states.async_set("sensor.garage_battery_soc", "40", {"unit_of_measurement": "%"})
    hass.states.async_set(LOFT_SOC, "60", {"unit_of_measurement": "%"})
    await add_battery(hass, loaded_entry, FORM)
    await add_battery(hass, loaded_entry, {**NUMBER_ONLY, "name": "Loft battery", "soc_entity": LOFT_SOC})
    await hass.async_block_till_done(wait_background_tasks=True)
    (garage,) = [s for s in loaded_entry.subentries.values() if s.title == "Garage battery"]

    result = await loaded_entry.start_subentry_reconfigure_flow(hass, garage.subentry_id)
    assert result["type"] is FlowResultType.FORM and result["step_id"] == "reconfigure"
    suggested = {str(k): (k.description or {}).get("suggested_value") for k in result["data_schema"].schema}
    assert suggested == {**FORM, "soc_min_pct": 10.0, "soc_max_pct": 90.0, "reserve_pct": 20.0,
                         "charge_option": "Force charge", "charge_efficiency": 0.95, "discharge_efficiency": 0.95,
                         "wear_cost": 0.0, "phase": "three-phase", "power_setpoint_entity": None}
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], {**FORM, "name": "LOFT battery"})
    assert result["type"] is FlowResultType.FORM and result["errors"] == {"name": "name_exists"}
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], {**FORM, "name": "Garage Battery", "capacity_kwh": 20}
    )
    assert result["type"] is FlowResultType.ABORT and result["reason"] == "reconfigure_successful"
    await hass.async_block_till_done(wait_background_tasks=True)

    assert loaded_entry.subentries[garage.subentry_id].title == "Garage Battery"
    assert loaded_entry.subentries[garage.subentry_id].data["capacity_kwh"] == 20.0
    capacity = {b.name: b.capacity_kwh for b in loaded_entry.runtime_data.home.config.batteries}
    assert capacity == {"Garage Battery": 20.0, "Loft battery": 12.5}


def forecast_integrations(hass: HomeAssistant) -> dict[str, MockConfigEntry]:
    """Loaded entries of a solar forecast integration (an energy platform with a forecast) and of one without."""
    async def async_get_solar_forecast(hass: HomeAssistant, entry_id: str) -> None:
        return None

    mock_integration(hass, MockModule("solar_test"))
    mock_platform(hass, "solar_test.energy", SimpleNamespace(async_get_solar_forecast=async_get_solar_forecast))
    mock_integration(hass, MockModule("no_forecast"))
    entries = {
        "roof": MockConfigEntry(domain="solar_test", title="Roof", state=ConfigEntryState.LOADED),
        "shed": MockConfigEntry(domain="solar_test", title="Shed", state=ConfigEntryState.NOT_LOADED),
        "other": MockConfigEntry(domain="no_forecast", title="Other", state=ConfigEntryState.LOADED),
    }
    for entry in entries.values():
        entry.add_to_hass(hass)
    return entries


async def open_home_step(hass: HomeAssistant, entry: MockConfigEntry) -> dict[str, Any]:
    """An options flow through init, control and grid with the current values; returns the home form."""
    result = await hass.config_entries.options.async_init(entry.entry_id)
    for step in ("init", "control", "grid"):
        assert result["step_id"] == step
        result = await hass.config_entries.options.async_configure(result["flow_id"], {})
    assert result["type"] is FlowResultType.FORM and result["step_id"] == "home"
    return result


async def finish(hass: HomeAssistant, result: dict[str, Any], home: dict[str, Any]) -> None:
    """Submit ``home`` on the home step, and the tariff and assistant steps as they are."""
    result = await hass.config_entries.options.async_configure(result["flow_id"], home)
    assert result["step_id"] == "tariff"
    result = await hass.config_entries.options.async_configure(result["flow_id"], {})
    assert result["step_id"] == "assistant"
    result = await hass.config_entries.options.async_configure(result["flow_id"], {})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done(wait_background_tasks=True)


async def test_the_home_step_stores_what_home_config_reads(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """The PV forecast choice lists loaded solar forecast entries only; the stored options read back as the plan's
    settings; cleared optional fields are dropped, so their defaults apply again."""
    entries = forecast_integrations(hass)
    result = await open_home_step(hass, loaded_entry)
    schema = {str(k): v for k, v in result["data_schema"].schema.items()}
    assert schema["pv_forecast_entries"].config["options"] == [{"value": entries["roof"].entry_id, "label": "Roof (solar_test)"}]
    home = {
        "pv_forecast_entries": [entries["roof"].entry_id], "pv_forecast_sensor": "sensor.solcast_today",
        "export_price_mode": "spot", "export_fixed_price": 0.07, "export_spot_factor": 0.9, "export_spot_fee": 0.012,
        "export_limit_kw": 4.6, "curtailment_entity": "number.inverter_limit", "battery_control": "automatic",
        "mpc_soc_threshold_pct": 8, "mpc_pv_threshold_kw": 0.75,
    }
    await finish(hass, result, home)
    assert {k: loaded_entry.options[k] for k in home} == home
    config = home_config(hass, loaded_entry)
    assert config.pv_forecast_entries == (entries["roof"].entry_id,)
    assert (config.pv_forecast_sensor, config.curtailment_entity) == ("sensor.solcast_today", "number.inverter_limit")
    assert (config.export_price_mode, config.export_fixed_price, config.export_spot_factor, config.export_spot_fee) == (
        "spot", 0.07, 0.9, 0.012)
    assert (config.export_limit_kw, config.battery_control) == (4.6, "automatic")
    assert (config.mpc_soc_threshold_pct, config.mpc_pv_threshold_kw) == (8.0, 0.75)
    assert loaded_entry.runtime_data.home is not None  # a PV forecast is named: the home plan runs

    entries["roof"].mock_state(hass, ConfigEntryState.NOT_LOADED)
    result = await open_home_step(hass, loaded_entry)
    values = {str(k): (k.description or {}).get("suggested_value") for k in result["data_schema"].schema}
    assert values["pv_forecast_entries"] == [entries["roof"].entry_id]
    options = {str(k): v for k, v in result["data_schema"].schema.items()}["pv_forecast_entries"].config["options"]
    assert options == [{"value": entries["roof"].entry_id, "label": "Roof (solar_test)"}]  # saved: still listed
    cleared = ("pv_forecast_sensor", "export_limit_kw", "curtailment_entity")  # the frontend leaves cleared ones out
    await finish(hass, result, {k: v for k, v in home.items() if k not in cleared} | {"pv_forecast_entries": []})
    assert not {"pv_forecast_entries", "pv_forecast_sensor", "export_limit_kw", "curtailment_entity"} & set(
        loaded_entry.options)
    config = home_config(hass, loaded_entry)
    assert (config.pv_forecast_entries, config.pv_forecast_sensor, config.curtailment_entity) == ((), None, None)
    assert config.export_limit_kw == math.inf and config.export_spot_factor == 0.9
    assert loaded_entry.runtime_data.home is None  # neither battery nor PV forecast


async def test_capacity_and_power_start_empty_and_are_asked_for(hass: HomeAssistant) -> None:
    """The frontend pre-fills a required number with its minimum, so the size fields are optional in the schema
    and a missing one is a field error; the other numbers start at the plan's defaults."""
    from .conftest import sample_entry  # noqa: PLC0415

    entry = sample_entry()
    entry.add_to_hass(hass)
    result = await hass.config_entries.subentries.async_init((entry.entry_id, "battery"), context={"source": SOURCE_USER})
    fields = {str(key): key for key in result["data_schema"].schema}
    assert [name for name in ("capacity_kwh", "charge_kw", "discharge_kw") if fields[name].default is not vol.UNDEFINED
            or isinstance(fields[name], vol.Required)] == []
    defaults = {name: key.default() for name, key in fields.items() if key.default is not vol.UNDEFINED}
    assert defaults == {"soc_min_pct": 0.0, "soc_max_pct": 100.0, "reserve_pct": 0.0, "charge_efficiency": 0.95,
                        "discharge_efficiency": 0.95, "wear_cost": 0.0}
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], {k: v for k, v in NUMBER_ONLY.items() if k not in ("capacity_kwh", "discharge_kw")})
    assert result["errors"] == {"capacity_kwh": "capacity_range", "discharge_kw": "power_range"}
