"""The whole-home plan in a real Home Assistant: a battery subentry (an input_number setpoint, a SoC sensor), PV from
a mocked energy solar-forecast platform, the sample prices and the three sample appliances.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import replace
from datetime import datetime, timedelta
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
from pytest_homeassistant_custom_component.syrupy import HomeAssistantSnapshotExtension
from pytest_homeassistant_custom_component.typing import WebSocketGenerator
from syrupy.assertion import SnapshotAssertion
from syrupy.filters import props

from custom_components.agentic_hems.const import DEFAULT_OPTIONS, DOMAIN
from custom_components.agentic_hems.gates.models import GridGrant
from custom_components.agentic_hems.planning.home_config import parse_options
from custom_components.agentic_hems.planning import home_manager
from custom_components.agentic_hems.planning.home_manager import (
    HomePlanManager,
    plan_leaving_out,
    planned_soc_pct,
)
from custom_components.agentic_hems.prices.curve import PriceCurve
from custom_components.agentic_hems.scheduling.home import plan_home
from custom_components.agentic_hems.scheduling.home_grid import fuse_over_fixed
from custom_components.agentic_hems.scheduling.home_evaluate import Tariff, evaluate
from custom_components.agentic_hems.scheduling.home_model import HomeHeatPump, HomePlanError, Infeasibility, PhaseLimits
from custom_components.agentic_hems.scheduling.plan import LoadSpec
from homeassistant.auth.models import User
from homeassistant.config_entries import ConfigSubentryData
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import entity_registry as er, issue_registry as ir, llm
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util

from .conftest import APPLIANCES, NOW

BATTERY = {
    "name": "Home battery", "capacity_kwh": 10.0, "soc_min_pct": 10.0, "soc_max_pct": 95.0, "reserve_pct": 20.0,
    "charge_kw": 3.0, "discharge_kw": 3.0, "charge_efficiency": 0.95, "discharge_efficiency": 0.95,
    "wear_cost": 0.02, "soc_entity": "sensor.battery_soc", "control_entity": "input_number.battery_power",
}
SETPOINT = "input_number.battery_power"
ENTRY_ID = "01JHOMEPLANENTRY0000000000"
HOME_SENSORS = ("sensor.agentic_hems_home_plan_cost", "sensor.agentic_hems_planned_grid_import",
                "sensor.agentic_hems_planned_grid_export", "sensor.agentic_hems_planned_pv_curtailment",
                "sensor.home_battery_planned_power", "sensor.home_battery_planned_state_of_charge")


def solar_wh(start: datetime) -> dict[str, float]:
    """Tomorrow's PV: 09:00-15:00 local, 2 kWh per hour (Wh per hourly period, as an energy platform answers)."""
    day = (start + timedelta(days=1)).replace(hour=9, minute=0, second=0, microsecond=0)
    return {(day + timedelta(hours=h)).isoformat(): 2000.0 for h in range(6)}


async def _house(hass: HomeAssistant) -> MockConfigEntry:
    """The setpoint, the SoC sensor and a forecast integration's entry."""
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, "input_number", {"input_number": {"battery_power": {
        "min": -5, "max": 5, "step": 0.001, "unit_of_measurement": "kW", "initial": 0}}})
    hass.states.async_set("sensor.battery_soc", "50", {"unit_of_measurement": "%"})

    async def async_get_solar_forecast(hass: HomeAssistant, entry_id: str) -> dict[str, Any] | None:
        return {"wh_hours": solar_wh(NOW)}

    mock_integration(hass, MockModule("solar_test"))
    mock_platform(hass, "solar_test.energy", SimpleNamespace(async_get_solar_forecast=async_get_solar_forecast))
    solar = MockConfigEntry(domain="solar_test", title="roof")
    solar.add_to_hass(hass)
    return solar


def home_entry(
    solar_id: str, entry_id: str | None = None, battery: dict[str, Any] = BATTERY, **options: Any
) -> MockConfigEntry:
    """The sample entry (its three appliances) with a battery subentry and the home options."""
    subentries = [ConfigSubentryData(data=data, subentry_id=key, subentry_type="appliance", title=data["name"],
                                     unique_id=None) for key, data in APPLIANCES.items()]
    subentries.append(ConfigSubentryData(data=battery, subentry_id="battery1", subentry_type="battery",
                                         title="Home battery", unique_id=None))
    return MockConfigEntry(
        domain=DOMAIN, entry_id=entry_id, title="Sample prices", unique_id="sample", data={"price_source": "sample"},
        options={**DEFAULT_OPTIONS, "pv_forecast_entries": [solar_id], "export_price_mode": "spot",
                 "export_spot_factor": 0.8, "export_spot_fee": 0.01, "execution_wait_s": 1, **options},
        subentries_data=subentries, version=1, minor_version=1,
    )


async def _setup(hass: HomeAssistant, freezer: FrozenDateTimeFactory, **options: Any) -> MockConfigEntry:
    await hass.config.async_set_time_zone("Europe/Brussels")
    freezer.move_to(NOW)
    solar = await _house(hass)
    entry = home_entry(solar.entry_id, ENTRY_ID, **options)
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


def home(entry: MockConfigEntry) -> HomePlanManager:
    return entry.runtime_data.home  # None (no home plan) fails the caller's first attribute


def setpoint_calls(events: list[Any]) -> list[float]:
    return [e.data["service_data"]["value"] for e in events
            if e.data["domain"] == "input_number" and e.data["service"] == "set_value"]


async def test_the_plan_costs_what_the_evaluator_says_and_beats_the_baseline(
    hass: HomeAssistant, automatic: MockConfigEntry
) -> None:
    result = home(automatic).result
    assert result is not None and result.plan is not None and result.inputs is not None
    plan, inputs = result.plan, result.inputs
    n = plan.import_kw.size
    # prices are never planned on where unknown: the horizon ends where the known prices end
    assert plan.horizon_end == automatic.runtime_data.coordinator.data.total.known_until()
    assert np.isfinite(inputs.curve.prices[:n]).all() and np.isfinite(inputs.export_price[:n]).all()
    spot = automatic.runtime_data.coordinator.data.spot.window(plan.start, plan.horizon_end).prices
    assert inputs.export_price[:n] == pytest.approx(0.8 * spot - 0.01)
    assert inputs.pv_kw.max() == pytest.approx(2.0) and result.inputs.pv_source == "energy"
    tariff = Tariff(import_price=inputs.curve.prices[:n], export_price=inputs.export_price[:n], hours=0.25,
                    fuse_kw=11.0, export_limit_kw=np.inf, terminal_price={"battery1": 0.0})
    house = plan.base_load_kw + sum(plan.load_kw.values(), np.zeros(n))
    check = evaluate(tariff, house_kw=house, pv_kw=plan.pv_kw - plan.curtail_kw, battery_kw=plan.battery_kw,
                     batteries=inputs.batteries)
    assert check.violations == []
    assert plan.cost == pytest.approx(check.cost, abs=1e-6)
    assert plan.import_kw == pytest.approx(check.import_kw, abs=1e-6)
    assert plan.net_cost <= plan.baseline_net_cost + 1e-9
    assert plan.soc_kwh["battery1"][0] == pytest.approx(5.0)  # the measured 50 % of 10 kWh
    assert plan.soc_kwh["battery1"].min() >= 2.0 - 1e-6  # the 20 % reserve
    # the appliances' placements went to the PlanManager (the scheduler issues their starts)
    planner = automatic.runtime_data.planner
    for appliance_id, start in plan.starts.items():
        assert planner.states[appliance_id].plan is not None
        assert planner.states[appliance_id].plan.start == start


async def test_automatic_mode_sets_exactly_the_planned_kw_and_an_unchanged_plan_issues_nothing(
    hass: HomeAssistant, automatic: MockConfigEntry, freezer: FrozenDateTimeFactory
) -> None:
    manager = home(automatic)
    events = async_capture_events(hass, "call_service")
    boundary = dt_util.as_utc(NOW).replace(minute=15, second=0)
    freezer.move_to(boundary)
    async_fire_time_changed(hass, boundary)
    await hass.async_block_till_done(wait_background_tasks=True)
    plan = manager.result.plan
    assert plan is not None and plan.start == boundary
    planned = round(float(plan.battery_kw["battery1"][0]), 3)
    assert planned != 0.0  # the sample evening is dear: the battery discharges
    assert setpoint_calls(events) == [pytest.approx(planned)]
    assert float(hass.states.get(SETPOINT).state) == pytest.approx(planned)
    before = len(setpoint_calls(events))
    await manager.async_replan(execute=True)  # same inputs, same plan
    await hass.async_block_till_done(wait_background_tasks=True)
    assert len(setpoint_calls(events)) == before


async def test_automatic_mode_drives_a_battery_whose_control_is_also_the_grid_toolkits_setpoint(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, hass_admin_user: User
) -> None:
    """The battery's control entity is also the grid toolkit's battery setpoint (one entity, as most homes have it).
    In automatic mode the home plan's slot command sets it; any other source is still refused as a grid setpoint, and
    no caller of evaluate_command may claim to be the scheduler."""
    entry = await _setup(hass, freezer, battery_control="automatic", battery_setpoint_entity=SETPOINT)
    await entry.runtime_data.control.async_set_allow_control(True)
    events = async_capture_events(hass, "call_service")
    boundary = dt_util.as_utc(NOW).replace(minute=15, second=0)
    freezer.move_to(boundary)
    async_fire_time_changed(hass, boundary)
    await hass.async_block_till_done(wait_background_tasks=True)
    planned = round(float(home(entry).result.plan.battery_kw["battery1"][0]), 3)
    assert planned != 0.0 and setpoint_calls(events) == [pytest.approx(planned)]
    candidate = {"intent": "set_value", "device_alias": SETPOINT, "params": {"value": 1.0}}
    record = await entry.runtime_data.control.async_evaluate(source_agent="hermes", candidate=candidate,
                                                             context=Context(user_id=hass_admin_user.id))
    assert (record["outcome"], record["failed_gate"]) == ("blocked", "policy")
    assert "is a grid setpoint" in record["gate_results"][-1]["reason"]
    with pytest.raises(ServiceValidationError):
        await hass.services.async_call(DOMAIN, "evaluate_command", {"source_agent": "scheduler",
                                       "model_candidate": candidate}, blocking=True, return_response=True,
                                       context=Context(user_id=hass_admin_user.id))
    assert float(hass.states.get(SETPOINT).state) == pytest.approx(planned)


async def test_approval_mode_waits_for_an_administrator(
    hass: HomeAssistant, approval: MockConfigEntry, hass_admin_user: User, hass_read_only_user: User
) -> None:
    manager = home(approval)
    request_id = manager.approvals.request_id
    assert request_id is not None  # approval mode asks an administrator at once
    events = async_capture_events(hass, "call_service")
    await manager.async_execute()
    assert setpoint_calls(events) == []
    assert float(hass.states.get(SETPOINT).state) == 0.0
    with pytest.raises(ServiceValidationError):
        await hass.services.async_call(DOMAIN, "approve_authorization", {"request_id": request_id}, blocking=True,
                                       context=Context(user_id=hass_read_only_user.id))
    await hass.services.async_call(DOMAIN, "approve_authorization", {"request_id": request_id}, blocking=True,
                                   context=Context(user_id=hass_admin_user.id))
    await hass.async_block_till_done(wait_background_tasks=True)
    plan = manager.result.plan
    approved = round(float(plan.battery_kw["battery1"][0]), 3)
    assert float(hass.states.get(SETPOINT).state) == pytest.approx(approved)
    assert approved != 0.0 and setpoint_calls(events) == [pytest.approx(approved)]
    await manager.async_execute()  # the approved value is in place: nothing again
    assert len(setpoint_calls(events)) == 1


async def test_an_approved_home_plan_gate_refuses_other_values_and_sources(
    hass: HomeAssistant, approval: MockConfigEntry, hass_admin_user: User
) -> None:
    control, manager = approval.runtime_data.control, home(approval)
    candidate = {"intent": "set_value", "device_alias": SETPOINT, "params": {"value": 1.234}}
    record = await control.async_evaluate(source_agent="scheduler", candidate=candidate, context=Context(),
                                          raw_input="set the battery")
    assert record["outcome"] == "blocked" and "grid setpoint" in record["gate_results"][-1]["reason"]
    request_id = manager.approvals.request_id
    await hass.services.async_call(DOMAIN, "approve_authorization", {"request_id": request_id}, blocking=True,
                                   context=Context(user_id=hass_admin_user.id))
    await hass.async_block_till_done(wait_background_tasks=True)
    slot = manager.result.plan.start
    record = await control.async_evaluate(source_agent="grid", candidate=candidate, context=Context(),
                                          raw_input="set the battery", slot_start=slot,
                                          grant=GridGrant(request_id=request_id, slot_start=slot))
    assert record["outcome"] == "blocked" and "is not the approved" in record["gate_results"][-1]["reason"]
    assert float(hass.states.get(SETPOINT).state) == pytest.approx(manager.result.plan.battery_kw["battery1"][0])


async def test_a_soc_jump_replans_and_a_running_appliance_stays(
    hass: HomeAssistant, automatic: MockConfigEntry, freezer: FrozenDateTimeFactory
) -> None:
    manager = home(automatic)
    planner = automatic.runtime_data.planner
    dishwasher = planner.states["dishwasher"].plan
    assert dishwasher is not None and dishwasher.start is not None
    freezer.move_to(dishwasher.start)
    async_fire_time_changed(hass, dishwasher.start)
    await hass.async_block_till_done(wait_background_tasks=True)
    made = manager.result.made_at
    plan = manager.result.plan
    planned = planned_soc_pct(plan, "battery1", 10.0, dt_util.utcnow())  # None fails the sum below
    hass.states.async_set("sensor.battery_soc", str(round(planned + 2, 1)))  # within the 5 % threshold
    await hass.async_block_till_done(wait_background_tasks=True)
    assert manager.result.made_at == made
    freezer.tick(timedelta(minutes=1))
    hass.states.async_set("sensor.battery_soc", str(round(min(planned + 30, 95), 1)))
    await hass.async_block_till_done(wait_background_tasks=True)
    assert manager.result.made_at > made
    assert manager.result.plan.soc_kwh["battery1"][0] == pytest.approx(min(planned + 30, 95) / 10)
    assert planner.states["dishwasher"].plan is dishwasher  # running: never moved


def test_bad_options_fall_back_to_their_defaults_with_an_error() -> None:
    values, errors = parse_options({"export_price_mode": "bogus", "mpc_soc_threshold_pct": 7, "export_limit_kw": -1})
    assert values["export_price_mode"] == "fixed" and values["mpc_soc_threshold_pct"] == 7.0
    assert values["export_limit_kw"] is None
    assert [e.split(":")[0] for e in errors] == ["export_price_mode", "export_limit_kw"]


async def test_the_service_answers_anyone_and_only_an_administrator_replans(
    hass: HomeAssistant, automatic: MockConfigEntry, hass_read_only_user: User, hass_admin_user: User
) -> None:
    reader = Context(user_id=hass_read_only_user.id)
    answer = await hass.services.async_call(DOMAIN, "plan_home", {"language": "de"}, blocking=True,
                                            return_response=True, context=reader)
    assert isinstance(answer, dict)
    plan = home(automatic).result.plan
    assert answer["cost"] == pytest.approx(plan.cost, abs=1e-4) and answer["currency"] == "EUR"
    assert answer["saving"] == pytest.approx(plan.baseline_net_cost - plan.net_cost, abs=1e-4)
    assert len(answer["slots"]) == plan.import_kw.size
    for slot in answer["slots"]:  # the energy balance of every slot, from the payload alone
        supply = slot["pv_kw"] - slot["curtail_kw"] + slot["import_kw"] - slot["export_kw"]
        assert supply == pytest.approx(slot["load_kw"] + slot["battery_kw"], abs=5e-3)
    (battery,) = answer["batteries"]
    assert battery["battery_kw"] == [s["battery_kw"] for s in answer["slots"]]
    assert battery["soc_pct"][0] == pytest.approx(50.0) and len(battery["why"]) == len(answer["slots"])
    prices = home(automatic).result.inputs.curve.prices
    for i, (kw, why) in enumerate(zip(battery["battery_kw"], battery["why"], strict=True)):
        if kw < -1e-3 and answer["slots"][i]["import_kw"] < 11 - 1e-6:  # dear, into the grid, or a tie (spend)
            dear = f"entlädt zu {prices[i]:.3f} EUR/kWh, ".replace(".", ",")  # a German decimal comma
            assert why.startswith((dear, "entlädt ins Netz zum", "entlädt für "))
        elif kw > 1e-3:
            assert why.startswith(("lädt aus dem Netz zu", "speichert"))
    with pytest.raises(ServiceValidationError) as err:
        await hass.services.async_call(DOMAIN, "plan_home", {"replan": True}, blocking=True, return_response=True,
                                       context=reader)
    assert err.value.translation_key == "admin_required_home"
    made = home(automatic).result.made_at
    await hass.services.async_call(DOMAIN, "plan_home", {"replan": True}, blocking=True, return_response=True,
                                   context=Context(user_id=hass_admin_user.id))
    assert home(automatic).result.made_at >= made


async def test_any_assistant_reads_the_home_plan_through_the_llm_api(
    hass: HomeAssistant, automatic: MockConfigEntry, hass_read_only_user: User
) -> None:
    """The entry's LLM API tool get_home_plan: the plan_home action's plan, cut to the slots asked for, read-only."""
    context = llm.LLMContext(platform="test", context=Context(user_id=hass_read_only_user.id), language="en",
                             assistant="conversation", device_id=None)
    api = await llm.async_get_api(hass, f"{DOMAIN}-{automatic.entry_id}", context)
    tool = next(t for t in api.tools if t.name == "get_home_plan")
    assert not getattr(tool, "acts", True)
    reply = await api.async_call_tool(llm.ToolInput("get_home_plan", {"slots": 4}))
    data = getattr(reply, "data", reply)
    answer = await hass.services.async_call(DOMAIN, "plan_home", {"language": "en"}, blocking=True,
                                            return_response=True, context=context.context)
    assert isinstance(answer, dict) and data["slots"] == answer["slots"][:4]
    assert (data["cost"], data["baseline"], data["saving"]) == (answer["cost"], answer["baseline"], answer["saving"])
    (battery,) = data["batteries"]
    assert battery == {**answer["batteries"][0], **{k: answer["batteries"][0][k][:4]
                                                  for k in ("battery_kw", "soc_pct", "why")}}
    assert len(battery["why"]) == 4


async def test_the_schedule_websocket_carries_the_home_plan(
    hass: HomeAssistant, automatic: MockConfigEntry, hass_ws_client: WebSocketGenerator,
    hass_read_only_access_token: str
) -> None:
    client = await hass_ws_client(hass, hass_read_only_access_token)
    await client.send_json_auto_id({"type": "agentic_hems/subscribe_schedule"})
    assert (await client.receive_json())["success"]
    event = (await client.receive_json())["event"]
    payload = event["home"]
    plan = home(automatic).result.plan
    assert set(payload["slots"][0]) == {"start", "pv_kw", "load_kw", "battery_kw", "soc_pct", "import_kw",
                                        "export_kw", "curtail_kw"}
    assert payload["slots"][0]["start"] == plan.start.isoformat()
    assert [s["import_kw"] for s in payload["slots"]] == pytest.approx(plan.import_kw.tolist(), abs=1e-3)
    assert payload["baseline"] == pytest.approx(plan.baseline_cost, abs=1e-4)


async def test_a_bad_battery_subentry_is_left_out_with_a_repair_issue(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    await hass.config.async_set_time_zone("Europe/Brussels")
    freezer.move_to(NOW)
    solar = await _house(hass)
    entry = home_entry(solar.entry_id, battery={**BATTERY, "capacity_kwh": -1})
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)
    issue = ir.async_get(hass).async_get_issue(DOMAIN, "home_config_invalid_battery1")
    assert issue is not None and "capacity_kwh" in issue.translation_placeholders["error"]
    result = home(entry).result  # the PV forecast still plans the home, without the battery
    assert result is not None and result.plan is not None and result.plan.battery_kw == {}


async def test_entities_snapshot(
    hass: HomeAssistant, automatic: MockConfigEntry, entity_registry: er.EntityRegistry, snapshot: SnapshotAssertion
) -> None:
    """The registry entries and attributes are snapshots; the plan-dependent values are checked against the plan."""
    snapshot = snapshot.use_extension(HomeAssistantSnapshotExtension)
    plan_dependent = props("state", "baseline_cost", "saving")
    for entity_id in HOME_SENSORS:
        entry = entity_registry.async_get(entity_id)
        assert entry is not None, entity_id
        fields = {f: getattr(entry, f) for f in ("unique_id", "translation_key", "original_device_class",
                                                 "unit_of_measurement", "has_entity_name")}
        state = hass.states.get(entity_id)
        attributes = {str(key): value for key, value in state.attributes.items()}  # StrEnum keys from HA 2026.10 on
        shown = {**fields, "state": state.state, "attributes": attributes}
        assert shown == snapshot(name=entity_id, exclude=plan_dependent)
    plan = home(automatic).result.plan
    values = [round(plan.cost, 2), plan.import_kw[0], plan.export_kw[0], plan.curtail_kw[0],
              plan.battery_kw["battery1"][0], round(plan.soc_kwh["battery1"][1] * 10, 1)]
    assert [float(hass.states.get(e).state) for e in HOME_SENSORS] == pytest.approx(values, abs=1e-3)
    attributes = hass.states.get(HOME_SENSORS[0]).attributes
    assert attributes["baseline_cost"] == round(plan.baseline_cost, 2)
    assert attributes["saving"] == round(plan.saving, 2)


async def test_a_load_whose_window_cannot_hold_it_is_left_out_not_the_whole_plan(
    hass: HomeAssistant, automatic: MockConfigEntry
) -> None:
    curve = home(automatic).result.inputs.curve
    start = curve.start
    good = LoadSpec("good", power_kw=1.0, duration_min=60, earliest_start=start, deadline=start + timedelta(hours=6))
    bad = LoadSpec("bad", power_kw=1.0, duration_min=120, earliest_start=start, deadline=start + timedelta(hours=1))
    with pytest.raises(HomePlanError) as err:
        plan_home(curve, [good, bad])
    assert err.value.loads == ("bad",)
    plan, left_out = plan_leaving_out(curve, [good, bad])
    assert left_out == ["bad, its window cannot hold it"] and "bad" not in plan.load_kw
    assert plan.starts["good"] == plan_home(curve, [good]).starts["good"]
    phases = PhaseLimits(limit_kw=5.75, assignment={"good": "L1", "bad": "L2"})  # the left-out load's phase goes too
    plan, left_out = plan_leaving_out(curve, [good, bad], phases=phases)
    assert left_out == ["bad, its window cannot hold it"]
    assert plan_leaving_out(curve, [good, bad], {"bad": "Dryer"})[1] == ["Dryer, its window cannot hold it"]
    assert plan.starts["good"] == plan_home(curve, [good], phases=PhaseLimits(limit_kw=5.75)).starts["good"]


def test_loads_the_plan_cannot_move_above_the_fuse_raise_it_instead_of_leaving_no_plan() -> None:
    """Pinned appliances and the base load draw 3 kW in the second hour, above a 2 kW fuse: plan_home finds no plan
    under the fuse; under fuse_over_fixed's fuse (3 kW in that hour only, noted) the home is planned and the run
    stays off that hour."""
    curve = PriceCurve(start=NOW.replace(minute=0, second=0, microsecond=0), resolution=timedelta(hours=1),
                       prices=np.array([0.30, 0.10, 0.20, 0.40]), source="test")
    fixed = np.array([0.5, 3.0, 0.5, 0.5])
    run = LoadSpec("run", power_kw=1.0, duration_min=60, earliest_start=curve.start, deadline=curve.slot_start(4))
    with pytest.raises(HomePlanError) as err:
        plan_home(curve, [run], base_load_kw=fixed, fuse_kw=2.0)
    assert err.value.constraints == (Infeasibility.FUSE,)
    notes: list[str] = []
    fuse = fuse_over_fixed(2.0, fixed, notes, curve)
    assert np.asarray(fuse).tolist() == [2.0, 3.0, 2.0, 2.0] and fuse_over_fixed(4.0, fixed, [], curve) == 4.0
    assert notes == ["loads the plan cannot move draw up to 3.00 kW, above the 2 kW fuse, at 2026-11-29T20:00-21:00Z"]
    plan = plan_home(curve, [run], base_load_kw=fixed, fuse_kw=fuse)
    assert plan.starts["run"] == curve.slot_start(2)  # the next cheapest hour: the second is full
    assert plan.import_kw.tolist() == pytest.approx([0.5, 3.0, 1.5, 0.5])
    np.testing.assert_array_equal(plan.fuse_kw, [2.0, 3.0, 2.0, 2.0])


def test_a_fuse_raised_in_one_slot_holds_everywhere_else() -> None:
    """The breaker's case: a 10 kW fuse, a pinned 12 kW load in the first hour, an 11 kW oven free over four hours,
    cheapest in the second, 2 kW of PV in the last. By hand: the oven adds 11 kW wherever it runs; the first hour
    holds 12 kW (its limit), the second and third 11 > 10 kW, the last 11 - 2 = 9 kW: only the last hour fits. A
    fuse raised to 12 kW for the whole horizon would let it run in the cheap second hour at 11 kW."""
    curve = PriceCurve(start=NOW.replace(minute=0, second=0, microsecond=0), resolution=timedelta(hours=1),
                       prices=np.array([0.30, 0.10, 0.20, 0.40]), source="test")
    pinned = np.array([12.0, 0.0, 0.0, 0.0])
    oven = LoadSpec("oven", power_kw=11.0, duration_min=60, earliest_start=curve.start, deadline=curve.slot_start(4))
    notes: list[str] = []
    fuse = fuse_over_fixed(10.0, pinned, notes, curve)
    plan = plan_home(curve, [oven], pv_kw=[0.0, 0.0, 0.0, 2.0], fixed_kw={"pinned": pinned}, fuse_kw=fuse,
                     curtailment=False)
    assert plan.starts["oven"] == curve.slot_start(3)
    assert plan.import_kw.tolist() == pytest.approx([12.0, 0.0, 0.0, 9.0])
    assert np.all(plan.import_kw[1:] <= 10.0 + 1e-6) and plan.import_kw[0] <= pinned[0] + 1e-6
    assert notes == ["loads the plan cannot move draw up to 12.00 kW, above the 10 kW fuse, at 2026-11-29T19:00-20:00Z"]


def test_heat_pumps_the_model_refuses_are_left_out_not_the_whole_plan() -> None:
    """A heat pump whose store reacts faster than a slot (h UA > C: the model's step would overshoot) is refused by
    plan_home; the home is planned without it, with the reason, and its phase is dropped with it."""
    curve = PriceCurve(start=NOW.replace(minute=0, second=0, microsecond=0), resolution=timedelta(hours=1),
                       prices=np.array([0.30, 0.10, 0.20, 0.40]), source="test")
    flat = np.full(4, 5.0)
    pump = HomeHeatPump(name="hp", ua_kw_per_k=5.0, capacity_kwh_per_k=1.0, min_kw=0.0, max_kw=2.0,
                        initial_temp_c=20.0, ambient_c=flat, cop=np.full(4, 3.0), comfort_low_c=np.full(4, 19.0),
                        comfort_high_c=np.full(4, 23.0))
    run = LoadSpec("run", power_kw=1.0, duration_min=60, earliest_start=curve.start, deadline=curve.slot_start(4))
    with pytest.raises(ValueError, match="time constant"):
        plan_home(curve, [run], heat_pumps=[pump])
    phases = PhaseLimits(limit_kw=5.75, assignment={"hp": "L1", "run": "L2"})
    plan, left_out = plan_leaving_out(curve, [run], heat_pumps=[pump], phases=phases)
    assert left_out == ["heat pumps: heat pump 'hp': the slot is too long for its time constant C / UA"]
    assert plan.heat_kw == {} and plan.starts["run"] == curve.slot_start(1)  # the cheapest hour
    cold = replace(pump, ua_kw_per_k=0.1, capacity_kwh_per_k=5.0, initial_temp_c=15.0)  # must heat at its full 2 kW
    with pytest.raises(HomePlanError):
        plan_home(curve, [run], heat_pumps=[cold], fuse_kw=1.5)  # a 1.5 kW fuse cannot carry it
    plan, left_out = plan_leaving_out(curve, [run], heat_pumps=[cold], fuse_kw=1.5)
    assert left_out[0].startswith("heat pumps: ") and plan.heat_kw == {} and plan.starts["run"] == curve.slot_start(1)


async def test_a_restart_keeps_the_request_of_an_unchanged_plan(hass: HomeAssistant, approval: MockConfigEntry) -> None:
    request_id = home(approval).approvals.request_id
    assert await hass.config_entries.async_reload(approval.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)
    records = approval.runtime_data.grid.records
    assert home(approval).approvals.request_id == request_id
    home_requests = [r for r in records.requests.values() if r["plan_id"].startswith("home_")]
    assert [(r["request_id"], r["status"]) for r in home_requests] == [(request_id, "pending")]


def solcast(kw: float) -> list[dict[str, Any]]:
    """Tomorrow 10:00-14:00 local at ``kw``, as a Solcast sensor's detailedForecast (30-minute periods)."""
    day = (NOW + timedelta(days=1)).replace(hour=10, minute=0)
    return [{"period_start": (day + timedelta(minutes=30 * i)).isoformat(), "pv_estimate": kw,
             "pv_estimate10": kw / 2, "pv_estimate90": kw} for i in range(8)]


async def test_a_pv_forecast_change_beyond_its_threshold_replans(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    await hass.config.async_set_time_zone("Europe/Brussels")
    freezer.move_to(NOW)
    await _house(hass)
    hass.states.async_set("sensor.solcast", "10", {"detailedForecast": solcast(2.0)})
    entry = home_entry("", pv_forecast_entries=[], pv_forecast_sensor="sensor.solcast", mpc_pv_threshold_kw=0.5)
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)
    manager = home(entry)
    made = manager.result.made_at
    assert manager.result.inputs.pv_source == "sensor" and manager.result.plan.pv_kw.max() == pytest.approx(2.0)
    freezer.tick(timedelta(minutes=1))
    hass.states.async_set("sensor.solcast", "10", {"detailedForecast": solcast(2.4)})  # 0.4 kW: within
    await hass.async_block_till_done(wait_background_tasks=True)
    assert manager.result.made_at == made
    hass.states.async_set("sensor.solcast", "10", {"detailedForecast": solcast(3.0)})  # 1 kW: beyond
    await hass.async_block_till_done(wait_background_tasks=True)
    assert manager.result.made_at > made and manager.result.plan.pv_kw.max() == pytest.approx(3.0)


async def test_a_replan_is_warm_started_from_the_last_plan(
    hass: HomeAssistant, automatic: MockConfigEntry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each replan hands plan_home the entry's last plan as its warm start; unchanged inputs give the same cost."""
    manager = home(automatic)
    given: list[Any] = []

    def spy(curve: PriceCurve, loads: list[LoadSpec], **kwargs: Any) -> Any:
        given.append(kwargs.get("previous"))
        return plan_home(curve, loads, **kwargs)

    monkeypatch.setattr(home_manager, "plan_home", spy)
    first = await manager.async_replan()
    second = await manager.async_replan()
    assert first is not None and first.plan is not None and second is not None and second.plan is not None
    assert given[-1] is first.plan
    assert second.plan.net_cost == pytest.approx(first.plan.net_cost, abs=1e-6)
