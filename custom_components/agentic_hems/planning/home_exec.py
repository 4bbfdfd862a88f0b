"""The whole-home plan's commands: one gated command per driven entity and slot, automatic or approved.

The driven entities and what each slot sets (:func:`plan_actions`, :func:`command_for`):

- a battery with a power setpoint (number, input_number): ``set_value`` to the planned power in the entity's unit;
- a battery with a mode select (select, input_select): ``select_option`` to the option its subentry names for the
  slot's mode (:func:`~..scheduling.home_explain.battery_mode`: charge, discharge or idle); a mode without an option
  sets nothing;
- a battery with a mode select and a power setpoint (``power_setpoint``, a number or input_number in W or kW): first
  the mode as above, then ``set_value`` on the setpoint to the planned power in its unit, rounded to its ``step``
  from its ``min`` and kept within ``min``..``max``. A setpoint whose ``min`` is below 0 is signed as the plan is
  (+ charging, - discharging); any other takes the power's magnitude (the mode says its direction). An idle slot
  sets the mode only. The power is set only while the select shows the slot's option: a mode refused, failed or
  not taken (read back as another option, unavailable) leaves the power as it was, with a warning (the mode's
  trace says why); a setpoint that is unavailable or unknown leaves the mode as it was too (the setpoint's refused
  command is the trace), so the battery never runs a new mode at an old power;
- the PV limit (the options' curtailment entity, a number or input_number): ``set_value`` to the planned PV
  production (forecast minus curtailment) where the plan curtails, else to the entity's ``max``.

- ``automatic``: at each slot boundary the slot's command goes through the gates (``source_agent="scheduler"``); the
  policy rules of its domain decide.
- ``approval``: each new plan becomes one authorization request for all its commands (:mod:`.home_approval`). The
  control entities are then grid setpoints: only an approved request's slot command passes the Policy gate
  (``source_agent="grid"`` with a :class:`~..gates.models.GridGrant`), and only exactly the command approved for that
  slot (:class:`.home_approval.HomeSetpoints`).

A command is issued only when an entity's command changes from the last one carried out (or waiting for a
confirmation): an unchanged plan issues nothing; a dry run, a refusal or a failure is tried again at the next slot.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from homeassistant.core import Context, HomeAssistant

from ..const import LOGGER
from ..gates.models import SOURCE_GRID, SOURCE_SCHEDULER, Outcome
from ..gates.values import plan_text
from ..grid_ha.site import setpoint_value
from ..prices.curve import floor_slot
from ..scheduling.home_explain import battery_mode
from ..scheduling.home_model import HomePlan
from .home_config import BatteryConfig, HomeConfig

if TYPE_CHECKING:
    from ..control.manager import ControlManager
    from .home_approval import HomeApprovals

ACTION_TYPE = "home_battery_power"
MODE_ACTION = "home_battery_mode"
MODE_POWER_ACTION = "home_battery_mode_power"  # a mode select battery's power setpoint
LIMIT_ACTION = "home_pv_limit"
ACTIONS = frozenset({ACTION_TYPE, MODE_ACTION, MODE_POWER_ACTION, LIMIT_ACTION})
SETPOINT_DOMAINS = ("number", "input_number")
MODE_DOMAINS = ("select", "input_select")
CURTAIL_EPS_KW = 1e-3  # below this much planned curtailment the PV limit goes back to its maximum

type Channel = tuple[dict[str, Any], list[dict[str, Any] | None]]  # (fixed action fields, value fields per slot)


def plan_actions(plan: HomePlan, config: HomeConfig, since: datetime) -> list[dict[str, Any]]:
    """Return the plan's commands from slot ``since`` on, as request actions (equal neighbours merged).

    Each is ``{"start", "end", "type", "entity_id", ...}``: ``home_battery_power`` with ``battery`` and ``p_kw``
    (kW, + charging) for a setpoint battery, ``home_battery_mode`` with ``battery``, ``mode`` (charge, discharge,
    idle) and ``option`` (the select's option for it) for a select battery (slots whose mode has no option are left
    out), ``home_battery_mode_power`` with ``battery``, ``mode_entity`` (the select), ``option`` (the mode's) and
    ``p_kw`` (kW, + charging) for its power setpoint (idle slots left out), ``home_pv_limit`` with ``limit_kw`` (the
    planned PV production, None for the entity's maximum) for the curtailment entity.
    """
    actions: list[dict[str, Any]] = []
    for fixed, values in channels(plan, config):
        for i, value in enumerate(values):
            start, end = plan.start + i * plan.resolution, plan.start + (i + 1) * plan.resolution
            if end <= since or value is None:
                continue
            last = actions[-1] if actions else None
            if (
                last
                and last["entity_id"] == fixed["entity_id"]
                and last["end"] == start.isoformat()
                and {k: last[k] for k in value} == value
            ):
                last["end"] = end.isoformat()
                continue
            actions.append({"start": max(start, since).isoformat(), "end": end.isoformat(), **fixed, **value})
    return actions


def channels(plan: HomePlan, config: HomeConfig) -> list[Channel]:
    """Return each driven entity of the plan with its value fields per slot (see :func:`plan_actions`)."""
    out: list[Channel] = []
    for bat in config.batteries:
        series, entity = plan.battery_kw.get(bat.subentry_id), bat.control_entity
        if series is None or not entity:
            continue
        fixed = {"entity_id": entity, "battery": bat.subentry_id}
        if _domain(entity) in SETPOINT_DOMAINS:
            out.append(({"type": ACTION_TYPE, **fixed}, [{"p_kw": _kw(v)} for v in series]))
        elif _domain(entity) in MODE_DOMAINS:
            modes = [_mode(bat, float(v)) for v in series]
            out.append(({"type": MODE_ACTION, **fixed}, modes))
            if bat.power_setpoint:
                power = {"type": MODE_POWER_ACTION, "entity_id": bat.power_setpoint, "battery": bat.subentry_id}
                values = [
                    None if m is None or m["mode"] == "idle" else {"option": m["option"], "p_kw": _kw(v)}
                    for m, v in zip(modes, series, strict=True)
                ]
                out.append(({**power, "mode_entity": entity}, values))
    entity = config.curtailment_entity
    if entity and _domain(entity) in SETPOINT_DOMAINS:
        limits = [
            {"limit_kw": _kw(pv - cut) if cut > CURTAIL_EPS_KW else None}
            for pv, cut in zip(plan.pv_kw, plan.curtail_kw, strict=True)
        ]
        out.append(({"type": LIMIT_ACTION, "entity_id": entity}, list(limits)))
    return out


def _domain(entity_id: str) -> str:
    return entity_id.split(".", 1)[0]


def _kw(value: float) -> float:
    return round(float(value), 3) + 0.0


def _mode(bat: BatteryConfig, kw: float) -> dict[str, Any] | None:
    """Return a select battery's mode fields for a planned power, None when its mode has no option."""
    mode = battery_mode(kw)
    option = bat.control_modes.get(mode)
    return None if option is None else {"mode": mode, "option": option}


def command_for(hass: HomeAssistant, action: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """Return the gates' intent and params that carry out a home action now, None when nothing can be set.

    A battery power is the setpoint's value in its unit; a mode is the select's option; a PV limit is the planned
    production in the entity's unit, clamped to its ``min``..``max``, or its ``max`` (None when it has none).
    """
    entity_id = action["entity_id"]
    if action["type"] == MODE_ACTION:
        return "select_option", {"option": action["option"]}
    if action["type"] == ACTION_TYPE:
        return "set_value", {"value": setpoint_value(hass, entity_id, action["p_kw"])}
    if action["type"] == MODE_POWER_ACTION:
        return "set_value", {"value": mode_power_value(hass, entity_id, action["p_kw"])}
    state = hass.states.get(entity_id)
    low, high = (state.attributes.get(k) if state else None for k in ("min", "max"))
    if not isinstance(high, (int, float)):
        return None
    if action["limit_kw"] is None:
        return "set_value", {"value": float(high)}
    value = min(setpoint_value(hass, entity_id, action["limit_kw"]), float(high))
    return "set_value", {"value": max(value, float(low)) if isinstance(low, (int, float)) else value}


def mode_power_value(hass: HomeAssistant, entity_id: str, p_kw: float) -> float:
    """Return a mode battery's planned power (kW, + charging) as its setpoint's value (see the module docstring).

    Signed when the setpoint's ``min`` is below 0, else the magnitude; in its unit (W, kW or MW; kW without one), on
    its step grid from ``min``, within ``min``..``max`` where it has them.
    """
    state = hass.states.get(entity_id)
    low, high = (state.attributes.get(k) if state else None for k in ("min", "max"))
    signed = isinstance(low, (int, float)) and low < 0
    value = setpoint_value(hass, entity_id, p_kw if signed else abs(p_kw))
    if isinstance(high, (int, float)):
        value = min(value, float(high))
    return max(value, float(low)) if isinstance(low, (int, float)) else value


class HomeExecutor:
    """Issues the plan's battery commands (see the module docstring)."""

    def __init__(
        self, hass: HomeAssistant, config: HomeConfig, control: ControlManager, approvals: HomeApprovals
    ) -> None:
        """Drive ``config``'s batteries through ``control``; in approval mode as ``approvals`` approved."""
        self.hass = hass
        self.config = config
        self.control = control
        self.approvals = approvals
        self.issued: dict[str, tuple[str, dict[str, Any]]] = {}  # entity -> the last command issued

    @property
    def approval(self) -> bool:
        """True when battery commands wait for an administrator's approval."""
        return self.approvals.active

    async def async_execute(self, plan: HomePlan | None, now: datetime) -> list[dict[str, Any]]:
        """Issue each driven entity's command for the slot at ``now`` when it changed; returns the gates' traces."""
        slot = floor_slot(now)
        records = []
        actions = self._actions_at(plan, slot)
        held = self._held_modes(actions)
        for entity, action in sorted(actions.items(), key=lambda item: bool(item[1] and "mode_entity" in item[1])):
            command = None if action is None else command_for(self.hass, action)
            if command is None or self.issued.get(entity) == command or entity in held:
                continue
            mode_entity = action.get("mode_entity") if action else None
            if mode_entity and mode_entity not in held and not self._mode_taken(action or {}, entity, command):
                continue
            if _holds(self.hass, entity, command):  # already so (e.g. after a reload): nothing to issue
                self.issued[entity] = command
                continue
            record = await self._command(entity, command, slot)
            if record["outcome"] in (Outcome.EXECUTED, Outcome.PENDING_CONFIRMATION):
                self.issued[entity] = command  # a dry run, a refusal or a failure is tried again next slot
            records.append(record)
        if records and self.approval:
            await self.approvals.records.async_save()
        return records

    def _held_modes(self, actions: Mapping[str, Mapping[str, Any] | None]) -> set[str]:
        """Return the mode selects left as they are because their power setpoint is unavailable or unknown.

        Such a setpoint's command would be refused (its trace says so), so the mode is not changed for it: the
        battery keeps its last mode and power instead of running the new mode at the old power.
        """
        held = set()
        for entity, action in actions.items():
            if not action or not action.get("mode_entity"):
                continue
            state = self.hass.states.get(entity)
            if state is None or state.state in ("unavailable", "unknown"):
                LOGGER.warning(
                    "Whole-home plan: the battery's mode %s is not set to %s: its power setpoint %s is %s; "
                    "the battery stays as it was",
                    action["mode_entity"],
                    action["option"],
                    entity,
                    "missing" if state is None else state.state,
                )
                held.add(str(action["mode_entity"]))
        return held

    def _mode_taken(self, action: Mapping[str, Any], entity_id: str, command: tuple[str, dict[str, Any]]) -> bool:
        """Return True when a power setpoint's mode select shows its action's option; else warn why it is not set."""
        select = str(action["mode_entity"])
        state = self.hass.states.get(select)
        if state is not None and state.state == action["option"]:
            return True
        LOGGER.warning(
            "Whole-home plan: %s is not set to %s: the battery's mode %s shows %s, not %s (see its command's trace)",
            entity_id,
            command[1]["value"],
            select,
            "nothing" if state is None else state.state,
            action["option"],
        )
        return False

    def _actions_at(self, plan: HomePlan | None, slot: datetime) -> dict[str, dict[str, Any] | None]:
        """Return per driven entity the action for ``slot``: the approved one (approval mode) or the plan's."""
        if self.approval:
            return {e: self.approvals.action_at(e, slot, ACTIONS) for e in sorted(self.config.control_entities())}
        if plan is None:
            return {}
        in_slot = [a for a in plan_actions(plan, self.config, slot) if datetime.fromisoformat(a["start"]) == slot]
        return {a["entity_id"]: a for a in in_slot}

    async def _command(self, entity_id: str, command: tuple[str, dict[str, Any]], slot: datetime) -> dict[str, Any]:
        """Run one command through the gates (with the approved request's grant in approval mode)."""
        grant = self.approvals.grant(slot)
        intent, params = command
        value = next(iter(params.values()))
        LOGGER.debug("Whole-home plan: %s to %s for slot %s", entity_id, value, slot.isoformat())
        return dict(
            await self.control.async_evaluate(
                source_agent=SOURCE_GRID if grant else SOURCE_SCHEDULER,
                candidate={"intent": intent, "device_alias": entity_id, "params": params},
                context=Context(),
                raw_input=f"{plan_text(entity_id, value)}: whole-home plan, slot {slot.isoformat()}",
                slot_start=slot,
                grant=grant,
            )
        )


def _holds(hass: HomeAssistant, entity_id: str, command: tuple[str, dict[str, Any]]) -> bool:
    """Return True when ``entity_id`` already is what ``command`` sets: a select's option or a number's value."""
    state = hass.states.get(entity_id)
    if state is None:
        return False
    intent, params = command
    if intent == "select_option":
        return bool(state.state == params["option"])
    try:
        return abs(float(state.state) - float(params["value"])) <= 1e-6
    except ValueError:
        return False
