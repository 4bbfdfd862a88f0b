"""The whole-home plan's heat pump commands: one gated command per heat pump and slot, automatic or approved.

What a slot asks of a heat pump (:func:`slot_command`):

- a climate entity, or a water_heater (a hot-water tank's heat pump): ``set_temperature`` to the plan's temperature
  at the slot's end while the plan runs the heat pump, else to the comfort floor of the slot (the thermostat then
  only heats to keep the floor); in HA's temperature unit, rounded to the entity's ``target_temp_step`` (0.5 without
  one), within its ``min_temp``/``max_temp``;
- a switch (an SG-Ready style boost contact): ``turn_on`` while the plan runs the heat pump, else ``turn_off``;
- SG Ready (two contacts, optionally a setpoint-offset number): the slot's state (:mod:`..scheduling.sg_ready`), each
  contact ``turn_on``/``turn_off`` in the switching order, then the number's ``set_value`` (:mod:`.sg_exec`).

It goes through the gates like the batteries' commands (:mod:`.home_exec`), under the same option
(``battery_control``):

- ``automatic``: at each slot boundary, as ``source_agent="scheduler"``; the policy rules of the domain decide;
- ``approval``: the plan's heat pump commands (actions of type ``home_heat_pump``) are part of the plan's one
  authorization request (:mod:`.home_approval`); the control entities are reserved and only an approved request's
  slot command passes the Policy gate (``source_agent="grid"`` with a grant), exactly as approved: the temperature,
  or for a switch ``turn_on`` or ``turn_off``, for an offset number its value (:class:`.home_approval.HomeSetpoints`);
  SG Ready's two contacts and its number are each an action of the request.

A command is issued only when the heat pump's value changes from the last one carried out (or waiting for a
confirmation): an unchanged plan issues nothing; a dry run, a refusal or a failure is tried again at the next slot.
"""

from __future__ import annotations

from datetime import datetime
import math
from typing import TYPE_CHECKING, Any

from homeassistant.const import UnitOfTemperature
from homeassistant.core import Context, HomeAssistant
from homeassistant.util.unit_conversion import TemperatureConverter

from ..const import LOGGER
from ..gates.models import SOURCE_GRID, SOURCE_SCHEDULER, Outcome
from ..gates.tables import DEFAULT_TEMP_RANGES
from ..gates.values import plan_text
from ..prices.curve import floor_slot
from .heat_config import HeatPumpConfig
from .heat_view import EPS_KW, heat_band, heat_kw, temp_c
from .home_config import HomeConfig
from .sg_exec import async_switch, slot_states, state_values

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..control.manager import ControlManager
    from .home_approval import HomeApprovals
    from .home_manager import HomeResult
    from .sg_blocks import SgTimes

ACTION_TYPE = "home_heat_pump"
ACTIONS = frozenset({ACTION_TYPE})
DEFAULT_STEP_C = 0.5


def temperature_target(hass: HomeAssistant, entity_id: str, temperature: float) -> float:
    """``temperature`` (°C) in HA's temperature unit, rounded to the entity's ``target_temp_step``, within its range.

    A climate or water_heater entity's target and range attributes, and its ``set_temperature``, are in HA's unit
    system's temperature unit (°F in US customary units). The range is the entity's ``min_temp``/``max_temp``, HA's
    defaults of its domain when it has none; an attribute that is not a finite number (a step not above 0, a range
    whose low is above its high) counts as missing.
    """
    unit = hass.config.units.temperature_unit
    state = hass.states.get(entity_id)
    attributes = state.attributes if state is not None else {}
    step = _number(attributes.get("target_temp_step"))
    step = step if step is not None and step > 0 else DEFAULT_STEP_C
    default_low, default_high = (_from_celsius(t, unit) for t in DEFAULT_TEMP_RANGES[entity_id.split(".", 1)[0]])
    low, high = _number(attributes.get("min_temp")), _number(attributes.get("max_temp"))
    low = default_low if low is None or (high is not None and low > high) else low
    high = default_high if high is None or high < low else high
    value = round(_from_celsius(temperature, unit) / step) * step
    return round(min(max(value, low), high), 4) + 0.0


def _number(value: Any) -> float | None:
    """``value`` as a finite float; None for anything else (missing, a text, a bool, inf or NaN)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _from_celsius(value: float, unit: str) -> float:
    return TemperatureConverter.convert(value, UnitOfTemperature.CELSIUS, unit)


def slot_command(hass: HomeAssistant, hp: HeatPumpConfig, result: HomeResult | None, i: int) -> float | str | None:
    """Return what slot ``i`` of the result's plan asks of the heat pump: a temperature, "on"/"off", or None."""
    plan = result.plan if result is not None else None
    power, temps = heat_kw(plan, hp.subentry_id), temp_c(plan, hp.subentry_id)
    if power is None or temps is None or not 0 <= i < power.size:
        return None
    running = bool(power[i] > EPS_KW)
    if hp.control_entity.startswith("switch."):
        return "on" if running else "off"
    band = heat_band(result.inputs if result is not None else None, hp.subentry_id)
    target = float(temps[i + 1]) if running else (float(band[0][i]) if band is not None else math.nan)
    return temperature_target(hass, hp.control_entity, target) if math.isfinite(target) else None


def slot_values(
    hass: HomeAssistant, hp: HeatPumpConfig, result: HomeResult | None, first: int, stored: SgTimes | None = None
) -> list[dict[str, Any]]:
    """Return what each slot of the plan from slot ``first`` on asks: ``{entity_id: value}`` per slot.

    One entry (:func:`slot_command`; empty where it asks nothing), or SG Ready's contacts and offset number (with
    the heat pump's ``stored`` block times, :func:`.sg_exec.slot_states`).
    """
    if hp.sg_ready:
        return [state_values(hp, state) for state in slot_states(hass, hp, result, first, stored)]
    plan = result.plan if result is not None else None
    n = plan.import_kw.size if plan is not None else 0
    commands = (slot_command(hass, hp, result, i) for i in range(first, n))
    return [{hp.control_entity: value} if value is not None else {} for value in commands]


def plan_actions(
    hass: HomeAssistant,
    result: HomeResult,
    config: HomeConfig,
    since: datetime,
    sg_times: Mapping[str, SgTimes] | None = None,
) -> list[dict[str, Any]]:
    """Return the plan's heat pump commands from slot ``since`` on, as request actions (equal neighbours merged).

    ``sg_times`` maps an SG Ready heat pump's subentry id to its block times kept across restarts (:mod:`.sg_blocks`).

    Each is ``{"start", "end", "type": "home_heat_pump", "entity_id", "heat_pump", "value"}`` with the target
    temperature (in HA's temperature unit, a climate or water_heater entity), "on"/"off" (a switch, an SG Ready
    contact) or an SG Ready offset number's value.
    """
    plan = result.plan
    actions: list[dict[str, Any]] = []
    if plan is None:
        return actions
    first = max(int((floor_slot(since) - plan.start) / plan.resolution), 0)
    for hp in config.heat_pumps:
        per_slot = slot_values(hass, hp, result, first, (sg_times or {}).get(hp.subentry_id))
        for entity_id in hp.entities():
            last: dict[str, Any] | None = None
            for i, values in enumerate(per_slot, start=first):
                start, end = plan.start + i * plan.resolution, plan.start + (i + 1) * plan.resolution
                if (value := values.get(entity_id)) is None:
                    continue
                if last and last["value"] == value and last["end"] == start.isoformat():
                    last["end"] = end.isoformat()
                    continue
                last = {
                    "start": max(start, since).isoformat(),
                    "end": end.isoformat(),
                    "type": ACTION_TYPE,
                    "entity_id": entity_id,
                    "heat_pump": hp.subentry_id,
                    "value": value,
                }
                actions.append(last)
    return actions


def heat_command(value: float | str, entity_id: str = "") -> tuple[str, dict[str, Any]]:
    """Return the intent and params that set ``entity_id`` to ``value``.

    "on"/"off" for a switch or contact, a number's value (an SG Ready offset number), else a target temperature
    (HA's temperature unit).
    """
    if isinstance(value, str):
        return f"turn_{value}", {}
    if entity_id.startswith(("number.", "input_number.")):
        return "set_value", {"value": value}
    return "set_temperature", {"temperature": value}


class HeatExecutor:
    """Issues the plan's heat pump commands (see the module docstring)."""

    def __init__(
        self,
        hass: HomeAssistant,
        config: HomeConfig,
        control: ControlManager,
        approvals: HomeApprovals,
        sg_times: Mapping[str, SgTimes] | None = None,
    ) -> None:
        """Drive ``config``'s heat pumps through ``control``; in approval mode as ``approvals`` approved.

        ``sg_times``: the SG Ready heat pumps' block times kept across restarts, by subentry id (:mod:`.sg_blocks`).
        """
        self.hass = hass
        self.config = config
        self.control = control
        self.approvals = approvals
        self.sg_times = sg_times if sg_times is not None else {}
        self.issued: dict[str, float | str] = {}  # control entity -> the last value issued

    @property
    def approval(self) -> bool:
        """True when heat pump commands wait for an administrator's approval (the batteries' option)."""
        return self.approvals.active

    async def async_execute(self, result: HomeResult | None, now: datetime) -> list[dict[str, Any]]:
        """Issue each heat pump's command for the slot at ``now`` when it changed; returns the gates' traces."""
        slot = floor_slot(now)
        records: list[dict[str, Any]] = []
        for hp in self.config.heat_pumps:
            if hp.sg_ready:
                records += await self._sg_ready(hp, result, slot)
                continue
            value = self._value_at(hp, result, slot)
            if value is None or self.issued.get(hp.control_entity) == value:
                continue
            if _holds(self.hass, hp.control_entity, value):  # already so (e.g. after a reload): nothing to issue
                self.issued[hp.control_entity] = value
                continue
            record = await self._command(hp.control_entity, value, slot)
            if record["outcome"] in (Outcome.EXECUTED, Outcome.PENDING_CONFIRMATION):
                self.issued[hp.control_entity] = value  # a dry run, a refusal or a failure is tried again next slot
            records.append(record)
        if records and self.approval:
            await self.approvals.records.async_save()
        return records

    def _value_at(self, hp: HeatPumpConfig, result: HomeResult | None, slot: datetime) -> float | str | None:
        """Return the value for ``slot``: the approved one (approval mode) or the plan's."""
        if self.approval:
            action = self.approvals.action_at(hp.control_entity, slot, ACTIONS)
            return None if action is None else action["value"]
        plan = result.plan if result is not None else None
        if plan is None:
            return None
        return slot_command(self.hass, hp, result, int((slot - plan.start) / plan.resolution))

    async def _sg_ready(self, hp: HeatPumpConfig, result: HomeResult | None, slot: datetime) -> list[dict[str, Any]]:
        """Take an SG Ready heat pump to the slot's state when it changed (:func:`.sg_exec.async_switch`)."""
        if self.approval:
            found = {e: self.approvals.action_at(e, slot, ACTIONS) for e in hp.entities()}
            values = {e: a["value"] for e, a in found.items() if a is not None}
        else:
            plan = result.plan if result is not None else None
            first = int((slot - plan.start) / plan.resolution) if plan is not None else 0
            values = next(iter(slot_values(self.hass, hp, result, first, self.sg_times.get(hp.subentry_id))), {})
        key = hp.subentry_id
        if not values or self.issued.get(key) == repr(sorted(values.items())):
            return []

        async def evaluate(entity_id: str, value: float | str) -> dict[str, Any]:
            return await self._command(entity_id, value, slot)

        records, done = await async_switch(self.hass, hp, values, evaluate)
        if done:
            self.issued[key] = repr(sorted(values.items()))  # else tried again at the next slot
        return records

    async def _command(self, entity_id: str, value: float | str, slot: datetime) -> dict[str, Any]:
        """Run one command through the gates (with the approved request's grant in approval mode)."""
        grant = self.approvals.grant(slot)
        intent, params = heat_command(value, entity_id)
        candidate = {"intent": intent, "device_alias": entity_id, "params": params}
        unit = self.hass.config.units.temperature_unit if intent == "set_temperature" else ""
        what = f"turn {value} {entity_id}" if isinstance(value, str) else plan_text(entity_id, value, unit)
        LOGGER.debug("Whole-home plan: %s for slot %s", what, slot.isoformat())
        return dict(
            await self.control.async_evaluate(
                source_agent=SOURCE_GRID if grant else SOURCE_SCHEDULER,
                candidate=candidate,
                context=Context(),
                raw_input=f"{what}: whole-home plan (heat pump), slot {slot.isoformat()}",
                slot_start=slot,
                grant=grant,
            )
        )


def _holds(hass: HomeAssistant, entity_id: str, value: float | str) -> bool:
    """Return True when ``entity_id`` already is ``value``: a switch's state, a climate or water heater's target."""
    state = hass.states.get(entity_id)
    if state is None:
        return False
    if isinstance(value, str):
        return state.state == value
    target = state.attributes.get("temperature")
    return isinstance(target, (int, float)) and abs(float(target) - value) <= 1e-6
