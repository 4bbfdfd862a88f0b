"""The whole-home plan's heat pumps in a real Home Assistant: the subentry form (errors, a fit, reconfigure), the
config it stores and reads back, the plan's inputs, the commands through the gates and the heat pump's sensors.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from homeassistant.config_entries import SOURCE_RECONFIGURE, SOURCE_USER, ConfigSubentry
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import issue_registry as ir

from custom_components.agentic_hems.const import DOMAIN
from custom_components.agentic_hems.planning.home_config import home_config

from .conftest import APPLIANCES, sample_entry

TRANSLATIONS = Path(__file__).parents[2] / "custom_components" / "agentic_hems" / "translations"
DEVICE = {
    "name": "Heat pump", "store": "space_heating", "control_entity": "climate.heat_pump",
    "temperature_entity": "sensor.living_room_temperature", "weather_entity": "weather.home",
    "power_entity": "sensor.heat_pump_power", "outdoor_entity": "sensor.outdoor_temperature", "min_kw": 0.5,
    "max_kw": 3.0, "min_run_min": 30, "min_off_min": 15, "day_start": "06:00:00", "day_end": "22:00:00", "day_low_c": 20, "day_high_c": 22, "night_low_c": 17,
    "night_high_c": 22, "room_temp_c": 20, "hot_water_kwh": 0, "phase": "L2",
}
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
}


def error_text(lang: str, reason: str) -> str:
    """The heat pump form's error text of ``reason`` in ``lang``."""
    strings = json.loads((TRANSLATIONS / f"{lang}.json").read_text(encoding="utf-8"))
    return str(strings["config_subentries"]["heat_pump"]["error"][reason])


async def open_form(hass: HomeAssistant, entry: MockConfigEntry) -> dict[str, Any]:
    result = await hass.config_entries.subentries.async_init((entry.entry_id, "heat_pump"), context={"source": SOURCE_USER})
    assert result["type"] is FlowResultType.FORM and result["step_id"] == "user"
    return result


async def add_heat_pump(
    hass: HomeAssistant, entry: MockConfigEntry, device: dict[str, Any], model: dict[str, Any]
) -> dict[str, Any]:
    """Fill in both steps of the add-heat-pump form."""
    result = await open_form(hass, entry)
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], device)
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
        ({"max_kw": 0}, {"max_kw": "must_be_positive"}),
        ({"day_low_c": 23}, {"day_high_c": "band_inverted"}),
        ({"night_high_c": 120}, {"night_high_c": "temperature_range"}),
        ({"min_run_min": -5}, {"min_run_min": "must_not_be_negative"}),
        ({"name": "  "}, {"name": "name_empty"}),
    ],
    ids=["min-above-max", "not-positive", "band", "temperature", "negative-run", "no-name"],
)
async def test_bad_device_values_are_field_errors(
    hass: HomeAssistant, changes: dict[str, Any], errors: dict[str, str]
) -> None:
    entry = sample_entry()
    entry.add_to_hass(hass)
    result = await open_form(hass, entry)
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], {**DEVICE, **changes})
    assert result["type"] is FlowResultType.FORM and result["step_id"] == "user"
    assert result["errors"] == errors
    assert all(error_text(lang, reason) for lang in ("en", "de") for reason in errors.values())
    assert sorted(entry.subentries) == sorted(APPLIANCES)


@pytest.mark.parametrize(
    ("changes", "errors"),
    [
        ({"cop_outdoor_2": None, "cop_2": None}, {"cop_1": "cop_points_invalid"}),
        ({"cop_outdoor_2": -7}, {"cop_1": "cop_points_invalid"}),
        ({"cop_mode": "carnot", "carnot_fraction": 1.5}, {"carnot_fraction": "efficiency_range"}),
        ({"ua_w_per_k": 0}, {"ua_w_per_k": "must_be_positive"}),
    ],
    ids=["one-point", "same-outdoor", "carnot-fraction", "ua"],
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
    assert result["description_placeholders"] == {"fit_result": "no fit: 3 samples"}

    fitted = {"ua_w_per_k": 162.4, "capacity_kwh_per_k": 7.6, "rmse_c": 0.21, "samples": 1344}
    with patch("custom_components.agentic_hems.flow.heat_pump.async_fit", return_value=(fitted, "Fitted: RMSE 0.21 °C")):
        result = await add_heat_pump(hass, entry, DEVICE, fit_model)
        assert result["type"] is FlowResultType.FORM and result["errors"] == {}
        assert result["description_placeholders"] == {"fit_result": "Fitted: RMSE 0.21 °C"}
        suggested = {str(k): (k.description or {}).get("suggested_value") for k in result["data_schema"].schema}
        assert (suggested["ua_w_per_k"], suggested["capacity_kwh_per_k"]) == (162.4, 7.6)
        result = await hass.config_entries.subentries.async_configure(
            result["flow_id"], {**fit_model, "ua_w_per_k": 162.4, "capacity_kwh_per_k": 7.6}
        )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert (result["data"]["ua_w_per_k"], result["data"]["capacity_kwh_per_k"]) == (162.4, 7.6)
    assert (result["data"]["thermal_model"], result["data"]["fit_rmse_c"]) == ("fit", 0.21)


async def test_reconfigure_starts_from_the_stored_heat_pump(hass: HomeAssistant) -> None:
    entry = sample_entry()
    entry.add_to_hass(hass)
    await add_heat_pump(hass, entry, DEVICE, MODEL)
    await add_heat_pump(hass, entry, {**DEVICE, "name": "Tank", "store": "hot_water", "control_entity": "switch.boost",
                                      "temperature_entity": "sensor.tank", "hot_water_kwh": 6,
                                      "hot_water_hours": ["7", "19", "20"]}, MODEL)
    (subentry_id,) = [k for k, s in entry.subentries.items() if s.title == "Heat pump"]
    result = await hass.config_entries.subentries.async_init(
        (entry.entry_id, "heat_pump"), context={"source": SOURCE_RECONFIGURE, "subentry_id": subentry_id}
    )
    assert result["type"] is FlowResultType.FORM and result["step_id"] == "reconfigure"
    suggested = {str(k): (k.description or {}).get("suggested_value") for k in result["data_schema"].schema}
    assert suggested["max_kw"] == 3.0 and suggested["phase"] == "L2"
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], {**DEVICE, "name": "tank"})
    assert result["errors"] == {"name": "name_exists"}
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], {**DEVICE, "max_kw": 4.5})
    assert result["step_id"] == "model"
    suggested = {str(k): (k.description or {}).get("suggested_value") for k in result["data_schema"].schema}
    assert (suggested["cop_outdoor_1"], suggested["cop_2"]) == (-7.0, 4.0)
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], MODEL)
    assert result["type"] is FlowResultType.ABORT and result["reason"] == "reconfigure_successful"
    stored = heat_pumps(entry)
    assert stored["Heat pump"] == {**STORED, "max_kw": 4.5}
    tank = next(h for h in home_config(hass, entry).heat_pumps if h.name == "Tank")
    assert tank.hot_water and tank.hot_water_hours == (7, 19, 20) and tank.control_entity == "switch.boost"


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
