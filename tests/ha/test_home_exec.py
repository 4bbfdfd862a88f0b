"""The whole-home plan drives a select-mode battery and the PV limit through the gates, in a real Home Assistant.

Oracles: the plan in force at each boundary (its own arrays), mapped by hand: a mode by the sign of the planned power
beyond 0.05 kW, the PV limit as forecast minus curtailment in W on the entity's 1 W step, else the entity's max.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from freezegun.api import FrozenDateTimeFactory
import numpy as np
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_capture_events, async_fire_time_changed

from custom_components.agentic_hems.const import DOMAIN
from custom_components.agentic_hems.gates.models import GridGrant
from custom_components.agentic_hems.planning.home_config import HomeConfig, parse_battery, parse_options
from custom_components.agentic_hems.planning.home_exec import plan_actions
from custom_components.agentic_hems.planning.home_manager import HomePlanManager
from custom_components.agentic_hems.planning.home_view import why_now
from custom_components.agentic_hems.scheduling.home_model import HomePlan
from homeassistant.auth.models import User
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util

from .conftest import NOW
from .test_home_plan import BATTERY, SETPOINT, _house, home_entry

MODE_ENTITY = "input_select.battery_mode"
OPTIONS = {"charge": "Force charge", "discharge": "Force discharge", "idle": "Auto"}
SELECT_BATTERY = {**BATTERY, "control_entity": MODE_ENTITY, "control_modes": OPTIONS}
LIMIT = "input_number.pv_limit"
MAX_W = 30000.0
SLOT = timedelta(minutes=15)


def mode(kw: float) -> str:
    return "charge" if kw > 0.05 else "discharge" if kw < -0.05 else "idle"


def calls(events: list[Any], service: str) -> list[dict[str, Any]]:
    return [e.data["service_data"] for e in events if e.data["service"] == service and e.data["domain"] != DOMAIN]


async def _start(hass: HomeAssistant, freezer: FrozenDateTimeFactory, solar_id: str | None = None,
                 **options: Any) -> MockConfigEntry:
    entry = home_entry(solar_id or "", "01JHOMEEXECENTRY0000000000", **options)
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)
    await entry.runtime_data.control.async_set_allow_control(True)
    return entry


async def _select_house(hass: HomeAssistant, freezer: FrozenDateTimeFactory) -> str:
    await hass.config.async_set_time_zone("Europe/Brussels")
    freezer.move_to(NOW)
    solar = await _house(hass)
    assert await async_setup_component(hass, "input_select", {"input_select": {"battery_mode": {
        "options": list(OPTIONS.values()), "initial": "Auto"}}})
    return solar.entry_id


async def _boundary(hass: HomeAssistant, freezer: FrozenDateTimeFactory, at: datetime) -> None:
    freezer.move_to(at)
    async_fire_time_changed(hass, at)
    await hass.async_block_till_done(wait_background_tasks=True)


async def test_a_select_battery_follows_the_plan_mode_and_an_unchanged_mode_issues_nothing(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    solar_id = await _select_house(hass, freezer)
    entry = await _start(hass, freezer, solar_id, battery=SELECT_BATTERY, battery_control="automatic")
    manager: HomePlanManager = entry.runtime_data.home
    events = async_capture_events(hass, "call_service")
    first = dt_util.as_utc(NOW).replace(minute=15, second=0)
    shown, expected = ["Auto"], []
    for k in range(8):
        await _boundary(hass, freezer, first + k * timedelta(minutes=15))
        plan = manager.result.plan
        assert plan is not None and plan.start == first + k * timedelta(minutes=15)
        option = OPTIONS[mode(float(plan.battery_kw["battery1"][0]))]
        assert hass.states.get(MODE_ENTITY).state == option
        if option != shown[-1]:
            expected.append({"entity_id": MODE_ENTITY, "option": option})
        shown.append(option)
    assert calls(events, "select_option") == expected
    assert len(set(shown)) > 1  # the sample evening's prices move the battery
    before = len(calls(events, "select_option"))
    await manager.async_replan(execute=True)  # same slot, same plan: nothing new
    await hass.async_block_till_done(wait_background_tasks=True)
    assert len(calls(events, "select_option")) == before


async def test_an_approved_select_battery_takes_only_the_approved_option(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, hass_admin_user: User
) -> None:
    solar_id = await _select_house(hass, freezer)
    entry = await _start(hass, freezer, solar_id, battery=SELECT_BATTERY, battery_control="approval")
    manager: HomePlanManager = entry.runtime_data.home
    request_id = manager.approvals.request_id
    request = entry.runtime_data.grid.records.requests[request_id]
    plan = manager.result.plan
    slot = plan.start
    planned = OPTIONS[mode(float(plan.battery_kw["battery1"][0]))]
    first = request["actions"][0]
    assert (first["type"], first["entity_id"], first["option"]) == ("home_battery_mode", MODE_ENTITY, planned)
    assert hass.states.get(MODE_ENTITY).state == "Auto"  # nothing before the approval
    other = next(o for o in OPTIONS.values() if o != planned)
    await hass.services.async_call(DOMAIN, "approve_authorization", {"request_id": request_id}, blocking=True,
                                   context=Context(user_id=hass_admin_user.id))
    await hass.async_block_till_done(wait_background_tasks=True)
    assert hass.states.get(MODE_ENTITY).state == planned
    record = await entry.runtime_data.control.async_evaluate(
        source_agent="grid", candidate={"intent": "select_option", "device_alias": MODE_ENTITY,
                                        "params": {"option": other}},
        context=Context(), raw_input="set the battery mode", slot_start=slot,
        grant=GridGrant(request_id=request_id, slot_start=slot))
    assert record["outcome"] == "blocked"
    policy = record["gate_results"][-1]
    assert policy["reason"] == (f"blocked by policy: select_option {other!r} on {MODE_ENTITY} is not the approved "
                                f"select_option {planned!r} for slot {slot.isoformat()}")
    assert policy["evidence"]["approved_command"] == {"intent": "select_option", "data": {"option": planned}}
    assert hass.states.get(MODE_ENTITY).state == planned


def pv_now(kw: float, slots: int) -> list[dict[str, Any]]:
    """A Solcast-shaped forecast of ``kw`` for ``slots`` quarter hours from 20:15 (30-minute periods)."""
    start = NOW.replace(minute=15)
    return [{"period_start": (start + timedelta(minutes=30 * i)).isoformat(), "pv_estimate": kw,
             "pv_estimate10": kw, "pv_estimate90": kw} for i in range(slots // 2)]


async def test_the_pv_limit_is_the_planned_production_where_the_plan_curtails_else_its_maximum(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    await hass.config.async_set_time_zone("Europe/Brussels")
    freezer.move_to(NOW)
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, "input_number", {"input_number": {
        "battery_power": {"min": -5, "max": 5, "step": 0.001, "unit_of_measurement": "kW", "initial": 0},
        "pv_limit": {"min": 0, "max": MAX_W, "step": 1, "unit_of_measurement": "W", "initial": MAX_W}}})
    hass.states.async_set("sensor.battery_soc", "50", {"unit_of_measurement": "%"})
    hass.states.async_set("sensor.solcast", "10", {"detailedForecast": pv_now(20.0, 4)})
    entry = await _start(hass, freezer, pv_forecast_entries=[], pv_forecast_sensor="sensor.solcast",
                         export_price_mode="fixed", export_fixed_price=-0.1, curtailment_entity=LIMIT,
                         battery_control="automatic")
    manager: HomePlanManager = entry.runtime_data.home
    events = async_capture_events(hass, "call_service")
    first = dt_util.as_utc(NOW).replace(minute=15, second=0)
    expected, shown = [], MAX_W
    for k in range(6):
        await _boundary(hass, freezer, first + k * timedelta(minutes=15))
        plan = manager.result.plan
        pv, cut = float(plan.pv_kw[0]), float(plan.curtail_kw[0])
        want = round((pv - cut) * 1000) if cut > 1e-3 else MAX_W
        if k == 0:
            assert pv == pytest.approx(20.0) and cut > 1  # negative export price: the surplus is curtailed
        if k >= 4:
            assert pv == 0.0 and want == MAX_W  # the PV is over: back to no limit
        assert float(hass.states.get(LIMIT).state) == pytest.approx(want)
        if want != shown:
            expected.append(pytest.approx(want))
        shown = want
    assert [c["value"] for c in calls(events, "set_value") if c["entity_id"] == LIMIT] == expected
    assert len(expected) >= 2
    # each command was bound to the value its plan stated (intent binding of the scheduler's commands)
    policies = [next(g for g in r["gate_results"] if g["gate"] == "policy")
                for r in entry.runtime_data.control.traces.values() if r.get("entity_id") == LIMIT]
    assert len(policies) == len(expected)
    assert all(p["evidence"]["intent_binding"]["plan"] and p["evidence"]["intent_binding"]["bound"] for p in policies)


def test_the_pv_limit_must_be_a_number_entity() -> None:
    values, errors = parse_options({"curtailment_entity": "switch.inverter"})
    assert values["curtailment_entity"] is None and errors and errors[0].startswith("curtailment_entity: ")
    values, errors = parse_options({"curtailment_entity": "number.inverter_limit"})
    assert (values["curtailment_entity"], errors) == ("number.inverter_limit", [])


async def test_generate_explanation_gives_the_home_plans_own_reasons_and_sets_nothing(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """The service, given the home plan's arrays, says per slot what plan_home's answer says, in German too."""
    solar_id = await _select_house(hass, freezer)
    entry = await _start(hass, freezer, solar_id, battery_control="automatic")
    result = entry.runtime_data.home.result
    plan, n = result.plan, result.plan.import_kw.size
    house = plan.base_load_kw + sum(plan.load_kw.values(), np.zeros(n))
    home_plan = {
        "start": plan.start.isoformat(), "currency": plan.currency, "fuse_kw": 11.0,
        "import_price": result.inputs.curve.prices[:n].tolist(), "pv_kw": plan.pv_kw.tolist(),
        "house_kw": house.tolist(), "import_kw": plan.import_kw.tolist(),  # no curtailment: within the 1000 items
        "export_kw": plan.export_kw.tolist(), "export_price": result.inputs.export_price[:n].tolist(),
        "batteries": [{**{k: BATTERY[k] for k in ("name", "capacity_kwh", "soc_min_pct", "soc_max_pct", "reserve_pct",
                                                   "charge_kw", "discharge_kw", "charge_efficiency",
                                                   "discharge_efficiency", "wear_cost")},
                       "battery_kw": plan.battery_kw["battery1"].tolist(), "soc_kwh": plan.soc_kwh["battery1"].tolist()}],
    }
    assert not plan.curtail_kw.any()
    events = async_capture_events(hass, "call_service")
    for lang in ("en", "de"):
        answer = await hass.services.async_call(DOMAIN, "plan_home", {"language": lang}, blocking=True,
                                                return_response=True)
        explanation = await hass.services.async_call(
            DOMAIN, "generate_explanation", {"home_plan": home_plan, "lang": lang}, blocking=True, return_response=True)
        (battery,) = explanation["structured"]["batteries"]
        assert [s["why"] for s in battery["slots"]] == answer["batteries"][0]["why"]
        assert explanation["plan_id"] is None and explanation["explanation_id"].startswith("explanation_")
        for audience in ("operator", "manager", "auditor"):
            given, live = [
                await hass.services.async_call(DOMAIN, "generate_explanation", {subject: value, "lang": lang,
                                               "audience": audience}, blocking=True, return_response=True)
                for subject, value in (("home_plan", home_plan), ("current_home_plan", True))
            ]
            assert (live["text"], live["structured"]) == (given["text"], given["structured"])
    assert [e.data["domain"] for e in events] == [DOMAIN] * 16  # the calls above, nothing on a device
    assert float(hass.states.get("input_number.battery_power").state) == 0.0


async def test_assist_without_a_model_says_why_the_battery_does_what_it_does_now(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """"Why does the battery charge?" to the offline planner: plan_home's own sentence for the current slot, until the
    first later slot with another sentence (local time), and that one; an unknown device name is said as such."""
    solar_id = await _select_house(hass, freezer)
    entry = await _start(hass, freezer, solar_id, battery_control="automatic")
    plan = entry.runtime_data.home.result.plan
    answer = await hass.services.async_call(DOMAIN, "plan_home", {}, blocking=True, return_response=True)
    why = answer["batteries"][0]["why"]
    i = int((dt_util.utcnow() - plan.start) // plan.resolution)
    j = next(k for k in range(i + 1, len(why)) if why[k] != why[i])
    until = dt_util.as_local(plan.start + j * plan.resolution).strftime("%a %H:%M")
    said = await hass.services.async_call(DOMAIN, "ask", {"text": "Why does the battery charge?"}, blocking=True,
                                          return_response=True)
    assert said["summary"] == f"{BATTERY['name']}: {why[i]} until {until}, then {why[j]}." and said["outcomes"] == []
    tools_answer = why_now(entry.runtime_data.home, "no such battery", "en", dt_util.utcnow())
    assert tools_answer == {"error": "unknown_device", "device": "no such battery"}


async def test_generate_explanation_of_the_current_home_plan_without_one_is_a_typed_error(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """``current_home_plan`` in a home whose plan is gone: the translated ``home_plan_not_available``."""
    solar_id = await _select_house(hass, freezer)
    entry = await _start(hass, freezer, solar_id, battery_control="automatic")
    entry.runtime_data.home.result = None
    with pytest.raises(ServiceValidationError) as err:
        await hass.services.async_call(DOMAIN, "generate_explanation", {"current_home_plan": True}, blocking=True,
                                       return_response=True)
    assert err.value.translation_key == "home_plan_not_available"


def test_plan_actions_merge_equal_neighbours_per_entity() -> None:
    """A hand-built 4-slot plan: a setpoint battery, a select battery (no option for idle) and the PV limit."""
    start = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    kw = np.array([2.0, 2.0, 0.01, -1.0])
    plan = HomePlan(
        start=start, resolution=SLOT, horizon_end=start + 4 * SLOT, import_kw=np.zeros(4), export_kw=np.zeros(4),
        curtail_kw=np.array([0.0, 1.5, 1.5, 0.0005]), pv_kw=np.array([3.0, 4.0, 4.0, 2.0]), base_load_kw=np.zeros(4),
        battery_kw={"a": kw, "b": kw}, soc_kwh={"a": np.zeros(5), "b": np.zeros(5)}, load_kw={}, starts={},
        unplanned={}, cost=0.0, net_cost=0.0, baseline_cost=0.0, baseline_net_cost=0.0, currency="EUR",
    )
    config = HomeConfig(
        batteries=(parse_battery("a", {**BATTERY, "name": "A"}),
                   parse_battery("b", {**SELECT_BATTERY, "name": "B",
                                       "control_modes": {"charge": "Force charge", "discharge": "Force discharge"}})),
        curtailment_entity=LIMIT,
    )
    at = [(start + i * SLOT).isoformat() for i in range(5)]
    assert plan_actions(plan, config, start + SLOT) == [
        {"start": at[1], "end": at[2], "type": "home_battery_power", "entity_id": SETPOINT, "battery": "a", "p_kw": 2.0},
        {"start": at[2], "end": at[3], "type": "home_battery_power", "entity_id": SETPOINT, "battery": "a",
         "p_kw": 0.01},
        {"start": at[3], "end": at[4], "type": "home_battery_power", "entity_id": SETPOINT, "battery": "a",
         "p_kw": -1.0},
        {"start": at[1], "end": at[2], "type": "home_battery_mode", "entity_id": MODE_ENTITY, "battery": "b",
         "mode": "charge", "option": "Force charge"},  # 0.01 kW is idle: no option, nothing set
        {"start": at[3], "end": at[4], "type": "home_battery_mode", "entity_id": MODE_ENTITY, "battery": "b",
         "mode": "discharge", "option": "Force discharge"},
        {"start": at[1], "end": at[3], "type": "home_pv_limit", "entity_id": LIMIT, "limit_kw": 2.5},
        {"start": at[3], "end": at[4], "type": "home_pv_limit", "entity_id": LIMIT, "limit_kw": None},  # 0.5 W: none
    ]
