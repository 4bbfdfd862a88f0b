"""A Home Connect dishwasher started through home_connect's actions, with and without its own delayed start.

The dishwasher has HA core's ``home_connect`` shapes: a device of the ``home_connect`` integration, its program
select (registry platform ``home_connect``, program keys as options), a "remote start" binary sensor and an enum
operation state sensor (``ready``, ``delayedstart``, ``run``, ...). HA core registers ``set_program_and_options`` and
``start_selected_program`` only with the Home Connect cloud client (``aiohomeconnect``, not installed here), so
stand-ins with the same voluptuous shape as its services.py (``device_id``, ``affects_to``, ``program``, the
``b_s_h_common_option_start_in_relative`` option in whole seconds, at least a program or an option) record the
calls and move the operation sensor as the appliance would: ``delayedstart`` with a start-in delay, then ``run`` when
it runs out; a refused start (remote start off) raises as the real action does.

Oracles: the plan's own start (hand-computed delay to it), the recorded calls, the operation sensor, the traces and
the repair issue registry.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from freezegun.api import FrozenDateTimeFactory
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_fire_time_changed
import voluptuous as vol

from custom_components.agentic_hems.const import CONF_WAIT_S, DEFAULT_CONTROL_OPTIONS, DEFAULT_OPTIONS, DOMAIN
from custom_components.agentic_hems.planning.program_exec import DelayedStarts, async_delayed_start
from homeassistant.config_entries import ConfigSubentryData
from homeassistant.core import HomeAssistant, ServiceCall, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import device_registry as dr, entity_registry as er, issue_registry as ir
from homeassistant.helpers.event import async_call_later
from homeassistant.setup import async_setup_component

from .conftest import NOW

ECO = "dishcare_dishwasher_program_eco_50"
AUTO = "dishcare_dishwasher_program_auto_2"
PROGRAMS = [AUTO, ECO, "dishcare_dishwasher_program_quick_45"]
SELECT = "select.dishwasher_program"
REMOTE, OPERATION = "binary_sensor.dishwasher_remote_start", "sensor.dishwasher_operation_state"
OPERATION_STATES = ["inactive", "ready", "delayedstart", "run", "pause", "actionrequired", "finished", "error",
                    "aborting"]
START_IN, FINISH_IN = "b_s_h_common_option_start_in_relative", "b_s_h_common_option_finish_in_relative"
DELAY = vol.All(int, vol.Range(min=0))


def _program_or_option(data: dict[str, Any]) -> dict[str, Any]:
    if "program" not in data and not {START_IN, FINISH_IN} & set(data):
        raise vol.Invalid("required_program_or_one_option_at_least")
    return data


# The shapes of HA core 2026.10's home_connect services.py (program keys limited to a dishwasher's).
SET_PROGRAM_AND_OPTIONS = vol.All(
    vol.Schema({
        vol.Required("device_id"): str,
        vol.Required("affects_to"): vol.In(["active_program", "selected_program"]),
        vol.Optional("program"): vol.In(PROGRAMS),
        vol.Optional(START_IN): DELAY,
        vol.Optional(FINISH_IN): DELAY,
    }),
    _program_or_option,
)
START_SELECTED_PROGRAM = vol.Schema({vol.Required("device_id"): str, vol.Optional(START_IN): DELAY,
                                     vol.Optional(FINISH_IN): DELAY})


class HomeConnectStandIn:
    """The two actions on one dishwasher: record each call, move the operation sensor like the appliance."""

    def __init__(self, hass: HomeAssistant, device_id: str, *, follows: bool = True) -> None:
        self.hass, self.device_id, self.follows = hass, device_id, follows
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.answer: asyncio.Event | None = None  # when given, a call is recorded, then answered once it is set
        self._timer: Callable[[], None] | None = None
        hass.services.async_register("home_connect", "set_program_and_options", self._set,
                                     schema=SET_PROGRAM_AND_OPTIONS)
        hass.services.async_register("home_connect", "start_selected_program", self._start,
                                     schema=START_SELECTED_PROGRAM)

    async def _set(self, call: ServiceCall) -> None:
        self.calls.append(("set_program_and_options", dict(call.data)))
        if self.answer is not None:
            await self.answer.wait()
        if call.data["affects_to"] == "active_program":
            self._run(call.data.get("program"), call.data.get(START_IN, 0))

    async def _start(self, call: ServiceCall) -> None:
        self.calls.append(("start_selected_program", dict(call.data)))
        self._run(None, call.data.get(START_IN, 0))

    def _run(self, program: str | None, delay: int) -> None:
        if self.hass.states.get(REMOTE).state != "on":
            raise HomeAssistantError("remote start is not allowed")
        if not self.follows:
            return
        if program:
            _set_select(self.hass, program)
        self.hass.states.async_set(OPERATION, "delayedstart" if delay else "run", _OPERATION_ATTRIBUTES)
        if delay:
            self._timer = async_call_later(self.hass, delay, self._started)

    @callback
    def _started(self, _: datetime) -> None:
        """The delay ran out: the appliance runs."""
        self._timer = None
        self.hass.states.async_set(OPERATION, "run", _OPERATION_ATTRIBUTES)

    def cancel(self) -> None:
        """Someone cancels the delayed start at the appliance: it is ready again and will not start."""
        if self._timer is not None:
            self._timer()
            self._timer = None
        self.hass.states.async_set(OPERATION, "ready", _OPERATION_ATTRIBUTES)


_OPERATION_ATTRIBUTES = {"device_class": "enum", "options": OPERATION_STATES, "friendly_name": "Operation state"}


def _set_select(hass: HomeAssistant, program: str) -> None:
    """The program select's state, reported now (home_connect pushes its states)."""
    hass.states.async_set(SELECT, program, {"options": PROGRAMS, "friendly_name": "Dishwasher program"},
                          force_update=True)


def _appliance(**profile: Any) -> dict[str, Any]:
    return {
        "name": "Dishwasher", "kind": "dishwasher", "entity_id": SELECT, "program": ECO,
        "program_start": "home_connect", "remote_start_entity": REMOTE, "operation_entity": OPERATION,
        "power_kw": 1.8, "duration_min": 150, "contiguous": True, "earliest_start": "18:00:00",
        "deadline": "07:00:00", **profile,
    }


async def _dishwasher(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, *, remote_start: bool = True, follows: bool = True,
    **profile: Any,
) -> tuple[MockConfigEntry, HomeConnectStandIn]:
    await hass.config.async_set_time_zone("Europe/Brussels")
    freezer.move_to(NOW)
    assert await async_setup_component(hass, "homeassistant", {})
    home_connect = MockConfigEntry(domain="home_connect", title="Home Connect")
    home_connect.add_to_hass(hass)
    device = dr.async_get(hass).async_get_or_create(
        config_entry_id=home_connect.entry_id, identifiers={("home_connect", "SIEMENS-SN68-000123")},
        name="Dishwasher", manufacturer="Siemens",
    )
    er.async_get(hass).async_get_or_create(
        "select", "home_connect", "SIEMENS-SN68-000123-selected_program", device_id=device.id,
        config_entry=home_connect, suggested_object_id="dishwasher_program",
    )
    _set_select(hass, AUTO)
    hass.states.async_set(REMOTE, "on" if remote_start else "off", {"friendly_name": "Remote start"})
    hass.states.async_set(OPERATION, "ready", _OPERATION_ATTRIBUTES)
    stand_in = HomeConnectStandIn(hass, device.id, follows=follows)
    entry = MockConfigEntry(
        domain=DOMAIN, title="Sample prices", unique_id="sample", data={"price_source": "sample"},
        options=dict(DEFAULT_OPTIONS), version=1, minor_version=1,
        subentries_data=[ConfigSubentryData(data=_appliance(home_connect_device=device.id, **profile),
                                            subentry_id="dishwasher", subentry_type="appliance", title="Dishwasher",
                                            unique_id=None)],
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)
    await entry.runtime_data.control.async_set_allow_control(True)
    return entry, stand_in


async def _boundary(hass: HomeAssistant, freezer: FrozenDateTimeFactory, at: datetime) -> None:
    freezer.move_to(at)
    _set_select(hass, hass.states.get(SELECT).state)
    async_fire_time_changed(hass, at)
    await hass.async_block_till_done(wait_background_tasks=True)


async def _boundary_under_way(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, at: datetime, done: Callable[[], Any]
) -> None:
    """Fire the slot boundary ``at`` and run the loop until ``done()`` (while another task still waits)."""
    freezer.move_to(at)
    _set_select(hass, hass.states.get(SELECT).state)
    async_fire_time_changed(hass, at)
    for _ in range(2000):
        if done():
            return
        await asyncio.sleep(0)


def _planned_start(entry: MockConfigEntry) -> datetime:
    plan = entry.runtime_data.planner.states["dishwasher"].plan
    assert plan is not None and plan.feasible and plan.start is not None
    return plan.start


def _first_boundary() -> datetime:
    return NOW.replace(minute=15, second=0, microsecond=0)  # NOW is 20:05


async def test_a_delayed_start_is_set_once_and_the_planned_start_is_read_back(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    entry, stand_in = await _dishwasher(hass, freezer, delayed_start=True)
    start = _planned_start(entry)
    first = _first_boundary()
    assert start - first > timedelta(hours=1)
    await _boundary(hass, freezer, first)
    device_id = entry.subentries["dishwasher"].data["home_connect_device"]
    assert stand_in.calls == [("set_program_and_options", {
        "device_id": device_id, "affects_to": "active_program", "program": ECO,
        START_IN: int((start - first).total_seconds())})]
    assert hass.states.get(OPERATION).state == "delayedstart"
    trace = list(entry.runtime_data.control.traces.values())[-1]
    assert trace["outcome"] == "executed"
    assert trace["command"]["backend_action"] == "home_connect.set_program_and_options"
    assert trace["raw_input"].startswith(f"set {SELECT} to {float((start - first).total_seconds())!r} s")
    assert (trace["execution_result"]["state_before"], trace["execution_result"]["state_after"]) == (
        "ready", "delayedstart")
    await _boundary(hass, freezer, first + timedelta(minutes=15))
    assert await hass.config_entries.async_reload(entry.entry_id)  # a restart: what was set is read from the device
    await hass.async_block_till_done(wait_background_tasks=True)
    assert _planned_start(entry) == start
    await _boundary(hass, freezer, first + timedelta(minutes=30))
    await _boundary(hass, freezer, start)  # the appliance starts by itself; nothing is sent again
    assert len(stand_in.calls) == 1
    assert hass.states.get(OPERATION).state == "run"
    assert ir.async_get(hass).async_get_issue(DOMAIN, "program_not_started_dishwasher") is None


async def test_after_a_restart_an_appliance_that_already_runs_by_itself_is_read_back_not_started_again(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """The delayed start was set, HA restarted (what this run sent is gone), and the appliance's own clock started it
    a moment before the planned slot's tick: the operation sensor shows ``run``. The start step's Execution gate finds
    it running: nothing is sent a second time and no "did not start" repair is raised. Oracle: the recorded calls (one) and the registry."""
    entry, stand_in = await _dishwasher(hass, freezer, delayed_start=True)
    start = _planned_start(entry)
    await _boundary(hass, freezer, _first_boundary())
    assert len(stand_in.calls) == 1 and hass.states.get(OPERATION).state == "delayedstart"
    assert await hass.config_entries.async_reload(entry.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)
    assert _planned_start(entry) == start
    stand_in.cancel()  # its own timer is the appliance's clock: it ran out a second early
    hass.states.async_set(OPERATION, "run", _OPERATION_ATTRIBUTES)
    await _boundary(hass, freezer, start)
    assert len(stand_in.calls) == 1
    assert hass.states.get(OPERATION).state == "run"
    trace = list(entry.runtime_data.control.traces.values())[-1]  # the start step finds it running: no call
    assert (trace["outcome"], trace["execution_result"]["no_op"]) == ("executed", True)
    assert ir.async_get(hass).async_get_issue(DOMAIN, "program_not_started_dishwasher") is None


async def test_without_a_delay_the_action_starts_the_program_at_its_planned_slot(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    entry, stand_in = await _dishwasher(hass, freezer)
    start = _planned_start(entry)
    await _boundary(hass, freezer, _first_boundary())
    assert stand_in.calls == []
    await _boundary(hass, freezer, start)
    device_id = entry.subentries["dishwasher"].data["home_connect_device"]
    assert stand_in.calls == [("set_program_and_options",
                               {"device_id": device_id, "affects_to": "active_program", "program": ECO})]
    trace = list(entry.runtime_data.control.traces.values())[-1]
    assert trace["outcome"] == "executed"
    assert trace["dry_run_plan"]["expected_state"] == {"entity_id": OPERATION, "states": ["run", "delayedstart"]}
    assert (trace["execution_result"]["state_before"], trace["execution_result"]["state_after"]) == ("ready", "run")


@pytest.mark.parametrize("delayed_start", [True, False])
async def test_remote_start_off_sends_nothing_and_raises_a_translated_repair(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, delayed_start: bool
) -> None:
    entry, stand_in = await _dishwasher(hass, freezer, remote_start=False, delayed_start=delayed_start)
    start = _planned_start(entry)
    await _boundary(hass, freezer, _first_boundary())  # a delayed start waits for the remote start
    assert entry.runtime_data.control.traces == {} or all(
        t["entity_id"] != SELECT for t in entry.runtime_data.control.traces.values())
    await _boundary(hass, freezer, start)
    assert stand_in.calls == []
    trace = list(entry.runtime_data.control.traces.values())[-1]
    assert trace["outcome"] == "blocked"
    assert trace["gate_results"][-1]["reason"] == f"{SELECT} does not allow a remote start now: {REMOTE} is off"
    issue = ir.async_get(hass).async_get_issue(DOMAIN, "program_not_started_dishwasher")
    assert issue is not None and issue.translation_key == "program_remote_start_off" and issue.is_persistent
    assert issue.translation_placeholders == {"appliance": "Dishwasher", "program": ECO, "entity": SELECT,
                                              "sensor": REMOTE}


async def test_a_plan_made_mid_slot_with_device_control_on_sets_the_delayed_start_at_once(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """No boundary passes: at 20:07:42 the planner notifies (automatic planning turned off and on), and the delay is
    the planned start minus 20:07:00 (the whole minute: the appliance starts at most 59 s after the planned start).
    Later boundaries send nothing again; the appliance runs from 42 s after the planned start."""
    entry, stand_in = await _dishwasher(hass, freezer, delayed_start=True)
    start, planner = _planned_start(entry), entry.runtime_data.planner
    freezer.move_to(NOW.replace(minute=7, second=42))
    _set_select(hass, hass.states.get(SELECT).state)  # the stand-in's states are fresh, as at a boundary
    await planner.async_set_auto("dishwasher", False)
    await planner.async_set_auto("dishwasher", True)
    await hass.async_block_till_done(wait_background_tasks=True)
    assert _planned_start(entry) == start
    device_id = entry.subentries["dishwasher"].data["home_connect_device"]
    assert stand_in.calls == [("set_program_and_options", {
        "device_id": device_id, "affects_to": "active_program", "program": ECO,
        START_IN: int((start - NOW.replace(minute=7, second=0)).total_seconds())})]
    assert hass.states.get(OPERATION).state == "delayedstart"
    await _boundary(hass, freezer, _first_boundary())
    await _boundary(hass, freezer, start + timedelta(seconds=42))  # the appliance starts by itself, 42 s late
    assert len(stand_in.calls) == 1 and hass.states.get(OPERATION).state == "run"


async def test_a_delayed_start_that_did_not_execute_is_tried_once_and_the_plan_starts_it(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """With device control off every command is a dry run: the delayed start is tried once, not at every boundary;
    at the planned start the program is started as without one (a dry run again)."""
    entry, stand_in = await _dishwasher(hass, freezer, delayed_start=True)
    control = entry.runtime_data.control
    await control.async_set_allow_control(False)  # every command a dry run
    start = _planned_start(entry)
    first = _first_boundary()
    for boundary in (first, first + timedelta(minutes=15), first + timedelta(minutes=30)):
        await _boundary(hass, freezer, boundary)
    traces = [t for t in control.traces.values() if t["entity_id"] == SELECT]
    assert [(t["outcome"], t["candidate"]["params"].get("start_in_s")) for t in traces] == [
        ("dry_run", int((start - first).total_seconds()))]
    await _boundary(hass, freezer, start)
    traces = [t for t in control.traces.values() if t["entity_id"] == SELECT]
    assert [(t["outcome"], t["candidate"]["params"].get("start_in_s")) for t in traces][-1] == ("dry_run", None)
    assert stand_in.calls == []


async def test_a_delayed_start_the_appliance_dropped_is_not_resent_and_says_so(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    entry, stand_in = await _dishwasher(hass, freezer, delayed_start=True)
    start = _planned_start(entry)
    await _boundary(hass, freezer, _first_boundary())
    assert len(stand_in.calls) == 1
    stand_in.cancel()
    freezer.move_to(start)
    async_fire_time_changed(hass, start)
    await asyncio.sleep(0)
    wait_s = float(DEFAULT_CONTROL_OPTIONS[CONF_WAIT_S])
    later = start + timedelta(seconds=wait_s + 1)
    freezer.move_to(later)
    async_fire_time_changed(hass, later)  # the read-back's wait runs out
    await hass.async_block_till_done(wait_background_tasks=True)
    assert len(stand_in.calls) == 1  # no second start
    issue = ir.async_get(hass).async_get_issue(DOMAIN, "program_not_started_dishwasher")
    assert issue is not None and issue.translation_key == "program_delayed_not_started" and issue.is_persistent
    assert issue.translation_placeholders == {"appliance": "Dishwasher", "program": ECO, "entity": OPERATION,
                                              "state": "ready"}


async def test_a_plan_that_moved_after_the_delayed_start_keeps_it_and_says_so(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    entry, stand_in = await _dishwasher(hass, freezer, delayed_start=True)
    start = _planned_start(entry)
    first = _first_boundary()
    delayed = DelayedStarts()
    appliance = entry.runtime_data.planner.appliances["dishwasher"]
    control = entry.runtime_data.control
    freezer.move_to(first)
    _set_select(hass, AUTO)
    await async_delayed_start(hass, control, appliance, planned=start, moment=first, delayed=delayed)
    assert delayed.set_for == {"dishwasher": start} and len(stand_in.calls) == 1
    moved = start + timedelta(hours=1)
    assert await async_delayed_start(hass, control, appliance, planned=moved, moment=first, delayed=delayed) == []
    assert len(stand_in.calls) == 1
    stand_in.cancel()
    issue = ir.async_get(hass).async_get_issue(DOMAIN, "program_delay_kept_dishwasher")
    assert issue is not None and issue.translation_key == "program_delay_kept"
    local = start.astimezone(NOW.tzinfo)
    assert issue.translation_placeholders == {
        "appliance": "Dishwasher", "set_for": local.strftime("%Y-%m-%d %H:%M"),
        "planned": (local + timedelta(hours=1)).strftime("%Y-%m-%d %H:%M")}


async def test_once_the_delayed_start_is_set_the_plan_keeps_that_start_across_replans_and_a_restart(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """The appliance starts by itself at the start it was given, so planning keeps that start. The whole-home plan
    moves the plan an hour later before any delayed start is set: taken, and the new plan sets its delayed start at
    once. A placement back is refused while that is under way and after, a change of prices replans nothing, and after a restart the start is
    still kept; no ``program_delay_kept`` repair follows. Oracles: the stored plan's start, the recorded calls (the
    delay to the moved start) and the issue registry."""
    entry, stand_in = await _dishwasher(hass, freezer, delayed_start=True)
    planner = entry.runtime_data.planner
    plan = planner.states["dishwasher"].plan
    assert plan is not None and plan.start is not None and plan.end is not None
    moved = replace(plan, start=plan.start + timedelta(hours=1), end=plan.end + timedelta(hours=1))
    load = planner.load_for("dishwasher", NOW)
    stand_in.answer = asyncio.Event()
    assert await planner.async_adopt({"dishwasher": (moved, load)}, NOW) == set()  # not armed yet: it moves
    for _ in range(100):  # the new plan's delayed start goes through the gates to the action, which waits
        if stand_in.calls:
            break
        await asyncio.sleep(0)
    minute = NOW.replace(second=0, microsecond=0)
    assert [c[1][START_IN] for c in stand_in.calls] == [int((moved.start - minute).total_seconds())]
    assert await planner.async_adopt({"dishwasher": (plan, load)}, NOW) == {"dishwasher"}  # while it is being set
    stand_in.answer.set()
    await hass.async_block_till_done(wait_background_tasks=True)
    assert _planned_start(entry) == moved.start and planner.states["dishwasher"].armed_for == moved.start
    assert await planner.async_adopt({"dishwasher": (plan, load)}, NOW) == {"dishwasher"}
    assert _planned_start(entry) == moved.start
    planner.states["dishwasher"].basis = ""  # as after new prices: an automatic plan would be made again
    await planner.async_replan_due()
    assert planner.states["dishwasher"].plan is moved
    assert await hass.config_entries.async_reload(entry.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)
    planner = entry.runtime_data.planner
    assert planner.states["dishwasher"].armed()
    assert await planner.async_adopt({"dishwasher": (plan, load)}, NOW) == {"dishwasher"}
    await _boundary(hass, freezer, moved.start)
    assert len(stand_in.calls) == 1 and hass.states.get(OPERATION).state == "run"
    for prefix in ("program_delay_kept_", "program_not_started_"):
        assert ir.async_get(hass).async_get_issue(DOMAIN, f"{prefix}dishwasher") is None


async def test_a_delayed_start_set_while_the_appliance_planner_solves_keeps_its_start(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """A replan (new prices) is solving when the slot boundary sets the delayed start for the current plan; the
    solve's answer (an hour later) is not stored, and the appliance is planned again around its start. Oracles: the
    stored plan's start, the one recorded call and the issue registry."""
    entry, stand_in = await _dishwasher(hass, freezer, delayed_start=True)
    planner = entry.runtime_data.planner
    start = _planned_start(entry)
    answer, solve = asyncio.Event(), planner.async_plan_loads

    async def slow(curve: Any, loads: Any, *, exclude: set[str], now: datetime) -> list[Any]:
        plans = await solve(curve, loads, exclude=exclude, now=now)
        await answer.wait()
        return [replace(p, start=p.start + timedelta(hours=1), end=p.end + timedelta(hours=1)) for p in plans]

    planner.async_plan_loads = slow
    planner.states["dishwasher"].basis = ""  # as after new prices
    replan = hass.async_create_task(planner.async_replan_due())
    await asyncio.sleep(0)
    await _boundary_under_way(hass, freezer, _first_boundary(), lambda: planner.states["dishwasher"].armed_for)
    assert len(stand_in.calls) == 1 and planner.states["dishwasher"].armed_for == start
    planner.async_plan_loads = solve
    answer.set()
    await replan
    assert _planned_start(entry) == start
    await _boundary(hass, freezer, start)
    assert len(stand_in.calls) == 1 and hass.states.get(OPERATION).state == "run"
    assert ir.async_get(hass).async_get_issue(DOMAIN, "program_delay_kept_dishwasher") is None


async def test_a_start_held_while_its_delayed_start_failed_is_not_kept_after_a_restart(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """While the delayed start is being sent a placement elsewhere is refused (and the plans saved); the action then
    refuses (remote start turned off). Nothing was set, so nothing is kept: not in memory, not after a restart.
    Oracles: ``armed()`` and ``armed_for`` before and after the reload."""
    entry, stand_in = await _dishwasher(hass, freezer, delayed_start=True)
    planner = entry.runtime_data.planner
    plan = planner.states["dishwasher"].plan
    assert plan is not None and plan.start is not None and plan.end is not None
    load = planner.load_for("dishwasher", NOW)
    moved = replace(plan, start=plan.start + timedelta(hours=1), end=plan.end + timedelta(hours=1))
    stand_in.answer = asyncio.Event()
    assert await planner.async_adopt({"dishwasher": (moved, load)}, NOW) == set()
    for _ in range(100):
        if stand_in.calls:
            break
        await asyncio.sleep(0)
    assert await planner.async_adopt({"dishwasher": (plan, load)}, NOW) == {"dishwasher"}
    await planner._async_save()  # a save while the start is held
    hass.states.async_set(REMOTE, "off", {"friendly_name": "Remote start"})  # the action then refuses
    stand_in.answer.set()
    await hass.async_block_till_done(wait_background_tasks=True)
    assert not planner.states["dishwasher"].armed() and planner.states["dishwasher"].armed_for is None
    assert await hass.config_entries.async_reload(entry.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)
    state = entry.runtime_data.planner.states["dishwasher"]
    assert not state.armed() and state.armed_for is None
