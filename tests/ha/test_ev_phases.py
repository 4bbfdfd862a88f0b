"""An EV charger that switches between one and three phases, and one whose reported power is read back, in a real HA.

The charger has a current number (wallbox shape: no unit, 6..16 A step 1), a charging switch, a phase select (two
options, as go-e's and evcc-style phase selects) and a charging power sensor in W (peblar's and wallbox's power
sensors). Each slot's commands run through the gates as the scheduler's. Oracle, by hand: one phase where the slot's
power lies below 3 x 6 A x 230 V = 4.14 kW, else three, unless the select changed less than the interval ago; the
current is whole amperes at or below the power on those phases, within 6..16 A.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import datetime, timedelta
import math
from typing import Any

from freezegun.api import FrozenDateTimeFactory
import numpy as np
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_fire_time_changed

from custom_components.agentic_hems.const import DEFAULT_OPTIONS, DOMAIN
from custom_components.agentic_hems.planning.ev_exec import async_charger_slot, planned_kw
from custom_components.agentic_hems.scheduling.plan import Plan
from homeassistant.config_entries import ConfigSubentryData
from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util

from .conftest import NOW
from .test_ev_charger import CURRENT, EV, GRID, SLOT, SWITCH, _boundary, _entry

PHASES = "input_select.ev_phases"
POWER = "sensor.ev_power"
ONE, THREE = "Force 1 phase", "Force 3 phases"
PHASED = {**EV, "charger_phase_entity": PHASES, "charger_phase_one": ONE, "charger_phase_three": THREE,
          "charger_phase_interval_min": 30, "charger_power_entity": POWER}


def oracle_amps(kw: float, phases: int) -> int:
    """Whole amperes at or below ``kw`` on ``phases`` phases of 230 V, within 6..16 A."""
    return min(max(math.floor(kw * 1000 / (phases * 230) + 1e-4), 6), 16)


async def _charger(hass: HomeAssistant, freezer: FrozenDateTimeFactory) -> MockConfigEntry:
    entry = await _entry(hass, freezer, PHASED, power_limit_kw=7.0)
    assert await async_setup_component(hass, "input_select", {"input_select": {
        "ev_phases": {"options": ["Auto", ONE, THREE], "initial": THREE}}})
    hass.states.async_set(POWER, "0", {"unit_of_measurement": "W", "device_class": "power"})
    await hass.async_block_till_done()
    return entry


def _plan(entry: MockConfigEntry, first: datetime, kws: list[float]) -> Plan:
    """The stored plan with ``kws`` from the slot at ``first`` on (0 elsewhere)."""
    plan = entry.runtime_data.planner.states["ev"].plan
    assert plan is not None and plan.feasible and plan.power_kw.size > 0, plan
    power = np.zeros(plan.power_kw.size)
    index = (first - plan.curve_start) // plan.resolution
    power[index : index + len(kws)] = kws
    return replace(plan, power_kw=power)


async def _drive(hass: HomeAssistant, freezer: FrozenDateTimeFactory, entry: MockConfigEntry, plan: Plan,
                 moment: datetime, intent: str | None) -> list[dict[str, Any]]:
    """Run the charger's slot at ``moment``, HA's frozen clock moved on by 2 s whenever it waits (a gate's or the
    read-back's wait of execution_wait_s = 1 s runs out); returns its traces."""
    appliance = entry.runtime_data.planner.appliances["ev"]
    task = hass.async_create_task(async_charger_slot(
        hass, entry.runtime_data.control, appliance, plan=plan, moment=moment, intent=intent, grid_entity=GRID))
    now = dt_util.utcnow()
    for _ in range(20):
        for _ in range(500):
            if task.done():
                return task.result()
            await asyncio.sleep(0)
        now += timedelta(seconds=2)
        freezer.move_to(now)
        async_fire_time_changed(hass, now)
    return await task


async def _slot(hass: HomeAssistant, freezer: FrozenDateTimeFactory, entry: MockConfigEntry, plan: Plan,
                moment: datetime, intent: str | None) -> list[tuple[str, str, Any]]:
    """Run the charger's slot at ``moment``; returns its commands as (intent, entity, value or option or outcome)."""
    records = await _drive(hass, freezer, entry, plan, moment, intent)
    return [(r["candidate"]["intent"], r["candidate"]["device_alias"],
             (r["candidate"].get("params") or {}).get("value", (r["candidate"].get("params") or {}).get("option")),
             ) if r["outcome"] == "executed" else ("not executed", r["candidate"]["device_alias"], r["outcome"])
            for r in records]


async def test_the_phases_follow_the_planned_power_stopping_for_each_switch_at_most_once_per_interval(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """8 kW, 2 kW, 8 kW, 8 kW, 2.2 kW + 3 kW export, then the stop: three phases, one (stop, switch, current, start),
    still one 15 min after that switch (the 30 min interval), three again, and three for 5.2 kW with the surplus."""
    entry = await _charger(hass, freezer)
    first = dt_util.as_utc(NOW).replace(minute=45, second=0)
    plan = _plan(entry, first, [8.0, 2.0, 8.0, 8.0, 2.2])
    steps: list[list[tuple[str, str, Any]]] = []
    for k, intent in enumerate(["start", None, None, None, None, "stop"]):
        moment = first + k * SLOT
        freezer.move_to(moment)
        hass.states.async_set(GRID, "-3000" if k == 4 else "500", {"unit_of_measurement": "W"})
        hass.states.async_set(POWER, "9000", {"unit_of_measurement": "W", "device_class": "power"})
        steps.append(await _slot(hass, freezer, entry, plan, moment, intent))
    stop, start = ("stop", SWITCH, None), ("start", SWITCH, None)
    assert steps == [
        [("set_value", CURRENT, oracle_amps(8.0, 3)), start],
        [stop, ("select_option", PHASES, ONE), ("set_value", CURRENT, oracle_amps(2.0, 1)), start],
        [("set_value", CURRENT, oracle_amps(8.0, 1))],  # 16 A on one phase: the switch was 15 min ago
        [stop, ("select_option", PHASES, THREE), ("set_value", CURRENT, oracle_amps(8.0, 3)), start],
        [("set_value", CURRENT, oracle_amps(5.2, 3))],  # 2.2 kW planned + 3 kW exported: three phases
        [stop],
    ]
    assert [oracle_amps(8.0, 3), oracle_amps(2.0, 1), oracle_amps(8.0, 1)] == [11, 8, 16]
    assert hass.states.get(SWITCH).state == "off" and hass.states.get(PHASES).state == THREE
    assert not ir.async_get(hass).async_get_issue(DOMAIN, "charger_not_drawing_ev")


async def test_a_phase_switch_waits_for_the_interval_from_the_selects_last_change(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """A person set the select 10 min ago: a 2 kW slot stays on three phases at the 6 A minimum (no stop)."""
    entry = await _charger(hass, freezer)
    first = dt_util.as_utc(NOW).replace(minute=45, second=0)
    freezer.move_to(first - timedelta(minutes=10))
    hass.states.async_set(PHASES, THREE, {"options": ["Auto", ONE, THREE]}, force_update=True)
    hass.states.async_set(PHASES, ONE, {"options": ["Auto", ONE, THREE]})
    hass.states.async_set(PHASES, THREE, {"options": ["Auto", ONE, THREE]})
    freezer.move_to(first)
    hass.states.async_set(POWER, "4000", {"unit_of_measurement": "W"})
    steps = await _slot(hass, freezer, entry, _plan(entry, first, [2.0]), first, "start")
    assert steps == [("set_value", CURRENT, 6), ("start", SWITCH, None)]
    assert hass.states.get(PHASES).state == THREE


async def _plain(hass: HomeAssistant, freezer: FrozenDateTimeFactory, ev: dict[str, Any]) -> MockConfigEntry:
    """A charger whose ``switch.ev_box`` and ``select.ev_phases`` are states without an integration behind them."""
    entry = await _entry(hass, freezer, ev, power_limit_kw=7.0)
    freezer.move_to(dt_util.as_utc(NOW).replace(minute=45, second=0))  # the first slot: these states are fresh
    hass.states.async_set("switch.ev_box", "on")
    hass.states.async_set("select.ev_phases", THREE, {"options": ["Auto", ONE, THREE]})
    hass.states.async_set(POWER, "9000", {"unit_of_measurement": "W"})
    await hass.async_block_till_done(wait_background_tasks=True)  # a replan these states start has ended
    return entry


@pytest.mark.parametrize(
    ("broken", "expected"),
    [
        # the stop cannot act (no switch integration): no phase switch, the current for three phases, no start
        ({"entity_id": "switch.ev_box", "charger_phase_entity": PHASES},
         [("not executed", "switch.ev_box", "failed"), ("set_value", CURRENT, 6)]),
        # the phase select cannot act (the gates find no select service): the charger stays on three phases and is started again after its current
        ({"entity_id": SWITCH, "charger_phase_entity": "select.ev_phases"},
         [("stop", SWITCH, None), ("not executed", "select.ev_phases", "blocked"), ("set_value", CURRENT, 6),
          ("start", SWITCH, None)]),
    ],
)
async def test_a_step_that_does_not_go_through_leaves_nothing_half_done(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, caplog: pytest.LogCaptureFixture,
    broken: dict[str, Any], expected: list[tuple[str, str, Any]],
) -> None:
    """A 2 kW slot while charging on three phases: the stop or the phase switch fails; the charge goes on as it was."""
    entry = await _plain(hass, freezer, {**PHASED, "charger_phase_interval_min": 0, **broken})
    first = dt_util.as_utc(NOW).replace(minute=45, second=0)
    plan = _plan(entry, first, [2.0])  # taken first: a switch-on by hand withdraws the waiting plan
    await hass.services.async_call("input_number", "set_value", {"entity_id": CURRENT, "value": 10}, blocking=True)
    if broken["entity_id"] == SWITCH:
        await hass.services.async_call("input_boolean", "turn_on", {"entity_id": SWITCH}, blocking=True)
    if broken["charger_phase_entity"] == PHASES:
        assert await async_setup_component(hass, "input_select", {"input_select": {
            "ev_phases": {"options": ["Auto", ONE, THREE], "initial": THREE}}})
    steps = await _slot(hass, freezer, entry, plan, first, None)
    assert steps == expected
    assert hass.states.get(broken["charger_phase_entity"]).state == THREE
    assert hass.states.get(broken["entity_id"]).state == "on"
    assert ("phases not switched" if broken["entity_id"] != SWITCH else "it stays on 3") in caplog.text


@pytest.mark.parametrize("phase_state", ["unavailable", "unknown"])
async def test_a_phase_entity_that_is_unavailable_does_not_stop_a_charge_it_cannot_switch(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, caplog: pytest.LogCaptureFixture, phase_state: str
) -> None:
    """A 2 kW slot while charging, the phase select unavailable (its charger offline to HA): the switch's refusal is
    known before any stop, so the charger is not stopped for it. The phase command's refusal is the trace, the charge
    goes on as it was (switch on, 10 A) and a warning says so. Oracle: the states set by hand before the slot."""
    entry = await _plain(hass, freezer, {**PHASED, "charger_phase_interval_min": 0})
    first = dt_util.as_utc(NOW).replace(minute=45, second=0)
    plan = _plan(entry, first, [2.0])  # taken first: a switch-on by hand withdraws the waiting plan
    await hass.services.async_call("input_number", "set_value", {"entity_id": CURRENT, "value": 10}, blocking=True)
    await hass.services.async_call("input_boolean", "turn_on", {"entity_id": SWITCH}, blocking=True)
    assert await async_setup_component(hass, "input_select", {"input_select": {
        "ev_phases": {"options": ["Auto", ONE, THREE], "initial": THREE}}})
    hass.states.async_set(PHASES, phase_state, {"options": ["Auto", ONE, THREE]})
    steps = await _slot(hass, freezer, entry, plan, first, None)
    assert steps == [("not executed", PHASES, "blocked")]
    assert (hass.states.get(SWITCH).state, float(hass.states.get(CURRENT).state)) == ("on", 10.0)
    assert "the phases could not be switched" in caplog.text


async def test_a_charger_that_does_not_draw_gets_a_repair_that_goes_when_it_draws(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, caplog: pytest.LogCaptureFixture
) -> None:
    """The car draws 0 W after the start (the setpoint and the start executed): a warning and the repair issue; the
    next slot (its current set again) it draws 7.6 kW and the issue is removed."""
    entry = await _charger(hass, freezer)
    first = dt_util.as_utc(NOW).replace(minute=45, second=0)
    plan = _plan(entry, first, [8.0, 8.0])
    freezer.move_to(first)
    records = await _drive(hass, freezer, entry, plan, first, "start")
    assert [(r["candidate"]["intent"], r["outcome"]) for r in records] == [("set_value", "executed"),
                                                                          ("start", "executed")]
    issue = ir.async_get(hass).async_get_issue(DOMAIN, "charger_not_drawing_ev")
    assert issue is not None and issue.translation_key == "charger_not_drawing"
    assert issue.translation_placeholders == {"appliance": "EV charger", "sensor": POWER, "reading": "0 W",
                                              "asked": "7.59 kW (11 A)"}
    assert "EV charger draws 0 W, not the 7.59 kW (11 A)" in caplog.text
    moment = first + SLOT
    freezer.move_to(moment)
    await hass.services.async_call("input_number", "set_value", {"entity_id": CURRENT, "value": 6}, blocking=True)
    hass.states.async_set(POWER, "7600", {"unit_of_measurement": "W"})  # a person lowered the current; the car draws
    records = await _drive(hass, freezer, entry, plan, moment, None)
    assert [(r["candidate"]["intent"], r["outcome"]) for r in records] == [("set_value", "executed")]
    assert ir.async_get(hass).async_get_issue(DOMAIN, "charger_not_drawing_ev") is None


async def test_a_charger_started_and_stopped_by_buttons_follows_its_plan_and_phases(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """Start and stop buttons (template buttons switching the input_boolean, here the car's charging) in place
    of a switch: the start presses start, a phase switch presses stop first and start after, the stop presses stop."""
    ev = {**PHASED, "entity_id": "button.ev_start", "charger_stop_entity": "button.ev_stop"}
    entry = await _entry(hass, freezer, ev, power_limit_kw=7.0)
    assert await async_setup_component(hass, "input_select", {"input_select": {
        "ev_phases": {"options": ["Auto", ONE, THREE], "initial": THREE}}})
    buttons = [{"name": f"EV {word}", "unique_id": f"ev_{word}", "press": [
        {"action": f"input_boolean.turn_{state}", "target": {"entity_id": SWITCH}}]}
        for word, state in (("start", "on"), ("stop", "off"))]
    assert await async_setup_component(hass, "template", {"template": [{"button": buttons}]})
    await hass.async_block_till_done()
    hass.states.async_set(POWER, "9000", {"unit_of_measurement": "W"})
    first = dt_util.as_utc(NOW).replace(minute=45, second=0)
    plan = _plan(entry, first, [8.0, 2.0])
    seen = []
    for k, intent in enumerate(["start", None, "stop"]):
        moment = first + k * SLOT
        freezer.move_to(moment)
        seen.append(await _slot(hass, freezer, entry, plan, moment, intent))
        seen.append(hass.states.get(SWITCH).state)
    start, stop = ("press", "button.ev_start", None), ("press", "button.ev_stop", None)
    assert seen == [
        [("set_value", CURRENT, 11), start], "on",
        [stop, ("select_option", PHASES, ONE), ("set_value", CURRENT, 8), start], "on",
        [stop], "off",
    ]


async def test_the_scheduler_switches_phases_at_its_slot_boundaries(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """No whole-home plan: 11.5 kWh is four 11 kW slots and one 2 kW slot. At each boundary the real scheduler leaves
    the select, the current and the switch as an oracle walking the same slots says: one phase and 8 A in the 2 kW
    slot, three phases and 15 A (capped at 16) otherwise, a switch at most once per 30 min from the select's change."""
    await hass.config.async_set_time_zone("Europe/Brussels")
    freezer.move_to(NOW)
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, "input_number", {"input_number": {
        "ev_current": {"min": 6, "max": 16, "step": 1, "initial": 6}}})
    assert await async_setup_component(hass, "input_boolean", {"input_boolean": {"ev_charger": {}}})
    assert await async_setup_component(hass, "input_select", {"input_select": {
        "ev_phases": {"options": ["Auto", ONE, THREE], "initial": THREE}}})
    data = {k: v for k, v in {**PHASED, "energy_kwh": 11.5}.items() if k != "charger_power_entity"}
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
    planner = entry.runtime_data.planner
    plan = planner.states["ev"].plan
    assert plan is not None and plan.method != "home_milp"  # the appliance planner's; read again each slot below
    first = dt_util.as_utc(NOW).replace(minute=15, second=0)
    phases, changed = 3, dt_util.utcnow()  # the oracle's phases and the select's last change
    charged = []
    for k in range(44):
        moment = first + k * SLOT
        kw = planned_kw(planner.states["ev"].plan, moment)  # the plan in force (a replan may move what is left)
        await _boundary(hass, freezer, moment)
        assert hass.states.get(SWITCH).state == ("on" if kw > 0 else "off"), moment
        if kw > 0:
            want = 1 if kw < 4.14 else 3
            if want != phases and moment - changed >= timedelta(minutes=30):
                phases, changed = want, moment
            assert hass.states.get(PHASES).state == (ONE if phases == 1 else THREE), moment
            assert float(hass.states.get(CURRENT).state) == oracle_amps(kw, phases), (moment, kw, phases)
            charged.append((kw, phases))
    assert sum(kw for kw, _ in charged) * 0.25 == pytest.approx(11.5), charged
    assert (2.0, 1) in charged and {p for kw, p in charged if kw > 4.14} == {3}, charged
