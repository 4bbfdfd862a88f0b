"""The battery mode trigger and condition, run by Home Assistant's automation engine while time moves on.

The entry plans the whole home (tests/ha/test_home_plan.py's house: one 10 kWh battery, the sample prices, PV from a
mocked forecast). Time walks slot boundary by slot boundary, each boundary's replan included. The expected firings
come from the plans' own arrays: after each boundary the plan made at it (its start is the boundary) gives the
battery's power in its first slot, mapped to a mode by hand (charge above 0.05 kW, discharge below -0.05 kW, else
idle); the trigger fires where that mode differs from the previous boundary's.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from freezegun.api import FrozenDateTimeFactory
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_fire_time_changed

from custom_components.agentic_hems.planning.home_manager import HomePlanManager
from custom_components.agentic_hems.validation import vol
from homeassistant.core import HomeAssistant
from homeassistant.helpers import trigger as ha_trigger
from homeassistant.util import dt as dt_util

from .conftest import NOW
from .test_home_plan import _setup
from .test_triggers import automate, automations_off, fired, iso  # noqa: F401  (the fixture turns automations off)

SLOT = timedelta(minutes=15)
BOUNDARIES = 16  # 20:15 .. 00:00 local


def mode(kw: float) -> str:
    return "charge" if kw > 0.05 else "discharge" if kw < -0.05 else "idle"


def planned_mode(manager: HomePlanManager, slot: datetime) -> str:
    plan = manager.result.plan
    assert plan is not None and plan.start == slot  # the plan made at this boundary
    return mode(float(plan.battery_kw["battery1"][0]))


async def boundary(hass: HomeAssistant, freezer: FrozenDateTimeFactory, moment: datetime) -> None:
    freezer.move_to(moment)
    async_fire_time_changed(hass, moment)
    await hass.async_block_till_done(wait_background_tasks=True)


@pytest.fixture
async def entry(hass: HomeAssistant, freezer: FrozenDateTimeFactory) -> MockConfigEntry:
    return await _setup(hass, freezer)


async def test_the_trigger_fires_where_the_boundary_plans_change_the_mode_and_the_condition_follows_the_slot(
    hass: HomeAssistant, entry: MockConfigEntry, freezer: FrozenDateTimeFactory
) -> None:
    manager: HomePlanManager = entry.runtime_data.home
    first = dt_util.as_utc(NOW).replace(minute=15, second=0)
    modes = [mode(float(manager.result.plan.battery_kw["battery1"][0]))]  # 20:00's plan, in force at attach
    calls = await automate(
        hass,
        {"id": "any", "trigger": {"trigger": "agentic_hems.battery_mode_changed", "options": {}},
         "data": {"change": "{{ trigger.battery_name }} {{ trigger.from }}>{{ trigger.to }} {{ trigger.power_kw }}"}},
        {"id": "to_discharge", "trigger": {"trigger": "agentic_hems.battery_mode_changed",
                                           "options": {"battery": "home BATTERY", "to": "discharge"}}},
        {"id": "other_battery", "trigger": {"trigger": "agentic_hems.battery_mode_changed",
                                            "options": {"battery": "garage battery"}}},
        *({"id": f"planned_{m}", "trigger": {"trigger": "event", "event_type": "probe"},
           "conditions": [{"condition": "agentic_hems.battery_planned", "options": {"mode": m}}]}
          for m in ("charge", "discharge", "idle")),
    )
    power = []
    for k in range(BOUNDARIES):
        moment = first + k * SLOT
        await boundary(hass, freezer, moment)
        modes.append(planned_mode(manager, moment))
        power.append(round(float(manager.result.plan.battery_kw["battery1"][0]), 3))
        hass.bus.async_fire("probe")
        await hass.async_block_till_done()
    changes = [k for k in range(BOUNDARIES) if modes[k + 1] != modes[k]]
    assert changes, modes  # the sample evening and night move the battery
    assert fired(calls, "any") == [iso(first + k * SLOT) for k in changes]
    assert fired(calls, "any", "change") == [f"Home battery {modes[k]}>{modes[k + 1]} {power[k]}" for k in changes]
    assert fired(calls, "to_discharge") == [iso(first + k * SLOT) for k in changes if modes[k + 1] == "discharge"]
    assert fired(calls, "other_battery") == []
    for m in ("charge", "discharge", "idle"):
        assert fired(calls, f"planned_{m}") == [iso(first + k * SLOT) for k in range(BOUNDARIES) if modes[k + 1] == m]
    before = len(calls)
    await manager.async_replan()  # a replan within the slot does not fire the trigger again
    await hass.async_block_till_done(wait_background_tasks=True)
    assert len(calls) == before


async def test_a_boundary_fires_on_the_plan_made_at_it_not_the_one_before(
    hass: HomeAssistant, entry: MockConfigEntry, freezer: FrozenDateTimeFactory
) -> None:
    """The plan in force before 20:15 says a third mode for 20:15; the replan at 20:15 decides, whichever runs first."""
    manager: HomePlanManager = entry.runtime_data.home
    first = dt_util.as_utc(NOW).replace(minute=15, second=0)
    calls = await automate(hass, {"id": "any", "trigger": {"trigger": "agentic_hems.battery_mode_changed"},
                                  "data": {"to": "{{ trigger.to }}"}})
    plan = manager.result.plan
    kw = plan.battery_kw["battery1"].copy()
    before, foreseen = mode(float(kw[0])), mode(float(kw[1]))
    fake = next(m for m in ("charge", "discharge", "idle") if m not in (before, foreseen))
    kw[1] = {"charge": 1.0, "discharge": -1.0, "idle": 0.0}[fake]
    manager.result = replace(manager.result, plan=replace(plan, battery_kw={"battery1": kw}))
    await boundary(hass, freezer, first)
    now = planned_mode(manager, first)
    assert now != fake
    assert fired(calls, "any", "to") == ([now] if now != before else [])


async def test_invalid_battery_trigger_and_condition_configs_are_refused(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    valid = await ha_trigger.async_validate_trigger_config(
        hass, [{"platform": "agentic_hems.battery_mode_changed", "options": {"to": "idle"}},
               {"platform": "agentic_hems.battery_mode_changed"}])
    assert [conf.get("options") for conf in valid] == [{"to": "idle"}, {}]
    valid = await ha_trigger.async_validate_trigger_config(  # a text field the editor left empty: any battery
        hass, [{"platform": "agentic_hems.battery_mode_changed", "options": {"battery": "", "to": None}}])
    assert valid[0]["options"] == {}
    for options in ({"to": "boost"}, {"battery": ["a", "b"]}, {"config_entry_id": "nope"}):
        with pytest.raises(vol.Invalid):
            await ha_trigger.async_validate_trigger_config(
                hass, [{"platform": "agentic_hems.battery_mode_changed", "options": options}])
