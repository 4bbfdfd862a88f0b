"""An appliance switched on outside its plan: the run counts as the one its waiting plan was for.

Whoever switches it on from off (a command through the gates, a confirmed one, a dashboard, HA's own Assist intents),
:func:`async_track_switch_ons` withdraws the plan that waits for this run (:meth:`.manager.PlanManager.async_started_now`);
:func:`async_switched_on` tells the assistant, for one gated command, what became of the plan.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from homeassistant.const import STATE_OFF, STATE_ON
from homeassistant.core import CALLBACK_TYPE, Event, EventStateChangedData, HomeAssistant, callback
from homeassistant.helpers.event import async_track_state_change_event
from homeassistant.util import dt as dt_util

from ..const import DOMAIN
from ..orchestrator.offline import SWITCH_ON
from ..scheduling import Plan
from .manager import PlanManager


@dataclass(frozen=True)
class SwitchedOn:
    """A command switched appliance ``name`` on.

    ``already_on``: it was on (nothing ran); ``withdrawn``: the plan this run replaces; ``plan``: the plan that stands
    now (the next one after a withdrawn plan); each None where there is none.
    """

    name: str
    already_on: bool
    withdrawn: Plan | None
    plan: Plan | None


async def async_switched_on(planner: PlanManager, record: Mapping[str, Any]) -> SwitchedOn | None:
    """Return what one gated command (its trace ``record``) that switches an appliance on did to its plan.

    A ``turn_on`` or ``start`` of an appliance's controlled entity that executed, and found it off, starts a run: the
    plan waiting for it is withdrawn, here or by the listener of :func:`async_track_switch_ons` before. None for any
    other command.
    """
    intent = (record.get("candidate") or {}).get("intent")
    appliance = next((a for a in planner.appliances.values() if a.entity_id == record.get("entity_id")), None)
    if appliance is None or intent not in SWITCH_ON:
        return None
    execution = record.get("execution_result") or {}
    already_on = bool(execution.get("no_op"))
    withdrawn = None
    if record.get("outcome") == "executed" and not already_on:
        await planner.async_started_now(appliance.appliance_id, dt_util.utcnow())
        # The state listener may have withdrawn the plan first, its replan still queued behind this look: wait for it.
        await planner.async_replan_due()
        at, plan = planner.withdrawn.get(appliance.appliance_id, (None, None))
        executed_at = execution.get("executed_at")
        if at is not None and executed_at and at >= datetime.fromisoformat(executed_at):
            withdrawn = plan  # by this run
    plan = planner.states[appliance.appliance_id].plan
    standing = plan if plan is not None and plan.feasible and plan.start is not None else None
    return SwitchedOn(appliance.name, already_on, withdrawn, standing)


@callback
def async_track_switch_ons(hass: HomeAssistant, planner: PlanManager) -> CALLBACK_TYPE:
    """Withdraw an appliance's waiting plan whenever its controlled entity turns from off to on; returns the stop.

    A plan's own start is no such switch-on: that plan has started then, and stays.
    """
    appliance_of = {a.entity_id: a.appliance_id for a in planner.appliances.values()}

    @callback
    def _changed(event: Event[EventStateChangedData]) -> None:
        old, new = event.data["old_state"], event.data["new_state"]
        if old is not None and new is not None and old.state == STATE_OFF and new.state == STATE_ON:
            appliance_id = appliance_of[event.data["entity_id"]]
            hass.async_create_task(
                planner.async_started_now(appliance_id, dt_util.utcnow()), f"{DOMAIN} switched on {appliance_id}"
            )

    return async_track_state_change_event(hass, list(appliance_of), _changed)
