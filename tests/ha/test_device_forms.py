"""The device forms (appliance, battery, heat pump) against each other, through HA's subentry flow manager.

Two devices never share a name or a control entity, also when two forms are open at once; no device is controlled
through one of the integration's own entities, which the control pickers leave out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from homeassistant.config_entries import ConfigSubentry
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import entity_registry as er

from custom_components.agentic_hems.const import DOMAIN

from .conftest import APPLIANCES, sample_entry
from .test_config_flow import BOILER, add_appliance
from .test_heat_pump import DEVICE, FIRST, MODEL, STORED as HEAT_PUMP, TANK, device_step, fields, heat_pumps, open_form
from .test_home_forms import FORM as BATTERY_FORM, NUMBER_ONLY, STORED as BATTERY, add_battery

TRANSLATIONS = Path(__file__).parents[2] / "custom_components" / "agentic_hems" / "translations"
OWN_SWITCH = "switch.agentic_hems_allow_device_control"  # the integration's device control switch
# Each form's field of the control entity.
CONTROL_FIELD = {"appliance": "entity_id", "battery": "control_entity", "heat_pump": "control_entity"}


def error_text(lang: str, kind: str, reason: str) -> str:
    """The error text of ``reason`` in the ``kind`` form, in ``lang``."""
    strings = json.loads((TRANSLATIONS / f"{lang}.json").read_text(encoding="utf-8"))
    return str(strings["config_subentries"][kind]["error"][reason])


def store(hass: HomeAssistant, entry: MockConfigEntry, kind: str, data: dict[str, Any]) -> None:
    """Store a ``kind`` subentry with ``data``, titled by its name (as a finished form does)."""
    hass.config_entries.async_add_subentry(
        entry, ConfigSubentry(data=data, subentry_type=kind, title=data["name"], unique_id=None)
    )


async def submit(hass: HomeAssistant, entry: MockConfigEntry, kind: str, control: str, name: str) -> dict[str, Any]:
    """Submit the ``kind`` form of a device ``name`` controlled by ``control``; return the result of its last step."""
    if kind == "appliance":
        return await add_appliance(hass, entry, {**BOILER, "name": name, "entity_id": control})
    if kind == "battery":
        form = BATTERY_FORM if control.startswith("select.") else NUMBER_ONLY
        return await add_battery(hass, entry, {**form, "name": name, "control_entity": control})
    return await device_step(hass, (await open_form(hass, entry))["flow_id"], {**TANK, "name": name, "control_entity": control})


async def configure(hass: HomeAssistant, flow_id: str, user_input: dict[str, Any]) -> dict[str, Any]:
    return await hass.config_entries.subentries.async_configure(flow_id, user_input)


def suggested(result: dict[str, Any]) -> dict[str, Any]:
    """The form's suggested values that are set."""
    return {k: v for k, v in fields(result).items() if v is not None}


def control_exclusions(result: dict[str, Any], field: str) -> list[str]:
    """The entities the form's ``field`` picker leaves out."""
    (selector,) = [v for k, v in result["data_schema"].schema.items() if str(k) == field]
    return list(selector.config.get("exclude_entities", []))


@pytest.mark.parametrize(
    ("stored", "kind", "control"),
    [
        (("heat_pump", HEAT_PUMP), "appliance", "climate.heat_pump"),
        (("heat_pump", {**HEAT_PUMP, "name": "Tank", "control_entity": "switch.boost"}), "appliance", "switch.boost"),
        (("battery", BATTERY), "appliance", "select.garage_battery_mode"),
        (("appliance", {**BOILER, "entity_id": "select.garage_battery_mode"}), "battery", "select.garage_battery_mode"),
        (("battery", {**BATTERY, "control_entity": "number.loft_power", "soc_entity": "sensor.loft_soc"}), "battery",
         "number.loft_power"),
        (None, "appliance", "input_boolean.dishwasher"),  # the sample entry's dishwasher
        (("appliance", BOILER), "heat_pump", "switch.boiler"),
    ],
    ids=["heat-pump-then-appliance", "tank-switch-then-appliance", "battery-then-appliance", "appliance-then-battery",
         "battery-then-battery", "appliance-then-appliance", "appliance-then-heat-pump"],
)
async def test_a_control_entity_another_device_controls_is_refused_by_every_form(
    hass: HomeAssistant, stored: tuple[str, dict[str, Any]] | None, kind: str, control: str
) -> None:
    """Whichever device came first, the next form refuses its control entity with a translated error; nothing is
    stored."""
    entry = sample_entry()
    entry.add_to_hass(hass)
    if stored:
        store(hass, entry, *stored)
    before = dict(entry.subentries)
    result = await submit(hass, entry, kind, control, "New device")
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {CONTROL_FIELD[kind]: "control_entity_in_use"}
    assert entry.subentries == before
    assert all(error_text(lang, kind, "control_entity_in_use") for lang in ("en", "de"))


@pytest.mark.parametrize(
    ("stored", "kind"),
    [(None, "battery"), (None, "heat_pump"), (("battery", {**BATTERY, "name": "Dishwasher"}), "appliance")],
    ids=["appliance-then-battery", "appliance-then-heat-pump", "battery-then-appliance"],
)
async def test_a_name_another_kind_of_device_has_is_refused(
    hass: HomeAssistant, stored: tuple[str, dict[str, Any]] | None, kind: str
) -> None:
    """Names are unique among all devices (case and surrounding blanks aside), not only within one kind: the sample
    entry's appliance "Dishwasher", or a battery of that name in its place."""
    entry = sample_entry()
    entry.add_to_hass(hass)
    if stored:
        hass.config_entries.async_remove_subentry(entry, "dishwasher")
        store(hass, entry, *stored)
    if kind == "heat_pump":
        result = await configure(hass, (await open_form(hass, entry))["flow_id"], {"name": " DISHWASHER", "store": "hot_water"})
    else:
        result = await submit(hass, entry, kind, "number.free" if kind == "battery" else "switch.free", "dishWasher ")
    assert (result["type"], result["errors"]) == (FlowResultType.FORM, {"name": "name_exists"})
    assert all(error_text(lang, kind, "name_exists") for lang in ("en", "de"))


async def test_two_heat_pump_forms_open_at_once_cannot_both_store_one_control_entity(hass: HomeAssistant) -> None:
    """Both forms pass the device step with the same thermostat; the first stores it. The second's last submit shows
    its device step again with the error and all it typed there; with another entity, its model step shows what it
    typed there, and it is stored."""
    entry = sample_entry()
    entry.add_to_hass(hass)
    second_device = {**DEVICE, "name": "Second heat pump", "max_kw": 5.0, "phase": "L3"}
    first = await device_step(hass, (await open_form(hass, entry))["flow_id"], DEVICE)
    second = await device_step(hass, (await open_form(hass, entry))["flow_id"], second_device)
    assert first["step_id"] == second["step_id"] == "model"
    assert (await configure(hass, first["flow_id"], MODEL))["type"] is FlowResultType.CREATE_ENTRY

    second_model = {**MODEL, "ua_w_per_k": 210, "capacity_kwh_per_k": 11}
    result = await configure(hass, second["flow_id"], second_model)
    assert (result["type"], result["step_id"]) == (FlowResultType.FORM, "space_heating")
    assert result["errors"] == {"control_entity": "control_entity_in_use"}
    typed = {k: v for k, v in second_device.items() if k not in FIRST}
    assert suggested(result) == typed
    result = await configure(hass, second["flow_id"], {**typed, "control_entity": "switch.boost"})
    assert result["step_id"] == "model"
    assert {k: fields(result)[k] for k in second_model} == second_model
    result = await configure(hass, second["flow_id"], second_model)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    stored = {name: (hp["control_entity"], hp["max_kw"], hp["ua_w_per_k"]) for name, hp in heat_pumps(entry).items()}
    assert stored == {"Heat pump": ("climate.heat_pump", 3.0, 150.0), "Second heat pump": ("switch.boost", 5.0, 210.0)}


async def test_two_heat_pump_forms_open_at_once_cannot_both_store_one_name(hass: HomeAssistant) -> None:
    """Both forms pass the first step with the same name; the first stores it. The second's last submit shows the
    first step again with the error and its name and store; with a new name, its device and model steps show what it
    typed there."""
    entry = sample_entry()
    entry.add_to_hass(hass)
    second_device = {**TANK, "name": "heat PUMP"}
    first = await device_step(hass, (await open_form(hass, entry))["flow_id"], DEVICE)
    second = await device_step(hass, (await open_form(hass, entry))["flow_id"], second_device)
    assert (await configure(hass, first["flow_id"], MODEL))["type"] is FlowResultType.CREATE_ENTRY

    result = await configure(hass, second["flow_id"], MODEL)
    assert (result["type"], result["step_id"], result["errors"]) == (FlowResultType.FORM, "user", {"name": "name_exists"})
    assert suggested(result) == {"name": "heat PUMP", "store": "hot_water"}
    result = await configure(hass, second["flow_id"], {"name": "Tank", "store": "hot_water"})
    assert (result["step_id"], result["errors"]) == ("hot_water", {})
    typed = {k: v for k, v in second_device.items() if k not in FIRST}
    assert suggested(result) == typed
    result = await configure(hass, second["flow_id"], typed)
    assert {k: fields(result)[k] for k in MODEL} == MODEL
    result = await configure(hass, second["flow_id"], MODEL)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert sorted(heat_pumps(entry)) == ["Heat pump", "Tank"]


async def test_an_appliance_stored_while_a_heat_pump_form_is_open_keeps_its_switch(hass: HomeAssistant) -> None:
    """The heat pump form passed its device step with a switch an appliance then takes: its last submit shows the
    device step again with the error."""
    entry = sample_entry()
    entry.add_to_hass(hass)
    result = await device_step(hass, (await open_form(hass, entry))["flow_id"], TANK)
    assert result["step_id"] == "model"
    assert (await submit(hass, entry, "appliance", "switch.boost", "Boost"))["type"] is FlowResultType.CREATE_ENTRY
    result = await configure(hass, result["flow_id"], MODEL)
    assert (result["step_id"], result["errors"]) == ("hot_water", {"control_entity": "control_entity_in_use"})
    assert heat_pumps(entry) == {}


async def test_a_reconfigure_form_loses_a_control_entity_taken_meanwhile_and_keeps_its_own(hass: HomeAssistant) -> None:
    """Reconfiguring a heat pump onto a switch another form then stores shows the device step again; its own current
    thermostat still passes."""
    entry = sample_entry()
    entry.add_to_hass(hass)
    store(hass, entry, "heat_pump", HEAT_PUMP)
    (own_id,) = [k for k, s in entry.subentries.items() if s.subentry_type == "heat_pump"]
    result = await entry.start_subentry_reconfigure_flow(hass, own_id)
    reconfigure = await device_step(hass, result["flow_id"], {**DEVICE, "control_entity": "switch.boost"})
    assert reconfigure["step_id"] == "model"
    assert (await configure(hass, (await submit(hass, entry, "heat_pump", "switch.boost", "Tank"))["flow_id"], MODEL))[
        "type"] is FlowResultType.CREATE_ENTRY

    result = await configure(hass, reconfigure["flow_id"], MODEL)
    assert (result["step_id"], result["errors"]) == ("space_heating", {"control_entity": "control_entity_in_use"})
    result = await configure(hass, reconfigure["flow_id"], {k: v for k, v in DEVICE.items() if k not in FIRST})
    result = await configure(hass, reconfigure["flow_id"], MODEL)
    assert result["reason"] == "reconfigure_successful"
    assert {name: hp["control_entity"] for name, hp in heat_pumps(entry).items()} == {
        "Heat pump": "climate.heat_pump", "Tank": "switch.boost"}


async def test_the_integrations_own_entities_and_other_devices_controls_are_left_out_of_the_pickers_and_refused(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """Each control picker leaves out the entities the integration registers (its device control switch among
    them) and those the entry's other devices control (docs/user/installation.md promises it); a form given one
    of its own anyway refuses it with a translated error. A reconfigured device's own entity stays offered."""
    registry = er.async_get(hass)
    registry.async_get_or_create("number", DOMAIN, "test_setpoint", suggested_object_id="agentic_hems_setpoint",
                                 config_entry=loaded_entry)
    own = sorted(e.entity_id for e in er.async_entries_for_config_entry(registry, loaded_entry.entry_id))
    assert {OWN_SWITCH, "number.agentic_hems_setpoint"} <= set(own)
    appliances = {key: data["entity_id"] for key, data in APPLIANCES.items()}  # the sample entry's three switches

    result = await hass.config_entries.subentries.async_init((loaded_entry.entry_id, "appliance"),
                                                             context={"source": "user"})
    assert control_exclusions(result, "entity_id") == sorted({*own, *appliances.values()})
    result = await hass.config_entries.subentries.async_init((loaded_entry.entry_id, "battery"),
                                                             context={"source": "user"})
    assert control_exclusions(result, "control_entity") == sorted({*own, *appliances.values()})
    assert control_exclusions(result, "soc_entity") == own
    result = await configure(hass, (await open_form(hass, loaded_entry))["flow_id"], {"name": "Tank", "store": "hot_water"})
    assert control_exclusions(result, "control_entity") == sorted({*own, *appliances.values()})
    result = await loaded_entry.start_subentry_reconfigure_flow(hass, "dishwasher")
    others = {entity for key, entity in appliances.items() if key != "dishwasher"}
    assert control_exclusions(result, "entity_id") == sorted({*own, *others})

    for kind, control in (("appliance", OWN_SWITCH), ("battery", "number.agentic_hems_setpoint"),
                          ("heat_pump", OWN_SWITCH)):
        result = await submit(hass, loaded_entry, kind, control, "New device")
        assert result["errors"] == {CONTROL_FIELD[kind]: "control_entity_own"}, kind
        assert all(error_text(lang, kind, "control_entity_own") for lang in ("en", "de"))
    assert sorted(loaded_entry.subentries) == sorted(APPLIANCES)


async def test_a_state_of_charge_sensor_is_one_batterys_own_and_never_the_integrations(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """The SoC picker leaves out the integration's entities (its "Planned state of charge" sensor among them) and
    the other batteries' SoC sensors; a form given one anyway refuses it, translated; the battery's own passes on
    reconfigure (so that two batteries cannot share one sensor, and the planned SoC is never offered as a reading)."""
    for soc in (NUMBER_ONLY["soc_entity"], "sensor.loft_soc"):
        hass.states.async_set(soc, "40", {"unit_of_measurement": "%", "device_class": "battery"})
    first = await add_battery(hass, loaded_entry, NUMBER_ONLY)
    assert first["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done(wait_background_tasks=True)
    (garage_id,) = [k for k, sub in loaded_entry.subentries.items() if sub.title == NUMBER_ONLY["name"]]
    planned = er.async_get(hass).async_get_entity_id("sensor", DOMAIN, f"{garage_id}_battery_planned_soc")
    assert planned is not None and hass.states.get(planned) is not None  # the integration's planned SoC
    own = sorted(e.entity_id for e in er.async_entries_for_config_entry(er.async_get(hass), loaded_entry.entry_id))
    assert planned in own

    result = await hass.config_entries.subentries.async_init((loaded_entry.entry_id, "battery"),
                                                             context={"source": "user"})
    assert control_exclusions(result, "soc_entity") == sorted({*own, NUMBER_ONLY["soc_entity"]})
    for soc, error in ((planned, "soc_entity_own"), (NUMBER_ONLY["soc_entity"], "soc_entity_in_use")):
        result = await configure(hass, result["flow_id"], {**NUMBER_ONLY, "name": "Loft battery", "soc_entity": soc})
        assert (result["step_id"], result["errors"]) == ("user", {"soc_entity": error})
        assert all(error_text(lang, "battery", error) for lang in ("en", "de"))
    result = await configure(hass, result["flow_id"], {**NUMBER_ONLY, "name": "Loft battery",
                                                       "soc_entity": "sensor.loft_soc"})
    assert result["type"] is FlowResultType.CREATE_ENTRY

    await hass.async_block_till_done(wait_background_tasks=True)
    own = sorted(e.entity_id for e in er.async_entries_for_config_entry(er.async_get(hass), loaded_entry.entry_id))
    result = await loaded_entry.start_subentry_reconfigure_flow(hass, garage_id)
    assert control_exclusions(result, "soc_entity") == sorted({*own, "sensor.loft_soc"})  # its own sensor offered
    result = await configure(hass, result["flow_id"], {**NUMBER_ONLY, "capacity_kwh": 15})
    assert result["reason"] == "reconfigure_successful"
    await hass.async_block_till_done(wait_background_tasks=True)


@pytest.mark.parametrize(
    ("kind", "changes", "field", "english"),
    [
        ("battery", {"capacity_kwh": 1e9}, "capacity_kwh", "Enter a usable capacity from 0.5 to 250 kWh."),
        ("battery", {"charge_kw": 51}, "charge_kw", "Enter a power from 0.1 to 50 kW."),
        ("battery", {"wear_cost": 2}, "wear_cost", "Enter a wear cost from 0 to 1 per kWh."),
        ("heat_pump", {"max_kw": 1e6}, "max_kw", "Enter the highest power from 0.1 to 50 kW."),
        ("heat_pump", {"min_run_min": 7}, "min_run_min",
         "Enter whole 15-minute slots from 0 to 1440 minutes (0, 15, 30, 45, …)."),
        ("appliance", {"power_kw": 1e6}, "power_kw", "Enter a power from 0.01 to 50 kW."),
    ],
    ids=["battery-capacity", "battery-power", "wear-cost", "heat-pump-power", "heat-pump-run", "appliance-power"],
)
async def test_an_absurd_number_is_refused_with_its_range_in_words(
    hass: HomeAssistant, kind: str, changes: dict[str, Any], field: str, english: str
) -> None:
    """Out-of-range numbers are refused with their range: a battery of 1,000,000,000 kWh, a 1,000,000 kW heat pump
    (not just "Enter a number above 0."), a 7-minute shortest run. The error, filled in with the form's placeholders
    as the frontend does, names the range."""
    entry = sample_entry()
    entry.add_to_hass(hass)
    if kind == "battery":
        result = await add_battery(hass, entry, {**NUMBER_ONLY, **changes})
    elif kind == "appliance":
        result = await add_appliance(hass, entry, {**BOILER, **changes})
    else:
        result = await device_step(hass, (await open_form(hass, entry))["flow_id"], {**DEVICE, **changes})
    (error,) = result["errors"].values()
    assert list(result["errors"]) == [field]
    assert error_text("en", kind, error).format(**result["description_placeholders"]) == english
    error_text("de", kind, error).format(**result["description_placeholders"])  # every placeholder given
    assert sorted(entry.subentries) == sorted(APPLIANCES)


async def test_a_heat_pumps_sensors_are_never_the_integrations_own_planned_values(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """The heat pump form's temperature and power pickers left the integration's own sensors in (its planned
    temperature is a temperature sensor, its planned power a power sensor): a heat pump measured by its own plan
    follows itself. The pickers leave them out, and a form given one refuses it with a translated error."""
    registry = er.async_get(hass)
    planned = registry.async_get_or_create(
        "sensor", DOMAIN, "test_planned_temperature", suggested_object_id="agentic_hems_heat_pump_planned_temperature",
        config_entry=loaded_entry, original_device_class="temperature",
    ).entity_id
    own = sorted(e.entity_id for e in er.async_entries_for_config_entry(registry, loaded_entry.entry_id))
    result = await configure(hass, (await open_form(hass, loaded_entry))["flow_id"], {"name": "Heat pump", "store": "space_heating"})
    for field in ("temperature_entity", "outdoor_entity", "power_entity"):
        assert control_exclusions(result, field) == own, field
    for field in ("temperature_entity", "outdoor_entity", "power_entity"):
        result = await device_step(hass, (await open_form(hass, loaded_entry))["flow_id"], {**DEVICE, field: planned})
        assert (result["type"], result["errors"]) == (FlowResultType.FORM, {field: "measurement_entity_own"}), field
    assert all(error_text(lang, "heat_pump", "measurement_entity_own") for lang in ("en", "de"))
    assert sorted(loaded_entry.subentries) == sorted(APPLIANCES)
