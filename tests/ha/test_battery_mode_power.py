"""A battery driven by a mode select plus a power number follows the whole-home plan through the gates, in a real HA.

The entities have the shapes of HA core's ``homevolt`` (its ``battery_mode`` select description: options
``idle``, ``inverter_charge``, ``inverter_discharge``, ``solar_charge``, ``frequency_reserve``; its ``setpoint`` number
description: 0 to 11000 W in 100 W steps), through the general ``select`` (``options`` attribute, ``select_option``)
and ``number`` (``min``/``max``/``step``/``unit_of_measurement`` attributes, ``set_value``): here input_select or a
template select, input_number or a template number.

Oracles: the plan in force at each boundary (its own arrays), mapped by hand: the mode by the sign of the planned
power beyond 0.05 kW, the power as |kW| x 1000 on the number's 100 W step, nothing set in an idle slot.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta
import logging
from types import SimpleNamespace
from typing import Any

from freezegun.api import FrozenDateTimeFactory
import numpy as np
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    MockModule,
    async_capture_events,
    async_fire_time_changed,
    mock_integration,
    mock_platform,
)

from custom_components.agentic_hems.const import DOMAIN
from custom_components.agentic_hems.gates.models import GridGrant
from custom_components.agentic_hems.planning.home_config import HomeConfig, parse_battery
from custom_components.agentic_hems.planning.home_exec import mode_power_value, plan_actions
from custom_components.agentic_hems.planning.home_manager import HomePlanManager
from custom_components.agentic_hems.prices.curve import floor_slot
from custom_components.agentic_hems.scheduling.home_model import HomePlan
from homeassistant.auth.models import User
from homeassistant.core import Context, HomeAssistant
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util

from .conftest import NOW
from .test_home_plan import BATTERY, home_entry, solar_wh

MODE = "input_select.inverter_mode"
POWER = "input_number.inverter_power"
OPTIONS = {"charge": "inverter_charge", "discharge": "inverter_discharge", "idle": "idle"}
SELECT_OPTIONS = ["idle", "inverter_charge", "inverter_discharge", "solar_charge", "frequency_reserve"]
MODE_BATTERY = {**BATTERY, "control_entity": MODE, "control_modes": OPTIONS, "power_setpoint_entity": POWER}
T_MODE, T_POWER = "select.inverter_mode", "number.inverter_power"  # the template entities
TEMPLATE_BATTERY = {**MODE_BATTERY, "control_entity": T_MODE, "power_setpoint_entity": T_POWER}
SLOT = timedelta(minutes=15)
SOC = "50"


def mode(kw: float) -> str:
    return "charge" if kw > 0.05 else "discharge" if kw < -0.05 else "idle"


def watts(kw: float) -> float:
    """The power number's value for a planned power: its magnitude in W on the 100 W step (min 0, max 11000)."""
    return min(round(abs(kw) * 10) * 100.0, 11000.0)


def calls(events: list[Any], entity_id: str) -> list[tuple[str, Any]]:
    return [
        (e.data["service"], e.data["service_data"].get("option", e.data["service_data"].get("value")))
        for e in events
        if e.data["domain"] != DOMAIN and e.data["service_data"].get("entity_id") == entity_id
    ]


async def _house(hass: HomeAssistant, *, template: bool = False, available: bool = True) -> str:
    """The mode select and power number (input helpers, or template ones that ignore every command), SoC and PV.

    The template select is unavailable unless ``available``.
    """
    await hass.config.async_set_time_zone("Europe/Brussels")
    assert await async_setup_component(hass, "homeassistant", {})
    if template:
        assert await async_setup_component(hass, "template", {"template": [{
            "select": [{"name": "inverter_mode", "state": "idle", "options": f"{{{{ {SELECT_OPTIONS} }}}}",
                        "select_option": [], "availability": f"{{{{ {available} }}}}"}],
            "number": [{"name": "inverter_power", "state": "0", "min": 0, "max": 11000, "step": 100,
                        "unit_of_measurement": "W", "set_value": []}],
        }]})
    else:
        assert await async_setup_component(hass, "input_select", {"input_select": {"inverter_mode": {
            "options": SELECT_OPTIONS, "initial": "idle"}}})
        assert await async_setup_component(hass, "input_number", {"input_number": {"inverter_power": {
            "min": 0, "max": 11000, "step": 100, "unit_of_measurement": "W", "initial": 0}}})
    await hass.async_block_till_done()
    hass.states.async_set("sensor.battery_soc", SOC, {"unit_of_measurement": "%"})

    async def async_get_solar_forecast(hass: HomeAssistant, entry_id: str) -> dict[str, Any] | None:
        return {"wh_hours": solar_wh(NOW)}

    mock_integration(hass, MockModule("solar_test"))
    mock_platform(hass, "solar_test.energy", SimpleNamespace(async_get_solar_forecast=async_get_solar_forecast))
    solar = MockConfigEntry(domain="solar_test", title="roof")
    solar.add_to_hass(hass)
    return solar.entry_id


async def _start(hass: HomeAssistant, solar_id: str, battery: dict[str, Any], control: str) -> MockConfigEntry:
    entry = home_entry(solar_id, "01JBATMODEPOWERENTRY000000", battery=battery, battery_control=control)
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)
    await entry.runtime_data.control.async_set_allow_control(True)
    return entry


async def _boundary(hass: HomeAssistant, freezer: FrozenDateTimeFactory, at: datetime) -> None:
    freezer.move_to(at)
    async_fire_time_changed(hass, at)
    await hass.async_block_till_done(wait_background_tasks=True)


async def _execute_now(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, entry: MockConfigEntry, sent: int
) -> tuple[float, list[dict[str, Any]]]:
    """Carry out the plan's slot at NOW with device control allowed; return its planned kW and the gates' traces.

    After each of the first ``sent`` device calls HA's frozen clock moves past the read-back's 1 s wait.
    """
    manager: HomePlanManager = entry.runtime_data.home
    events = async_capture_events(hass, "call_service")
    task = hass.async_create_task(manager.executor.async_execute(manager.result.plan, NOW))
    for step in range(sent):
        for _ in range(1000):  # until the call is sent and its read-back waits
            if len([e for e in events if e.data["domain"] != DOMAIN]) > step:
                break
            await asyncio.sleep(0)
        later = dt_util.utcnow() + timedelta(seconds=2)
        freezer.move_to(later)
        async_fire_time_changed(hass, later)
    records = await task
    return float(manager.result.plan.battery_kw["battery1"][0]), records


async def test_each_slot_sets_the_mode_then_the_planned_power_and_an_idle_slot_the_mode_only(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """Twelve boundaries of the sample evening (charge slots: the hand-built plan of the plan_actions test)."""
    freezer.move_to(NOW)
    solar_id = await _house(hass)
    entry = await _start(hass, solar_id, MODE_BATTERY, "automatic")
    manager: HomePlanManager = entry.runtime_data.home
    events = async_capture_events(hass, "call_service")
    first = dt_util.as_utc(NOW).replace(minute=15, second=0)
    shown, power, expected, modes = "idle", 0.0, [], []
    for k in range(12):
        await _boundary(hass, freezer, first + k * SLOT)
        plan = manager.result.plan
        assert plan is not None and plan.start == first + k * SLOT
        kw = float(plan.battery_kw["battery1"][0])
        modes.append(mode(kw))
        if OPTIONS[mode(kw)] != shown:
            shown = OPTIONS[mode(kw)]
            expected.append(("select_option", shown))
        if mode(kw) != "idle" and watts(kw) != power:
            power = watts(kw)
            expected.append(("set_value", power))
        assert hass.states.get(MODE).state == shown
        assert float(hass.states.get(POWER).state) == power
    ordered = [c for e in events for c in calls([e], MODE) + calls([e], POWER)]
    assert ordered == expected  # each slot: the mode first, then its power
    assert modes == ["discharge"] * 7 + ["idle"] * 5  # the sample evening: discharge at its peak, then hold


async def test_an_unavailable_mode_select_leaves_the_power_unset_with_a_trace_and_a_warning(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, caplog: pytest.LogCaptureFixture
) -> None:
    freezer.move_to(NOW)
    solar_id = await _house(hass, template=True, available=False)
    events = async_capture_events(hass, "call_service")
    entry = await _start(hass, solar_id, TEMPLATE_BATTERY, "automatic")
    with caplog.at_level(logging.WARNING):
        kw, traces = await _execute_now(hass, freezer, entry, 0)
    assert mode(kw) != "idle"  # the evening's first slot moves the battery
    assert calls(events, T_MODE) == [] and calls(events, T_POWER) == []
    assert hass.states.get(T_POWER).state == "0.0"
    assert [(t["entity_id"], t["outcome"]) for t in traces] == [(T_MODE, "blocked")]
    assert (f"{T_POWER} is not set to {watts(kw)}: the battery's mode {T_MODE} shows unavailable, "
            f"not {OPTIONS[mode(kw)]}") in caplog.text


@pytest.mark.parametrize("power_state", ["unavailable", "unknown"])
async def test_an_unavailable_power_number_leaves_the_mode_as_it_was_with_the_powers_refusal_as_the_trace(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, caplog: pytest.LogCaptureFixture, power_state: str
) -> None:
    """The power number is unavailable (its inverter offline to HA): the mode is not changed for a power the gates
    would refuse, so the battery does not run the slot's mode at the old power. Oracle: the states set by hand."""
    freezer.move_to(NOW)
    solar_id = await _house(hass)
    entry = await _start(hass, solar_id, MODE_BATTERY, "automatic")
    hass.states.async_set(POWER, power_state, {"min": 0, "max": 11000, "step": 100, "unit_of_measurement": "W"})
    events = async_capture_events(hass, "call_service")
    with caplog.at_level(logging.WARNING):
        kw, traces = await _execute_now(hass, freezer, entry, 0)
    assert mode(kw) != "idle"  # the evening's first slot moves the battery
    assert calls(events, MODE) == [] and calls(events, POWER) == []
    assert (hass.states.get(MODE).state, hass.states.get(POWER).state) == ("idle", power_state)
    assert [(t["entity_id"], t["outcome"]) for t in traces] == [(POWER, "blocked")]
    assert (f"the battery's mode {MODE} is not set to {OPTIONS[mode(kw)]}: its power setpoint {POWER} is "
            f"{power_state}; the battery stays as it was") in caplog.text


async def test_a_select_that_does_not_take_the_mode_fails_as_a_phantom_success_and_the_power_is_not_set(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    freezer.move_to(NOW)
    solar_id = await _house(hass, template=True)
    entry = await _start(hass, solar_id, TEMPLATE_BATTERY, "automatic")
    kw, traces = await _execute_now(hass, freezer, entry, 1)
    assert [(t["entity_id"], t["outcome"]) for t in traces] == [("select.inverter_mode", "failed")]
    execution = traces[0]["gate_results"][-1]
    assert execution["evidence"]["error"] == "phantom success"
    assert OPTIONS[mode(kw)] in execution["reason"]
    assert hass.states.get("number.inverter_power").state == "0.0"


async def test_a_power_number_that_does_not_follow_fails_as_a_phantom_success(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """The select (an input_select) takes the mode; the template power number keeps 0 whatever it is sent."""
    freezer.move_to(NOW)
    solar_id = await _house(hass, template=True)
    assert await async_setup_component(hass, "input_select", {"input_select": {"inverter_mode": {
        "options": SELECT_OPTIONS, "initial": "idle"}}})
    entry = await _start(hass, solar_id, {**MODE_BATTERY, "power_setpoint_entity": "number.inverter_power"},
                         "automatic")
    kw, traces = await _execute_now(hass, freezer, entry, 2)
    assert [(t["entity_id"], t["outcome"]) for t in traces] == [(MODE, "executed"), ("number.inverter_power", "failed")]
    assert traces[1]["gate_results"][-1]["evidence"]["error"] == "phantom success"
    assert traces[1]["candidate"]["params"] == {"value": watts(kw)}
    assert hass.states.get(MODE).state == OPTIONS[mode(kw)]


async def test_approval_mode_asks_for_the_mode_and_the_power_and_sets_only_what_was_approved(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, hass_admin_user: User
) -> None:
    freezer.move_to(NOW)
    solar_id = await _house(hass)
    entry = await _start(hass, solar_id, MODE_BATTERY, "approval")
    manager: HomePlanManager = entry.runtime_data.home
    request = entry.runtime_data.grid.records.requests[manager.approvals.request_id]
    plan = manager.result.plan
    slot, kw = plan.start, float(plan.battery_kw["battery1"][0])
    at_slot = [a for a in request["actions"] if a["start"] == slot.isoformat() and a["entity_id"] in (MODE, POWER)]
    assert [(a["type"], a["entity_id"]) for a in at_slot] == [
        ("home_battery_mode", MODE), ("home_battery_mode_power", POWER)]
    assert (at_slot[1]["option"], at_slot[1]["p_kw"], at_slot[1]["mode_entity"]) == (
        OPTIONS[mode(kw)], round(kw, 3), MODE)
    word = "charge" if kw > 0 else "discharge"
    assert f"- Home battery ({POWER}): {word} {abs(round(kw, 3)):g} kW" in request["summary"]
    assert (hass.states.get(MODE).state, hass.states.get(POWER).state) == ("idle", "0.0")  # nothing yet
    await hass.services.async_call(DOMAIN, "approve_authorization", {"request_id": request["request_id"]},
                                   blocking=True, context=Context(user_id=hass_admin_user.id))
    await hass.async_block_till_done(wait_background_tasks=True)
    assert hass.states.get(MODE).state == OPTIONS[mode(kw)]
    assert float(hass.states.get(POWER).state) == watts(kw)
    record = await entry.runtime_data.control.async_evaluate(
        source_agent="grid", candidate={"intent": "set_value", "device_alias": POWER, "params": {"value": 5000.0}},
        context=Context(), raw_input="set the battery power", slot_start=slot,
        grant=GridGrant(request_id=request["request_id"], slot_start=slot))
    assert record["outcome"] == "blocked"
    assert record["gate_results"][-1]["reason"] == (
        f"blocked by policy: set_value 5000 on {POWER} is not the approved set_value {watts(kw):g} "
        f"for slot {slot.isoformat()}")
    assert float(hass.states.get(POWER).state) == watts(kw)


@pytest.mark.parametrize(
    ("attributes", "p_kw", "value"),
    [
        ({"min": 0, "max": 5000, "step": 100, "unit_of_measurement": "W"}, -2.345, 2300.0),  # magnitude, on the step
        ({"min": 0, "max": 5000, "step": 100, "unit_of_measurement": "W"}, 2.36, 2400.0),
        ({"min": 0, "max": 2000, "step": 100, "unit_of_measurement": "W"}, 3.0, 2000.0),  # clipped to its max
        ({"min": -5000, "max": 5000, "step": 1, "unit_of_measurement": "W"}, -2.345, -2345.0),  # signed as the plan
        ({"min": -3, "max": 3, "step": 0.5, "unit_of_measurement": "kW"}, -3.6, -3.0),  # signed, clipped to its min
        ({"min": 0.5, "max": 10, "step": 0.1, "unit_of_measurement": "kW"}, 0.2, 0.5),  # raised to its min
    ],
)
async def test_the_power_value_is_in_the_numbers_unit_on_its_step_within_its_range_signed_as_its_range_says(
    hass: HomeAssistant, attributes: dict[str, Any], p_kw: float, value: float
) -> None:
    hass.states.async_set("number.inverter_power", "0", attributes)
    assert mode_power_value(hass, "number.inverter_power", p_kw) == pytest.approx(value, abs=1e-9)


async def test_a_charge_a_discharge_and_an_idle_slot_of_a_hand_built_plan_through_the_gates(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """Charge 2.04 kW, discharge 1.46 kW, idle: inverter_charge then 2000 W, inverter_discharge then 1500 W, idle."""
    freezer.move_to(NOW)
    solar_id = await _house(hass)
    entry = await _start(hass, solar_id, MODE_BATTERY, "automatic")
    start = floor_slot(dt_util.utcnow())
    kw = {"battery1": np.array([2.04, -1.46, 0.0])}
    plan = replace(entry.runtime_data.home.result.plan, start=start, battery_kw=kw)
    events = async_capture_events(hass, "call_service")
    outcomes = []
    for k in range(3):
        freezer.move_to(start + k * SLOT)
        records = await entry.runtime_data.home.executor.async_execute(plan, start + k * SLOT)
        outcomes.append([(r["entity_id"], r["outcome"]) for r in records])
    assert [c for e in events for c in calls([e], MODE) + calls([e], POWER)] == [
        ("select_option", "inverter_charge"), ("set_value", 2000.0),
        ("select_option", "inverter_discharge"), ("set_value", 1500.0),
        ("select_option", "idle"),
    ]
    assert outcomes == [[(MODE, "executed"), (POWER, "executed")]] * 2 + [[(MODE, "executed")]]
    assert (hass.states.get(MODE).state, float(hass.states.get(POWER).state)) == ("idle", 1500.0)


def test_plan_actions_set_the_mode_then_the_power_and_an_idle_slot_only_the_mode() -> None:
    """A hand-built 4-slot plan (charge 2 kW twice, idle, discharge 1.5 kW): the request actions, written out."""
    start = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    kw = np.array([2.0, 2.0, 0.01, -1.5])
    plan = HomePlan(
        start=start, resolution=SLOT, horizon_end=start + 4 * SLOT, import_kw=np.zeros(4), export_kw=np.zeros(4),
        curtail_kw=np.zeros(4), pv_kw=np.zeros(4), base_load_kw=np.zeros(4), battery_kw={"b": kw},
        soc_kwh={"b": np.zeros(5)}, load_kw={}, starts={}, unplanned={}, cost=0.0, net_cost=0.0, baseline_cost=0.0,
        baseline_net_cost=0.0, currency="EUR",
    )
    config = HomeConfig(batteries=(parse_battery("b", MODE_BATTERY),))
    at = [(start + i * SLOT).isoformat() for i in range(5)]
    fixed = {"entity_id": POWER, "battery": "b", "type": "home_battery_mode_power", "mode_entity": MODE}
    assert plan_actions(plan, config, start) == [
        {"start": at[0], "end": at[2], "type": "home_battery_mode", "entity_id": MODE, "battery": "b",
         "mode": "charge", "option": "inverter_charge"},
        {"start": at[2], "end": at[3], "type": "home_battery_mode", "entity_id": MODE, "battery": "b",
         "mode": "idle", "option": "idle"},
        {"start": at[3], "end": at[4], "type": "home_battery_mode", "entity_id": MODE, "battery": "b",
         "mode": "discharge", "option": "inverter_discharge"},
        {"start": at[0], "end": at[2], **fixed, "option": "inverter_charge", "p_kw": 2.0},
        {"start": at[3], "end": at[4], **fixed, "option": "inverter_discharge", "p_kw": -1.5},
    ]
