"""The whole-home plan's heat pumps in a real Home Assistant: the subentry form (errors, a fit, reconfigure), the
config it stores and reads back, the plan's inputs, the commands through the gates and the heat pump's sensors.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import replace
from datetime import datetime, timedelta
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest.mock import patch
from zoneinfo import ZoneInfo

from freezegun.api import FrozenDateTimeFactory
import numpy as np
import pytest
from pytest_homeassistant_custom_component.components.recorder.common import async_wait_recording_done
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_capture_events,
    async_fire_time_changed,
)

from homeassistant.auth.models import User
from homeassistant.components.recorder import Recorder
from homeassistant.config_entries import SOURCE_RECONFIGURE, SOURCE_USER, ConfigSubentry, ConfigSubentryData
from homeassistant.core import Context, HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import entity_registry as er, issue_registry as ir
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util

from custom_components.agentic_hems.const import DEFAULT_OPTIONS, DOMAIN
from custom_components.agentic_hems.grid.catalog import GENERATE_EXPLANATION
from custom_components.agentic_hems.grid.explain_home import explain_home
from custom_components.agentic_hems.planning.heat_config import parse_heat_pump
from custom_components.agentic_hems.planning.heat_inputs import async_fit, async_run_state
from custom_components.agentic_hems.planning.heat_view import reasons
from custom_components.agentic_hems.planning.home_config import home_config
from custom_components.agentic_hems.planning.home_manager import planned_temp_c
from custom_components.agentic_hems.planning.home_view import home_payload
from custom_components.agentic_hems.scheduling.home import plan_home
from custom_components.agentic_hems.scheduling.thermal import fit_thermal

from .conftest import APPLIANCES, NOW, sample_entry
from .test_thermal_source import record

from scheduling.thermal_house import house  # tests/ is on the path: the simulated house of the core's tests

TRANSLATIONS = Path(__file__).parents[2] / "custom_components" / "agentic_hems" / "translations"
DEVICE = {
    "name": "Heat pump", "store": "space_heating", "control_entity": "climate.heat_pump",
    "temperature_entity": "sensor.living_room_temperature", "weather_entity": "weather.home",
    "power_entity": "sensor.heat_pump_power", "outdoor_entity": "sensor.outdoor_temperature", "min_kw": 0.5,
    "max_kw": 3.0, "min_run_min": 30, "min_off_min": 15, "day_start": "06:00:00", "day_end": "22:00:00", "day_low_c": 20, "day_high_c": 22, "night_low_c": 17,
    "night_high_c": 22, "phase": "L2",
}
# The first step's fields; the rest of DEVICE goes to the store's device step.
FIRST = ("name", "store")
TANK = {**DEVICE, "name": "Tank", "store": "hot_water", "control_entity": "switch.boost",
        "temperature_entity": "sensor.tank", "room_temp_c": 15, "hot_water_kwh": 6, "hot_water_hours": ["7", "19", "20"]}
MODEL = {
    "cop_mode": "points", "cop_outdoor_1": -7, "cop_1": 2.5, "cop_outdoor_2": 7, "cop_2": 4.0, "carnot_fraction": 0.45,
    "flow_temp_c": 35, "thermal_model": "manual", "ua_w_per_k": 150, "capacity_kwh_per_k": 8,
}
# What the subentry stores for DEVICE and MODEL, written out by hand.
STORED = {
    "name": "Heat pump", "store": "space_heating", "control_entity": "climate.heat_pump",
    "temperature_entity": "sensor.living_room_temperature", "weather_entity": "weather.home",
    "power_entity": "sensor.heat_pump_power", "outdoor_entity": "sensor.outdoor_temperature", "min_kw": 0.5,
    "max_kw": 3.0, "min_run_min": 30.0, "min_off_min": 15.0,
    "day_start": "06:00:00", "day_end": "22:00:00", "day_low_c": 20.0, "day_high_c": 22.0, "night_low_c": 17.0,
    "night_high_c": 22.0, "room_temp_c": 20.0, "hot_water_kwh": 0.0, "hot_water_hours": [], "phase": "L2",
    "cop_mode": "points", "cop_points": [(-7.0, 2.5), (7.0, 4.0)], "carnot_fraction": 0.45, "flow_temp_c": 35.0,
    "thermal_model": "manual", "ua_w_per_k": 150.0, "capacity_kwh_per_k": 8.0, "fit_rmse_c": None,
    "gains_kw": 0.0, "solar_gain": 0.0, "solar_entity": None,
}


def error_text(lang: str, reason: str) -> str:
    """The heat pump form's error text of ``reason`` in ``lang``."""
    strings = json.loads((TRANSLATIONS / f"{lang}.json").read_text(encoding="utf-8"))
    return str(strings["config_subentries"]["heat_pump"]["error"][reason])


async def open_form(hass: HomeAssistant, entry: MockConfigEntry) -> dict[str, Any]:
    result = await hass.config_entries.subentries.async_init((entry.entry_id, "heat_pump"), context={"source": SOURCE_USER})
    assert result["type"] is FlowResultType.FORM and result["step_id"] == "user"
    return result


def fields(result: dict[str, Any]) -> dict[str, Any]:
    """A form's fields and their suggested values (None: no suggestion)."""
    return {str(k): (k.description or {}).get("suggested_value") for k in result["data_schema"].schema}


async def device_step(hass: HomeAssistant, flow_id: str, device: dict[str, Any]) -> dict[str, Any]:
    """Submit ``device``'s name and store, then, on the store's step, the rest of it; return the result."""
    result = await hass.config_entries.subentries.async_configure(flow_id, {k: device[k] for k in FIRST})
    assert result["type"] is FlowResultType.FORM and result["step_id"] == device["store"], result.get("errors")
    return await hass.config_entries.subentries.async_configure(
        flow_id, {k: v for k, v in device.items() if k not in FIRST}
    )


async def add_heat_pump(
    hass: HomeAssistant, entry: MockConfigEntry, device: dict[str, Any], model: dict[str, Any]
) -> dict[str, Any]:
    """Fill in the three steps of the add-heat-pump form."""
    result = await device_step(hass, (await open_form(hass, entry))["flow_id"], device)
    assert result["type"] is FlowResultType.FORM and result["step_id"] == "model", result.get("errors")
    return await hass.config_entries.subentries.async_configure(result["flow_id"], model)


def heat_pumps(entry: MockConfigEntry) -> dict[str, dict[str, Any]]:
    return {s.title: dict(s.data) for s in entry.subentries.values() if s.subentry_type == "heat_pump"}


async def test_an_added_heat_pump_is_stored_and_read_back(hass: HomeAssistant) -> None:
    entry = sample_entry()
    entry.add_to_hass(hass)
    result = await add_heat_pump(hass, entry, DEVICE, MODEL)
    assert result["type"] is FlowResultType.CREATE_ENTRY and result["title"] == "Heat pump"
    assert result["data"] == STORED
    config = home_config(hass, entry)
    (hp,) = config.heat_pumps
    assert config.active and config.control_entities() == {"climate.heat_pump"}
    assert (hp.ua_kw_per_k, hp.capacity_kwh_per_k, hp.min_kw, hp.max_kw, hp.phase) == (0.15, 8.0, 0.5, 3.0, "L2")
    assert hp.cop_points == ((-7.0, 2.5), (7.0, 4.0))


@pytest.mark.parametrize(
    ("changes", "errors"),
    [
        ({"min_kw": 4.0}, {"max_kw": "max_below_min"}),
        ({"max_kw": 0}, {"max_kw": "max_power_range"}),
        ({"max_kw": 1_000_000}, {"max_kw": "max_power_range"}),  # refused with its range, not just "above 0"
        ({"max_kw": 50.01, "min_kw": 50.5}, {"max_kw": "max_power_range", "min_kw": "min_power_range"}),
        ({"day_low_c": 23}, {"day_high_c": "band_inverted"}),
        ({"night_high_c": 120}, {"night_high_c": "temperature_range"}),
        ({"min_run_min": -5}, {"min_run_min": "run_time_slots"}),
        ({"min_run_min": 7, "min_off_min": 1455}, {"min_run_min": "run_time_slots", "min_off_min": "run_time_slots"}),
        ({**TANK, "hot_water_kwh": -1}, {"hot_water_kwh": "hot_water_range"}),
        ({**TANK, "hot_water_kwh": 100.5}, {"hot_water_kwh": "hot_water_range"}),
        ({**TANK, "room_temp_c": 100}, {"room_temp_c": "temperature_range"}),
    ],
    ids=["min-above-max", "not-positive", "absurd", "just-above", "band", "temperature", "negative-run",
         "not-whole-slots", "negative-draw", "draw-too-large", "hot-room"],
)
async def test_bad_device_values_are_field_errors(
    hass: HomeAssistant, changes: dict[str, Any], errors: dict[str, str]
) -> None:
    entry = sample_entry()
    entry.add_to_hass(hass)
    device = {**DEVICE, **changes}
    result = await device_step(hass, (await open_form(hass, entry))["flow_id"], device)
    assert result["type"] is FlowResultType.FORM and result["step_id"] == device["store"]
    assert result["errors"] == errors
    assert all(error_text(lang, reason) for lang in ("en", "de") for reason in errors.values())
    assert sorted(entry.subentries) == sorted(APPLIANCES)


@pytest.mark.parametrize(
    ("changes", "errors"),
    [
        ({"cop_outdoor_2": None, "cop_2": None}, {"cop_1": "cop_points_invalid"}),
        ({"cop_outdoor_2": -7}, {"cop_1": "cop_points_invalid"}),
        ({"cop_mode": "carnot", "carnot_fraction": 1.5}, {"carnot_fraction": "efficiency_range"}),
        ({"ua_w_per_k": 0}, {"ua_w_per_k": "ua_range"}),
        ({"ua_w_per_k": 5001, "capacity_kwh_per_k": 0.04}, {"ua_w_per_k": "ua_range",
                                                            "capacity_kwh_per_k": "heat_capacity_range"}),
        ({"gains_kw": 150}, {"gains_kw": "gains_range"}),
        ({"solar_gain": -0.1}, {"solar_gain": "solar_gain_range"}),
    ],
    ids=["one-point", "same-outdoor", "carnot-fraction", "ua", "ua-and-c-outside", "gains", "solar-gain"],
)
async def test_bad_model_values_are_field_errors(
    hass: HomeAssistant, changes: dict[str, Any], errors: dict[str, str]
) -> None:
    entry = sample_entry()
    entry.add_to_hass(hass)
    model = {k: v for k, v in {**MODEL, **changes}.items() if v is not None}
    result = await add_heat_pump(hass, entry, DEVICE, model)
    assert result["type"] is FlowResultType.FORM and result["step_id"] == "model"
    assert result["errors"] == errors
    assert all(error_text(lang, reason) for lang in ("en", "de") for reason in errors.values())


async def test_a_fit_shows_its_result_then_stores_it(hass: HomeAssistant) -> None:
    """With "fit from history" the form shows the fit's UA, C and error and fills them in; the next submit stores
    them. A failed fit is an error on the field, its reason in the description; a fit needs the power sensor."""
    entry = sample_entry()
    entry.add_to_hass(hass)
    fit_model = {k: v for k, v in MODEL.items() if k not in ("ua_w_per_k", "capacity_kwh_per_k")} | {
        "thermal_model": "fit"
    }
    no_power = {k: v for k, v in DEVICE.items() if k != "power_entity"}
    result = await add_heat_pump(hass, entry, no_power, fit_model)
    assert result["errors"] == {"thermal_model": "fit_needs_sensors"}

    failing = patch("custom_components.agentic_hems.flow.heat_pump.async_fit", return_value=(None, "no fit: 3 samples"))
    with failing:
        result = await add_heat_pump(hass, entry, DEVICE, fit_model)
    assert result["errors"] == {"thermal_model": "fit_failed"}
    assert result["description_placeholders"]["fit_result"] == "no fit: 3 samples"

    fitted = {"ua_w_per_k": 162.4, "capacity_kwh_per_k": 7.6, "gains_kw": 0.31, "solar_gain": 0.22, "rmse_c": 0.21,
              "samples": 1344}
    with patch("custom_components.agentic_hems.flow.heat_pump.async_fit", return_value=(fitted, "Fitted: RMSE 0.21 °C")):
        result = await add_heat_pump(hass, entry, DEVICE, fit_model)
        assert result["type"] is FlowResultType.FORM and result["errors"] == {}
        assert result["description_placeholders"]["fit_result"] == "Fitted: RMSE 0.21 °C"
        suggested = {str(k): (k.description or {}).get("suggested_value") for k in result["data_schema"].schema}
        assert (suggested["ua_w_per_k"], suggested["capacity_kwh_per_k"]) == (162.4, 7.6)
        assert (suggested["gains_kw"], suggested["solar_gain"]) == (0.31, 0.22)
        result = await hass.config_entries.subentries.async_configure(
            result["flow_id"],
            {**fit_model, "ua_w_per_k": 162.4, "capacity_kwh_per_k": 7.6, "gains_kw": 0.31, "solar_gain": 0.22},
        )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert (result["data"]["ua_w_per_k"], result["data"]["capacity_kwh_per_k"]) == (162.4, 7.6)
    assert (result["data"]["gains_kw"], result["data"]["solar_gain"]) == (0.31, 0.22)
    assert (result["data"]["thermal_model"], result["data"]["fit_rmse_c"]) == ("fit", 0.21)


async def test_an_empty_name_is_refused_on_the_first_step(hass: HomeAssistant) -> None:
    entry = sample_entry()
    entry.add_to_hass(hass)
    result = await open_form(hass, entry)
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], {"name": "  ", "store": "hot_water"})
    assert (result["step_id"], result["errors"]) == ("user", {"name": "name_empty"})
    assert error_text("en", "name_empty") and error_text("de", "name_empty")


# The device step's fields of every store, and those only a hot-water tank has (written out by hand).
COMMON_FIELDS = {
    "control_entity", "temperature_entity", "weather_entity", "power_entity", "outdoor_entity", "min_kw", "max_kw",
    "min_run_min", "min_off_min", "day_start", "day_end", "day_low_c", "day_high_c", "night_low_c", "night_high_c",
    "phase", "sg_ready",
}
TANK_FIELDS = {"room_temp_c", "hot_water_kwh", "hot_water_hours"}
HOUSE_MODEL_FIELDS = {"gains_kw", "solar_gain", "solar_entity"}


async def test_each_store_asks_only_for_its_own_fields(hass: HomeAssistant) -> None:
    """Space heating has no tank fields (room, draw, draw hours), a tank no house gains on the model step; each
    step's fields have labels and descriptions in English and German; a tank stores no gains."""
    entry = sample_entry()
    entry.add_to_hass(hass)
    strings = {lang: json.loads((TRANSLATIONS / f"{lang}.json").read_text(encoding="utf-8")) for lang in ("en", "de")}
    seen = {}
    for device in (DEVICE, TANK):
        result = await open_form(hass, entry)
        assert set(fields(result)) == {"name", "store"}
        result = await hass.config_entries.subentries.async_configure(result["flow_id"], {k: device[k] for k in FIRST})
        seen[device["store"]] = set(fields(result))
        for lang in ("en", "de"):
            step = strings[lang]["config_subentries"]["heat_pump"]["step"][device["store"]]
            labelled = set(step["data"]) | set(step["sections"])  # the SG Ready section is labelled by its name
            assert set(step["data"]) == set(step["data_description"]) and labelled == set(fields(result))
        result = await hass.config_entries.subentries.async_configure(
            result["flow_id"], {k: v for k, v in device.items() if k not in FIRST}
        )
        seen[f"{device['store']} model"] = set(fields(result))
        result = await hass.config_entries.subentries.async_configure(result["flow_id"], MODEL)
        assert result["type"] is FlowResultType.CREATE_ENTRY
    assert seen["space_heating"] == COMMON_FIELDS
    assert seen["hot_water"] == COMMON_FIELDS | TANK_FIELDS
    assert HOUSE_MODEL_FIELDS <= seen["space_heating model"]
    assert seen["hot_water model"] == seen["space_heating model"] - HOUSE_MODEL_FIELDS
    tank = heat_pumps(entry)["Tank"]
    assert (tank["room_temp_c"], tank["hot_water_kwh"], tank["hot_water_hours"]) == (15.0, 6.0, [7, 19, 20])
    assert (tank["gains_kw"], tank["solar_gain"], tank["solar_entity"]) == (0.0, 0.0, None)


async def test_a_control_entity_another_heat_pump_or_an_appliance_controls_is_refused(hass: HomeAssistant) -> None:
    """A second heat pump on the first's thermostat, or on an appliance's switch, is a translated error on the
    control entity; reconfiguring a heat pump that keeps its own control entity passes."""
    entry = sample_entry()
    entry.add_to_hass(hass)
    hass.config_entries.async_add_subentry(entry, ConfigSubentry(
        data={**APPLIANCES["dishwasher"], "name": "Boiler", "entity_id": "switch.boiler"}, subentry_type="appliance",
        title="Boiler", unique_id=None))
    await add_heat_pump(hass, entry, DEVICE, MODEL)
    for control in ("climate.heat_pump", "switch.boiler"):
        result = await device_step(hass, (await open_form(hass, entry))["flow_id"],
                                   {**TANK, "control_entity": control})
        assert (result["step_id"], result["errors"]) == ("hot_water", {"control_entity": "control_entity_in_use"})
    assert all(error_text(lang, "control_entity_in_use") for lang in ("en", "de"))
    result = await add_heat_pump(hass, entry, TANK, MODEL)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    ids = {s.title: k for k, s in entry.subentries.items()}
    result = await hass.config_entries.subentries.async_init(
        (entry.entry_id, "heat_pump"), context={"source": SOURCE_RECONFIGURE, "subentry_id": ids["Heat pump"]})
    result = await device_step(hass, result["flow_id"], {**DEVICE, "control_entity": "switch.boost"})
    assert result["errors"] == {"control_entity": "control_entity_in_use"}
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], {k: v for k, v in DEVICE.items() if k not in FIRST})
    assert result["step_id"] == "model"
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], MODEL)
    assert result["reason"] == "reconfigure_successful"
    assert {h["control_entity"] for h in heat_pumps(entry).values()} == {"climate.heat_pump", "switch.boost"}


async def test_reconfigure_starts_from_the_stored_heat_pump(hass: HomeAssistant) -> None:
    entry = sample_entry()
    entry.add_to_hass(hass)
    await add_heat_pump(hass, entry, DEVICE, MODEL)
    await add_heat_pump(hass, entry, TANK, MODEL)
    ids = {s.title: k for k, s in entry.subentries.items()}
    result = await hass.config_entries.subentries.async_init(
        (entry.entry_id, "heat_pump"), context={"source": SOURCE_RECONFIGURE, "subentry_id": ids["Heat pump"]}
    )
    assert result["type"] is FlowResultType.FORM and result["step_id"] == "reconfigure"
    assert fields(result) == {"name": "Heat pump", "store": "space_heating"}
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], {"name": "tank", "store": "space_heating"})
    assert result["errors"] == {"name": "name_exists"}
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], {k: DEVICE[k] for k in FIRST})
    assert result["step_id"] == "space_heating"
    assert fields(result)["max_kw"] == 3.0 and fields(result)["phase"] == "L2"
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], {k: v for k, v in DEVICE.items() if k not in FIRST} | {"max_kw": 4.5}
    )
    assert result["step_id"] == "model"
    assert (fields(result)["cop_outdoor_1"], fields(result)["cop_2"]) == (-7.0, 4.0)
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], MODEL)
    assert result["type"] is FlowResultType.ABORT and result["reason"] == "reconfigure_successful"
    stored = heat_pumps(entry)
    assert stored["Heat pump"] == {**STORED, "max_kw": 4.5}
    tank = next(h for h in home_config(hass, entry).heat_pumps if h.name == "Tank")
    assert tank.hot_water and tank.hot_water_hours == (7, 19, 20) and tank.control_entity == "switch.boost"

    result = await hass.config_entries.subentries.async_init(
        (entry.entry_id, "heat_pump"), context={"source": SOURCE_RECONFIGURE, "subentry_id": ids["Tank"]}
    )
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], {k: TANK[k] for k in FIRST})
    assert result["step_id"] == "hot_water"
    suggested = fields(result)
    assert (suggested["room_temp_c"], suggested["hot_water_kwh"], suggested["hot_water_hours"]) == (15.0, 6.0, ["7", "19", "20"])
    assert (suggested["day_low_c"], suggested["control_entity"]) == (20.0, "switch.boost")
    result = await hass.config_entries.subentries.async_init(
        (entry.entry_id, "heat_pump"), context={"source": SOURCE_RECONFIGURE, "subentry_id": ids["Tank"]}
    )
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], {"name": "Tank", "store": "space_heating"})
    suggested = fields(result)  # another store: its own band defaults, the stored entities
    assert (suggested["day_low_c"], suggested["control_entity"], "room_temp_c" in suggested) == (None, "switch.boost", False)


async def test_a_heat_pump_stored_before_the_store_step_reconfigures_unchanged(hass: HomeAssistant) -> None:
    """A subentry stored by the two-step form (no ``store``, a house with the tank fields at their defaults) opens
    each step with its values; submitting them unchanged stores the same data."""
    entry = sample_entry()
    entry.add_to_hass(hass)
    old = {k: v for k, v in STORED.items() if k != "store"}
    hass.config_entries.async_add_subentry(entry, ConfigSubentry(
        data=old, subentry_type="heat_pump", title="Heat pump", unique_id=None))
    (old_id,) = [k for k, s in entry.subentries.items() if s.title == "Heat pump"]
    result = await hass.config_entries.subentries.async_init(
        (entry.entry_id, "heat_pump"), context={"source": SOURCE_RECONFIGURE, "subentry_id": old_id})
    assert fields(result)["name"] == "Heat pump"
    flow_id = result["flow_id"]
    result = await hass.config_entries.subentries.async_configure(flow_id, {"name": "Heat pump", "store": "space_heating"})
    shown = {k: v for k, v in fields(result).items() if v is not None}
    assert shown == {k: old[k] for k in COMMON_FIELDS - {"sg_ready"}}  # the section has no value of its own
    result = await hass.config_entries.subentries.async_configure(flow_id, shown)
    shown = {k: v for k, v in fields(result).items() if v is not None}
    assert shown == {**{k: old[k] for k in ("cop_mode", "carnot_fraction", "flow_temp_c", "thermal_model",
                                            "ua_w_per_k", "capacity_kwh_per_k", "gains_kw", "solar_gain")},
                     "cop_outdoor_1": -7.0, "cop_1": 2.5, "cop_outdoor_2": 7.0, "cop_2": 4.0}
    result = await hass.config_entries.subentries.async_configure(flow_id, shown)
    assert result["reason"] == "reconfigure_successful"
    assert heat_pumps(entry)["Heat pump"] == STORED


async def test_a_cop_curve_the_model_cannot_use_is_refused_and_stored_data_of_another_shape_still_opens(
    hass: HomeAssistant,
) -> None:
    """COPs that fall as it gets warmer, or above 8, are refused on the form and, stored, raise the repair issue; a
    subentry whose COP points or hot-water hours are not of the stored shape still opens its reconfigure form."""
    entry = sample_entry()
    entry.add_to_hass(hass)
    for points in ([[-7.0, 4.0], [7.0, 2.5]], [[-7.0, 15.0], [7.0, 19.0]]):
        hass.config_entries.async_add_subentry(entry, ConfigSubentry(
            data={**STORED, "cop_points": points}, subentry_type="heat_pump", title=f"COP {points}", unique_id=None))
        assert home_config(hass, entry).heat_pumps == ()
    issues = [i for i in ir.async_get(hass).issues.values() if i.translation_key == "home_config_invalid"]
    assert len(issues) == 2 and all("not fall" in i.translation_placeholders["error"] for i in issues)
    hass.config_entries.async_add_subentry(entry, ConfigSubentry(
        data={**STORED, "cop_points": [5], "hot_water_hours": 7}, subentry_type="heat_pump", title="Odd", unique_id=None))
    (odd,) = [k for k, s in entry.subentries.items() if s.title == "Odd"]
    result = await hass.config_entries.subentries.async_init(
        (entry.entry_id, "heat_pump"), context={"source": SOURCE_RECONFIGURE, "subentry_id": odd})
    assert result["type"] is FlowResultType.FORM and result["step_id"] == "reconfigure"
    result = await device_step(hass, result["flow_id"], {**DEVICE, "control_entity": "climate.odd"})
    assert result["step_id"] == "model"
    falling = {**MODEL, "cop_outdoor_1": -7.0, "cop_1": 4.0, "cop_outdoor_2": 7.0, "cop_2": 2.5}
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], falling)
    assert result["errors"] == {"cop_1": "cop_points_invalid"}


async def test_a_bad_heat_pump_subentry_is_left_out_with_a_repair_issue(hass: HomeAssistant) -> None:
    entry = sample_entry()
    entry.add_to_hass(hass)
    hass.config_entries.async_add_subentry(
        entry, ConfigSubentry(data={**STORED, "min_kw": 5.0}, subentry_type="heat_pump", title="Bad", unique_id=None)
    )
    (bad_id,) = [k for k, s in entry.subentries.items() if s.title == "Bad"]
    assert home_config(hass, entry).heat_pumps == ()
    issue = ir.async_get(hass).async_get_issue(DOMAIN, f"home_config_invalid_{bad_id}")
    assert issue is not None and "min_kw" in issue.translation_placeholders["error"]


# --------------------------------------------------------------------------------------------- the plan in HA


CLIMATE = "climate.heat_pump"
INDOOR = "sensor.living_room_temperature"
HEAT_ID = "heatpump1"
HEAT_PUMP = {**STORED, "control_entity": CLIMATE, "power_entity": None, "outdoor_entity": None, "min_kw": 0.0,
             "min_run_min": 0.0, "min_off_min": 0.0}


def weather_config(hours: int, outdoor_c: float = 2.0) -> dict[str, Any]:
    """A template weather entity (weather.home) with an hourly forecast of ``hours`` hours from NOW's hour at
    ``outdoor_c`` (the hours written out: a template on now() would leave a timer behind)."""
    start = NOW.replace(minute=0)
    items = [{"datetime": (start + timedelta(hours=i)).isoformat(), "condition": "cloudy", "temperature": outdoor_c}
             for i in range(hours)]
    return {"template": [{"weather": [{"name": "Home", "condition": "cloudy", "humidity": "80",
                                       "temperature": str(outdoor_c), "forecast_hourly": f"{{{{ {items!r} }}}}"}]}]}


BOOST_SWITCH = {  # an SG-Ready style contact: a template switch on an input_boolean
    "name": "Heat pump boost", "state": "{{ is_state('input_boolean.boost_contact', 'on') }}",
    "turn_on": {"action": "input_boolean.turn_on", "target": {"entity_id": "input_boolean.boost_contact"}},
    "turn_off": {"action": "input_boolean.turn_off", "target": {"entity_id": "input_boolean.boost_contact"}},
}


async def _heated_house(hass: HomeAssistant, forecast_hours: int = 48) -> None:
    """The indoor sensor, the weather, a generic thermostat (climate.heat_pump) on a compressor stand-in and a boost
    switch (switch.heat_pump_boost)."""
    assert await async_setup_component(hass, "homeassistant", {})
    hass.states.async_set(INDOOR, "20.5", {"unit_of_measurement": "°C", "device_class": "temperature"})
    assert await async_setup_component(
        hass, "input_boolean", {"input_boolean": {"heat_pump_compressor": {}, "boost_contact": {}}}
    )
    templates = weather_config(forecast_hours)
    templates["template"].append({"switch": [BOOST_SWITCH]})
    assert await async_setup_component(hass, "template", templates)
    assert await async_setup_component(hass, "climate", {"climate": [{
        "platform": "generic_thermostat", "name": "Heat pump", "heater": "input_boolean.heat_pump_compressor",
        "target_sensor": INDOOR, "target_temp": 19, "target_temp_step": 0.5, "min_temp": 15, "max_temp": 25,
        "initial_hvac_mode": "heat"}]})
    await hass.async_block_till_done()


def heated_entry(heat_pump: dict[str, Any] = HEAT_PUMP, **options: Any) -> MockConfigEntry:
    """The sample entry (its three appliances) with a heat pump subentry and the home options."""
    subentries = [ConfigSubentryData(data=data, subentry_id=key, subentry_type="appliance", title=data["name"],
                                     unique_id=None) for key, data in APPLIANCES.items()]
    subentries.append(ConfigSubentryData(data=heat_pump, subentry_id=HEAT_ID, subentry_type="heat_pump",
                                         title=heat_pump["name"], unique_id=None))
    return MockConfigEntry(
        domain=DOMAIN, title="Sample prices", unique_id="sample", data={"price_source": "sample"},
        options={**DEFAULT_OPTIONS, "execution_wait_s": 1, **options}, subentries_data=subentries, version=1,
        minor_version=1,
    )


async def _setup(hass: HomeAssistant, freezer: FrozenDateTimeFactory, forecast_hours: int = 48,
                 **options: Any) -> MockConfigEntry:
    await hass.config.async_set_time_zone("Europe/Brussels")
    freezer.move_to(NOW)
    await _heated_house(hass, forecast_hours)
    entry = heated_entry(**options)
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)
    return entry


@pytest.fixture
async def automatic(hass: HomeAssistant, freezer: FrozenDateTimeFactory) -> AsyncGenerator[MockConfigEntry]:
    entry = await _setup(hass, freezer, battery_control="automatic")
    await entry.runtime_data.control.async_set_allow_control(True)
    yield entry


@pytest.fixture
async def approval(hass: HomeAssistant, freezer: FrozenDateTimeFactory) -> AsyncGenerator[MockConfigEntry]:
    entry = await _setup(hass, freezer, battery_control="approval")
    await entry.runtime_data.control.async_set_allow_control(True)
    yield entry


def target_calls(events: list[Any]) -> list[float]:
    return [e.data["service_data"]["temperature"] for e in events
            if e.data["domain"] == "climate" and e.data["service"] == "set_temperature"]


async def boundary(hass: HomeAssistant, freezer: FrozenDateTimeFactory, minutes: int = 15) -> datetime:
    """Move to the next slot boundary ``minutes`` past the hour of NOW and let the plan execute.

    The indoor sensor reports 10 s before (0.01 K off, within the replan threshold), so the thermostat's state is
    fresh for the Freshness gate (30 s at its risk; a push-only climate entity is not refreshed by the gates).
    """
    moment = dt_util.as_utc(NOW).replace(minute=minutes, second=0)
    await reach(hass, freezer, moment)
    return moment


async def reach(hass: HomeAssistant, freezer: FrozenDateTimeFactory, moment: datetime) -> None:
    """Move to ``moment`` (a slot boundary) and let the plan execute; the indoor sensor reports 10 s before."""
    freezer.move_to(moment - timedelta(seconds=10))
    hass.states.async_set(INDOOR, "20.49", {"unit_of_measurement": "°C", "device_class": "temperature"})
    await hass.async_block_till_done()
    freezer.move_to(moment)
    async_fire_time_changed(hass, moment)
    await hass.async_block_till_done(wait_background_tasks=True)


async def test_the_plan_preheats_into_cheap_slots_and_keeps_the_band(
    hass: HomeAssistant, automatic: MockConfigEntry
) -> None:
    result = automatic.runtime_data.home.result
    assert result is not None and result.plan is not None, result and result.detail
    plan, inputs = result.plan, result.inputs
    (pump,) = inputs.heat_pumps
    n = plan.import_kw.size
    power, temps = plan.heat_kw[HEAT_ID], plan.temp_c[HEAT_ID]
    assert temps[0] == pytest.approx(20.5)  # the measured start
    assert pump.ua_kw_per_k == pytest.approx(0.15) and pump.capacity_kwh_per_k == pytest.approx(8.0)
    assert np.isfinite(pump.ambient_c[:n]).all() and pump.ambient_c[0] == pytest.approx(2.0)
    # the band per slot in local time: 20-22 °C from 06:00 to 22:00, 17-22 °C at night
    tz = ZoneInfo("Europe/Brussels")
    for i in range(n):
        hour = (plan.start + i * plan.resolution).astimezone(tz).hour
        assert pump.comfort_low_c[i] == (20.0 if 6 <= hour < 22 else 17.0)
    assert (temps[1:] >= pump.comfort_low_c[:n] - 0.05).all() and (temps[1:] <= 22.0 + 1e-6).all()
    assert (power >= -1e-9).all() and (power <= 3.0 + 1e-9).all()
    # it heats when it is cheap: the heat's mean price is below the horizon's, and it stores heat ahead of a peak
    prices = inputs.curve.prices[:n]
    assert float(power @ prices) / float(power.sum()) < float(prices.mean())
    assert plan.net_cost <= plan.baseline_net_cost + 1e-9
    why = reasons(result, HEAT_ID)
    assert len(why) == n and "preheat_before_peak" in why and "off" in why
    assert all(w == "off" for w, kw in zip(why, power, strict=True) if kw <= 1e-6)


async def test_the_plan_ends_where_the_outdoor_forecast_ends(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    entry = await _setup(hass, freezer, forecast_hours=6, battery_control="automatic")
    result = entry.runtime_data.home.result
    assert result is not None and result.plan is not None
    plan = result.plan
    assert plan.horizon_end <= dt_util.as_utc(NOW).replace(minute=0) + timedelta(hours=6)
    assert plan.horizon_end < entry.runtime_data.coordinator.data.total.known_until()
    assert "outdoor forecast ends at" in result.detail


async def test_automatic_mode_sets_the_planned_target_and_an_unchanged_plan_issues_nothing(
    hass: HomeAssistant, automatic: MockConfigEntry, freezer: FrozenDateTimeFactory
) -> None:
    manager = automatic.runtime_data.home
    events = async_capture_events(hass, "call_service")
    slot = await boundary(hass, freezer)
    result = manager.result
    plan = result.plan
    assert plan is not None and plan.start == slot
    running = plan.heat_kw[HEAT_ID][0] > 1e-3
    expected = round(plan.temp_c[HEAT_ID][1] * 2) / 2 if running else result.inputs.heat_pumps[0].comfort_low_c[0]
    assert target_calls(events) == [pytest.approx(min(max(expected, 15), 25))]
    assert hass.states.get(CLIMATE).attributes["temperature"] == pytest.approx(min(max(expected, 15), 25))
    traces = list(automatic.runtime_data.control.traces.values())
    (trace,) = [t for t in traces if "heat pump" in str(t.get("raw_input", ""))][-1:]
    assert trace["outcome"] == "executed" and trace["source_agent"] == "scheduler"
    before = len(target_calls(events))
    await manager.async_replan(execute=True)  # same inputs, same plan
    await hass.async_block_till_done(wait_background_tasks=True)
    assert len(target_calls(events)) == before


async def test_approval_mode_leaves_the_command_pending_until_an_administrator_approves(
    hass: HomeAssistant, approval: MockConfigEntry, hass_admin_user: User
) -> None:
    manager = approval.runtime_data.home
    request_id = manager.approvals.request_id  # approval mode asks at once: None has no request below
    request = approval.runtime_data.grid.records.requests[request_id]
    assert request["status"] == "pending" and request["plan_id"].startswith("home_")
    assert {a["type"] for a in request["actions"]} == {"home_heat_pump"}
    events = async_capture_events(hass, "call_service")
    assert await manager.async_execute() == []
    assert target_calls(events) == []
    # a scheduler command on the reserved thermostat is refused by the Policy gate
    record = await approval.runtime_data.control.async_evaluate(
        source_agent="scheduler", context=Context(), raw_input="set the heat pump",
        candidate={"intent": "set_temperature", "device_alias": CLIMATE, "params": {"temperature": 24}})
    assert record["outcome"] == "blocked" and "grid setpoint" in record["gate_results"][-1]["reason"]
    await hass.services.async_call(DOMAIN, "approve_authorization", {"request_id": request_id}, blocking=True,
                                   context=Context(user_id=hass_admin_user.id))
    await hass.async_block_till_done(wait_background_tasks=True)
    slot = dt_util.utcnow()
    approved = next(a["value"] for a in request["actions"]
                    if datetime.fromisoformat(a["start"]) <= slot < datetime.fromisoformat(a["end"]))
    assert target_calls(events) == [pytest.approx(approved)]
    assert hass.states.get(CLIMATE).attributes["temperature"] == pytest.approx(approved)


async def test_nothing_acts_while_device_control_is_off(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    entry = await _setup(hass, freezer, battery_control="automatic")
    events = async_capture_events(hass, "call_service")
    records = await entry.runtime_data.home.async_execute()
    (record,) = [r for r in records if r.get("candidate", {}).get("device_alias") == CLIMATE] or records
    assert record["outcome"] != "executed"
    assert target_calls(events) == []
    assert hass.states.get(CLIMATE).attributes["temperature"] == 19


async def test_a_measured_temperature_that_departs_replans(
    hass: HomeAssistant, automatic: MockConfigEntry, freezer: FrozenDateTimeFactory
) -> None:
    manager = automatic.runtime_data.home
    made = manager.result.made_at
    freezer.tick(timedelta(minutes=1))
    planned = planned_temp_c(manager.result.plan, HEAT_ID, dt_util.utcnow())  # None fails the arithmetic below
    hass.states.async_set(INDOOR, str(round(planned + 0.5, 2)), {"unit_of_measurement": "°C"})  # within 1 K
    await hass.async_block_till_done(wait_background_tasks=True)
    assert manager.result.made_at == made
    hass.states.async_set(INDOOR, str(round(planned - 2.0, 2)), {"unit_of_measurement": "°C"})
    await hass.async_block_till_done(wait_background_tasks=True)
    assert manager.result.made_at > made
    assert manager.result.plan.temp_c[HEAT_ID][0] == pytest.approx(round(planned - 2.0, 2))


async def test_the_heat_pump_sensors_and_the_schedule_payload(
    hass: HomeAssistant, automatic: MockConfigEntry, entity_registry: er.EntityRegistry
) -> None:
    result = automatic.runtime_data.home.result
    plan = result.plan
    power = hass.states.get("sensor.heat_pump_planned_power")
    temperature = hass.states.get("sensor.heat_pump_planned_temperature")
    assert float(power.state) == pytest.approx(plan.heat_kw[HEAT_ID][0], abs=1e-3)
    assert float(temperature.state) == pytest.approx(plan.temp_c[HEAT_ID][1], abs=1e-2)
    slots = temperature.attributes["plan"]
    assert len(slots) == plan.import_kw.size and slots[0]["start"] == plan.start.isoformat()
    assert temperature.attributes["reason"] == slots[0]["reason"] and temperature.attributes["comfort_low_c"] in (17, 20)
    entry = entity_registry.async_get("sensor.heat_pump_planned_power")
    assert entry is not None and entry.config_subentry_id == HEAT_ID and entry.unique_id == f"{HEAT_ID}_heat_pump_planned_power"
    payload = home_payload(result, automatic.runtime_data.home.config)
    assert payload["time_limited"] is plan.time_limited is False  # proven optimal, within the plan's time bound
    (heat,) = payload["heat_pumps"]
    assert heat["slots"] == slots and heat["measured_c"] == 20.5
    for slot, row in zip(payload["slots"], slots, strict=True):  # the heat pump's power is part of the house load
        supply = slot["pv_kw"] - slot["curtail_kw"] + slot["import_kw"] - slot["export_kw"]
        assert supply == pytest.approx(slot["load_kw"] + slot["battery_kw"], abs=5e-3)
        assert slot["load_kw"] >= row["kw"] - 1e-3


async def test_generate_explanation_says_why_the_heat_pump_runs_and_sets_nothing(
    hass: HomeAssistant, automatic: MockConfigEntry
) -> None:
    """The live plan's explanation gives the heat pump sensors' reasons per slot, each checked against the store
    model worked out here (the temperature a slot would end at with the heat pump off), in en and de; the live plan
    and the same plan given as arrays give one answer; nothing is set."""
    result = automatic.runtime_data.home.result
    plan, (pump,) = result.plan, result.inputs.heat_pumps
    n, hours = plan.import_kw.size, plan.resolution.total_seconds() / 3600
    power, temps, prices = plan.heat_kw[HEAT_ID], plan.temp_c[HEAT_ID], result.inputs.curve.prices[:n]
    gains = np.zeros(n) if pump.gains_kw is None else np.asarray(pump.gains_kw[:n])
    off = temps[:-1] + hours / pump.capacity_kwh_per_k * (pump.ua_kw_per_k * (pump.ambient_c[:n] - temps[:-1]) + gains)
    low = pump.band(hours, n)[0]
    events = async_capture_events(hass, "call_service")
    live = await hass.services.async_call(DOMAIN, "generate_explanation", {"current_home_plan": True},
                                          blocking=True, return_response=True)
    (heat,) = live["structured"]["heat_pumps"]
    codes = [slot["reason"] for slot in heat["slots"]]
    assert codes == reasons(result, HEAT_ID) and {"off", "preheat_before_peak"} <= set(codes)
    for t, slot in enumerate(heat["slots"]):
        assert (slot["reason"] == "off") == (power[t] <= 1e-6)
        assert (slot["reason"] == "comfort_floor") == (power[t] > 1e-6 and off[t] < low[t] - 1e-5), t
        if slot["reason"] == "preheat_before_peak":
            assert slot["why"] == (f"pre-heats at {prices[t]:.3f} EUR/kWh, before a dearer slot at "
                                   f"{max(prices[t + 1:]):.3f} EUR/kWh")
    given = {
        "start": plan.start.isoformat(), "currency": "EUR", "fuse_kw": automatic.runtime_data.home.planner.power_limit_kw,
        "import_price": prices.tolist(), "pv_kw": plan.pv_kw.tolist(), "curtail_kw": plan.curtail_kw.tolist(),
        "house_kw": (plan.base_load_kw + sum(plan.load_kw.values(), np.zeros(n))).tolist(),
        "import_kw": plan.import_kw.tolist(),
        "heat_pumps": [{"name": "Heat pump", "heat_kw": power.tolist(), "temp_c": temps.tolist(), "low_c": low.tolist(),
                        "off_c": off.tolist(), "min_run_slots": pump.min_run_slots, "on_floor_kw": pump.on_floor_kw,
                        "initial_on_slots": pump.initial_on_slots}],
    }
    for lang in ("en", "de"):  # the service takes at most 1000 entries: the arrays go to the tool's core directly
        for audience in ("operator", "manager", "auditor"):
            answer = await hass.services.async_call(DOMAIN, "generate_explanation", {
                "current_home_plan": True, "lang": lang, "audience": audience}, blocking=True, return_response=True)
            data = GENERATE_EXPLANATION.schema({"home_plan": given, "lang": lang, "audience": audience})
            assert explain_home(data["home_plan"], audience, lang) == {k: answer[k] for k in ("text", "structured")}
    manager = await hass.services.async_call(DOMAIN, "generate_explanation", {"current_home_plan": True, "lang": "de",
                                             "audience": "manager"}, blocking=True, return_response=True)
    assert manager["text"].startswith(f"Heat pump: läuft in {n - codes.count('off')} Slots ")
    assert [e.data["domain"] for e in events] == [DOMAIN] * 8  # the calls above, nothing on a device


async def test_assist_without_a_model_says_why_the_heat_pump_runs_now(
    hass: HomeAssistant, automatic: MockConfigEntry
) -> None:
    """The offline planner answers "why does the heat pump run?" with the live explanation's sentence for the current
    slot, until the first later slot with another sentence (local time), and that one; it plans and sets nothing."""
    result = automatic.runtime_data.home.result
    live = await hass.services.async_call(DOMAIN, "generate_explanation", {"current_home_plan": True},
                                          blocking=True, return_response=True)
    slots = live["structured"]["heat_pumps"][0]["slots"]
    assert datetime.fromisoformat(slots[0]["start"]) <= dt_util.utcnow() < result.plan.start + result.plan.resolution
    j = next(k for k, slot in enumerate(slots) if slot["why"] != slots[0]["why"])
    until = dt_util.as_local(datetime.fromisoformat(slots[j]["start"])).strftime("%a %H:%M")
    events = async_capture_events(hass, "call_service")
    answer = await hass.services.async_call(DOMAIN, "ask", {"text": "Why does the heat pump run?"}, blocking=True,
                                            return_response=True)
    assert answer["summary"] == f"Heat pump: {slots[0]['why']} until {until}, then {slots[j]['why']}."
    assert answer["outcomes"] == [] and [e.data["service"] for e in events] == ["ask"]
    hass.config.language = "de"
    german = await hass.services.async_call(DOMAIN, "ask", {"text": "Warum läuft die Wärmepumpe?"}, blocking=True,
                                            return_response=True)
    day, clock = until.split()
    days = {"Mon": "Mo", "Tue": "Di", "Wed": "Mi", "Thu": "Do", "Fri": "Fr", "Sat": "Sa", "Sun": "So"}
    assert german["summary"].startswith("Heat pump: ") and f" bis {days[day]} {clock}, danach " in german["summary"]


async def test_a_boost_switch_is_on_while_the_plan_runs_the_heat_pump(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """An SG-Ready style contact (a template switch on an input_boolean): turn_on in a slot the plan runs the heat
    pump, turn_off in one it does not, each once."""
    await hass.config.async_set_time_zone("Europe/Brussels")
    freezer.move_to(NOW)
    await _heated_house(hass)
    entry = heated_entry({**HEAT_PUMP, "control_entity": "switch.heat_pump_boost"}, battery_control="automatic")
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)
    await entry.runtime_data.control.async_set_allow_control(True)
    manager = entry.runtime_data.home
    first = manager.result.plan
    first_on = int(np.argmax(first.heat_kw[HEAT_ID] > 1e-3))
    seen = []
    for i in range(first_on, first_on + 8):  # the house follows the plan: the sensor reads the planned temperature
        moment = first.start + i * first.resolution
        freezer.move_to(moment - timedelta(seconds=5))
        temp = planned_temp_c(manager.result.plan, HEAT_ID, moment)
        hass.states.async_set(INDOOR, str(round(temp, 2)), {"unit_of_measurement": "°C"})
        state = hass.states.get("switch.heat_pump_boost")  # the contact reports (Freshness: 5 min at risk 1)
        hass.states.async_set(state.entity_id, state.state, state.attributes)
        freezer.move_to(moment)
        async_fire_time_changed(hass, moment)
        await hass.async_block_till_done(wait_background_tasks=True)
        plan = manager.result.plan
        wanted = "on" if plan.heat_kw[HEAT_ID][0] > 1e-3 else "off"
        assert plan.start == moment and hass.states.get("switch.heat_pump_boost").state == wanted
        seen.append(wanted)
    assert "on" in seen, seen
    since = (first.start + first_on * first.resolution).isoformat()
    traces = [t for t in entry.runtime_data.control.traces.values()
              if "switch.heat_pump_boost" in t["raw_input"] and t["timestamp"] >= since]
    assert traces and all(t["outcome"] == "executed" for t in traces), [t["outcome"] for t in traces]
    issued = [t["raw_input"].split(" switch")[0] for t in traces]
    assert all(a != b for a, b in zip(issued, issued[1:], strict=False)), issued  # only when the value changes


async def test_a_hot_water_tank_stands_in_its_room_and_loses_the_draw(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """A tank: its ambient is the room temperature wherever the outdoor forecast reaches, its gains minus the daily
    draw spread over the draw hours (local time), its band 45-55 °C; the plan keeps it there."""
    await hass.config.async_set_time_zone("Europe/Brussels")
    freezer.move_to(NOW)
    await _heated_house(hass)
    hass.states.async_set("sensor.tank", "50", {"unit_of_measurement": "°C", "device_class": "temperature"})
    tank = {**HEAT_PUMP, "name": "Tank", "store": "hot_water", "control_entity": "switch.heat_pump_boost",
            "temperature_entity": "sensor.tank", "max_kw": 2.0, "ua_w_per_k": 3.0, "capacity_kwh_per_k": 0.25,
            "day_low_c": 45.0, "day_high_c": 55.0, "night_low_c": 45.0, "night_high_c": 55.0, "room_temp_c": 18.0,
            "hot_water_kwh": 6.0, "hot_water_hours": [7, 19, 20]}
    entry = heated_entry(tank, battery_control="automatic")
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)
    result = entry.runtime_data.home.result
    assert result is not None and result.plan is not None, result and result.detail
    (pump,) = result.inputs.heat_pumps
    n = result.plan.import_kw.size
    assert (pump.ambient_c[:n] == 18.0).all()
    tz = ZoneInfo("Europe/Brussels")
    hours = [(result.plan.start + i * result.plan.resolution).astimezone(tz).hour for i in range(n)]
    assert pump.gains_kw is not None
    assert [float(g) for g in pump.gains_kw[:n]] == [-2.0 if h in (7, 19, 20) else 0.0 for h in hours]
    temps = result.plan.temp_c[HEAT_ID]
    assert (temps[1:] >= 45.0 - 0.05).all() and (temps <= 55.0 + 1e-6).all()


async def test_how_long_it_has_run_comes_from_the_switch_or_the_power_sensor(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """On/off slots before the horizon: a switch since its last change, capped at the longer minimum time; a power
    sensor above 0.05 kW (or half the minimum power) counts as running; nothing known counts as off long enough."""
    hp = parse_heat_pump("hp", {**HEAT_PUMP, "control_entity": "switch.boost", "min_run_min": 60, "min_off_min": 30})
    slot = timedelta(minutes=15)
    freezer.move_to(NOW - timedelta(minutes=40))
    hass.states.async_set("switch.boost", "on")
    freezer.move_to(NOW)
    assert await async_run_state(hass, hp, slot, dt_util.utcnow()) == (3, 0)
    hass.states.async_set("switch.boost", "off")
    assert await async_run_state(hass, hp, slot, dt_util.utcnow()) == (0, 1)
    metered = parse_heat_pump("hp", {**HEAT_PUMP, "power_entity": "sensor.hp_power", "min_run_min": 60})
    freezer.move_to(NOW - timedelta(minutes=100))
    hass.states.async_set("sensor.hp_power", "1200", {"unit_of_measurement": "W"})
    freezer.move_to(NOW)
    assert await async_run_state(hass, metered, slot, dt_util.utcnow()) == (4, 0)  # 100 min, capped at 4 slots
    hass.states.async_set("sensor.hp_power", "10", {"unit_of_measurement": "W"})
    assert await async_run_state(hass, metered, slot, dt_util.utcnow()) == (0, 1)
    unknown = parse_heat_pump("hp", {**HEAT_PUMP, "min_off_min": 45})
    assert await async_run_state(hass, unknown, slot, dt_util.utcnow()) == (0, 3)


async def test_the_fit_reads_the_history_with_the_model_steps_cop(hass: HomeAssistant) -> None:
    """async_fit hands thermal's fit the sensors, 14 days and the COP of the model step; it answers UA in W/K and C,
    or the fit's refusal as the form's text."""
    data = {**STORED, "cop_points": [[-7.0, 2.5], [7.0, 4.0]]}
    fitted = SimpleNamespace(ua_kw_per_k=0.1623, capacity_kwh_per_k=7.58, gains_kw=0.2816, solar_gain=0.1234,
                             rmse_c=0.214, samples=1344)
    with patch("custom_components.agentic_hems.planning.heat_inputs.async_fit_from_history",
               return_value=fitted) as fit:
        result, text = await async_fit(hass, data)
    kwargs = fit.call_args.kwargs
    assert (kwargs["indoor_entity"], kwargs["outdoor_entity"], kwargs["power_entity"], kwargs["days"]) == (
        "sensor.living_room_temperature", "sensor.outdoor_temperature", "sensor.heat_pump_power", 14)
    assert kwargs["cop"](np.array([-7.0, 0.0, 7.0])) == pytest.approx([2.5, 3.25, 4.0])
    assert kwargs["solar_entity"] is None  # no PV power sensor: no solar term
    assert result == {"ua_w_per_k": 162.3, "capacity_kwh_per_k": 7.58, "gains_kw": 0.282, "solar_gain": 0.123,
                      "rmse_c": 0.21, "samples": 1344}
    assert "UA 162.3 W/K" in text and "0.21 °C" in text
    refusal = HomeAssistantError("too little history: 3 samples")
    with patch("custom_components.agentic_hems.planning.heat_inputs.async_fit_from_history", side_effect=refusal):
        result, text = await async_fit(hass, data)
    assert result is None and text == "No fit: too little history: 3 samples"


# --------------------------------------------------------------------------------------- internal and solar gains


def test_a_heat_pump_stored_without_gains_reads_them_as_zero() -> None:
    """Subentries stored before the gains fields need no migration: they read as G = 0, g = 0, no PV sensor, and a
    house without gains gets none in the plan while a tank keeps its draw."""
    old = {k: v for k, v in STORED.items() if k not in ("gains_kw", "solar_gain", "solar_entity")}
    hp = parse_heat_pump("hp", old)
    assert (hp.internal_gains_kw, hp.solar_gain, hp.solar_entity) == (0.0, 0.0, None)
    tz = ZoneInfo("Europe/Brussels")
    starts = [NOW + timedelta(hours=i) for i in range(3)]
    assert hp.gains_kw(starts, timedelta(hours=1), tz, np.array([2.0, 1.0, 0.0])) is None
    tank = parse_heat_pump("t", {**old, "store": "hot_water", "hot_water_kwh": 3.0, "hot_water_hours": [21],
                                 "gains_kw": 0.5, "solar_gain": 0.2})
    assert list(tank.gains_kw(starts, timedelta(hours=1), tz, np.array([2.0, 1.0, 0.0]))) == [0.0, -3.0, 0.0]


async def test_a_fit_from_the_recorders_history_stores_the_gains(recorder_mock: Recorder, hass: HomeAssistant) -> None:
    """Seven days of a simulated house (UA 200 W/K, C 10 kWh/K, internal gains G 0.3 kW, solar gain g 0.3 kW per kW of
    PV) in the recorder: the form's fit, with the PV power sensor, finds G and g and the next submit stores them."""
    h = house(7)
    now = dt_util.utcnow().replace(second=0, microsecond=0)
    start = now - timedelta(minutes=now.minute % 15) - timedelta(days=7)
    record(hass, "sensor.living_room_temperature", start, h.indoor_c, "°C")
    record(hass, "sensor.outdoor_temperature", start, h.outdoor_c, "°C")
    record(hass, "sensor.heat_pump_power", start, h.electric_kw * 1000, "W")
    record(hass, "sensor.pv_power", start, h.solar_kw, "kW")
    await async_wait_recording_done(hass)
    entry = sample_entry()
    entry.add_to_hass(hass)
    fit_model = {"cop_mode": "points", "cop_outdoor_1": -10, "cop_1": 2.2, "cop_outdoor_2": 10, "cop_2": 3.8,
                 "carnot_fraction": 0.45, "flow_temp_c": 35, "thermal_model": "fit", "solar_entity": "sensor.pv_power"}
    result = await add_heat_pump(hass, entry, DEVICE, fit_model)
    assert result["type"] is FlowResultType.FORM and result["errors"] == {}, result["description_placeholders"]
    suggested = {str(k): (k.description or {}).get("suggested_value") for k in result["data_schema"].schema}
    # the core's fit of the recorded samples: the 14-day fit also reads the first values, recorded a slot earlier
    rounded = {key: np.round(np.concatenate([values[:1], values]), 4) for key, values in
               {"indoor": h.indoor_c, "outdoor": h.outdoor_c, "power": h.electric_kw, "pv": h.solar_kw}.items()}
    core = fit_thermal(rounded["indoor"], rounded["outdoor"], (3 + 0.08 * rounded["outdoor"]) * rounded["power"],
                       hours=0.25, solar_kw=rounded["pv"])
    assert (suggested["gains_kw"], suggested["solar_gain"]) == (round(core.gains_kw, 3), round(core.solar_gain, 3))
    assert suggested["gains_kw"] == pytest.approx(0.3, abs=0.1) and suggested["solar_gain"] == pytest.approx(0.3, abs=0.1)
    assert f"internal gains {suggested['gains_kw']:g} kW" in result["description_placeholders"]["fit_result"]
    fitted = {k: suggested[k] for k in ("ua_w_per_k", "capacity_kwh_per_k", "gains_kw", "solar_gain")}
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], {**fit_model, **fitted})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert {k: result["data"][k] for k in fitted} == fitted
    assert result["data"]["solar_entity"] == "sensor.pv_power"
    (hp,) = home_config(hass, entry).heat_pumps
    assert (hp.internal_gains_kw, hp.solar_gain) == (fitted["gains_kw"], fitted["solar_gain"])


PV_PERIODS = [3.0, 2.5, 2.0, 1.0, 0.5, 0.0]  # kW per 30-minute period from NOW's hour: a Solcast-shaped sensor


async def test_the_plan_gains_the_internal_and_solar_gains_and_needs_less_energy(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """A house with G = 0.4 kW and g = 0.25 kW per kW of PV: the plan's gains are G + g x the PV forecast slot by
    slot, and the plan needs less heat-pump energy than plan_home run directly on the same inputs with G = g = 0."""
    await hass.config.async_set_time_zone("Europe/Brussels")
    freezer.move_to(NOW)
    await _heated_house(hass)
    start = NOW.replace(minute=0)
    forecast = [{"period_start": (start + timedelta(minutes=30 * i)).isoformat(), "pv_estimate": kw,
                 "pv_estimate10": kw, "pv_estimate90": kw} for i, kw in enumerate(PV_PERIODS)]
    hass.states.async_set("sensor.solcast", "10", {"detailedForecast": forecast})
    entry = heated_entry({**HEAT_PUMP, "gains_kw": 0.4, "solar_gain": 0.25}, battery_control="automatic",
                         pv_forecast_entries=[], pv_forecast_sensor="sensor.solcast")
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)
    result = entry.runtime_data.home.result
    assert result is not None and result.plan is not None, result and result.detail
    inputs, (pump,) = result.inputs, result.inputs.heat_pumps
    n = result.plan.import_kw.size
    pv = np.repeat(PV_PERIODS, 2)  # the forecast on the 15-minute slots, 0 kW after it ends
    assert list(inputs.pv_kw[: pv.size]) == pytest.approx(list(pv))
    assert pump.gains_kw is not None
    assert list(pump.gains_kw[:n]) == pytest.approx([0.4 + 0.25 * float(kw) for kw in inputs.pv_kw[:n]])
    common = {"pv_kw": inputs.pv_kw, "base_load_kw": inputs.base_load_kw, "export_price": inputs.export_price,
              "fees": inputs.fees}
    gained = plan_home(inputs.curve, heat_pumps=[pump], **common)
    without = plan_home(inputs.curve, heat_pumps=[replace(pump, gains_kw=None)], **common)
    energy = {name: float(plan.heat_kw[HEAT_ID].sum()) / 4 for name, plan in (("gains", gained), ("none", without))}
    m = gained.heat_kw[HEAT_ID].size
    for plan in (gained, without):  # the same band
        assert (plan.temp_c[HEAT_ID][1:] >= pump.comfort_low_c[:m] - 0.05).all()
        assert (plan.temp_c[HEAT_ID][1:] <= pump.comfort_high_c[:m] + 1e-6).all()
    gains_at_cop = float(np.sum(pump.gains_kw[:m] / pump.cop[:m])) / 4  # the gains' heat at the pump's COP, kWh
    assert energy["none"] - energy["gains"] > 0.5 * gains_at_cop > 1.0, (energy, gains_at_cop)
    assert float(result.plan.heat_kw[HEAT_ID].sum()) / 4 < energy["none"] - 0.5 * gains_at_cop  # the plan in HA
