"""The slot scheduler: at each 15-minute boundary, the stored plans' starts and stops and the grid plans' slots.

Every command goes through the gates: a plan's start or stop with ``source_agent="scheduler"`` (through
:meth:`.manager.PlanManager.transitions_at`), an approved grid plan's slot command with ``source_agent="grid"``
(through :meth:`..grid_ha.manager.GridManager.async_execute_due`). A program appliance with its own delayed start
gets it at a boundary before its planned start (:mod:`.program_exec`). An EV charger with a control profile gets its
slot's charging current before its start, every slot it charges in (:mod:`.ev_exec`). Then what has ended is replanned (an ended plan
waits for its stop, see :class:`.manager.PlanManager`).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from homeassistant.core import CALLBACK_TYPE, Context, HomeAssistant, callback
from homeassistant.helpers.event import async_track_time_change
from homeassistant.util import dt as dt_util

from ..const import DOMAIN, MEASUREMENT_OPTIONS
from ..gates.models import SOURCE_SCHEDULER
from ..scheduling.program import has_delayed_start, is_program
from .ev_exec import async_charger_slot
from .program_exec import DelayedStarts, async_delayed_start, async_planned_start

if TYPE_CHECKING:
    from ..runtime import AgenticHemsConfigEntry


@callback
def async_track_slots(hass: HomeAssistant, entry: AgenticHemsConfigEntry) -> CALLBACK_TYPE:
    """Run the entry's slot boundaries (minutes 0, 15, 30, 45); returns the callback that stops them."""
    runtime = entry.runtime_data
    planner, control, grid, home = runtime.planner, runtime.control, runtime.grid, runtime.home
    delayed = DelayedStarts()  # the program appliances' own delayed starts sent

    @callback
    def _boundary(now: datetime) -> None:
        moment = dt_util.as_utc(now).replace(second=0, microsecond=0)
        grid.expire_requests()
        entry.async_create_task(hass, grid.async_execute_due(moment), f"{DOMAIN} grid slot")
        due = dict(planner.transitions_at(moment))
        grid_entity = entry.options.get(MEASUREMENT_OPTIONS["grid.power"])
        for appliance_id, appliance in planner.appliances.items():
            if appliance.charger is None or appliance_id not in planner.states:
                continue
            slot = async_charger_slot(
                hass,
                control,
                appliance,
                plan=planner.states[appliance_id].plan,
                moment=moment,
                intent=due.pop(appliance_id, None),
                grid_entity=grid_entity,
                approvals=home.approvals if home is not None else None,
            )
            entry.async_create_task(hass, slot, f"{DOMAIN} charger {appliance.name}")
        for appliance_id, appliance in planner.appliances.items():
            state = planner.states.get(appliance_id)
            plan = state.plan if state is not None else None
            if has_delayed_start(appliance) and plan is not None and plan.start is not None and plan.start > moment:
                delay = async_delayed_start(
                    hass, control, appliance, planned=plan.start, moment=moment, delayed=delayed
                )
                entry.async_create_task(hass, delay, f"{DOMAIN} delayed start {appliance.name}")
        for appliance_id, intent in due.items():
            appliance = planner.appliances[appliance_id]
            if is_program(appliance):  # started in steps; the program ends by itself, so its stop issues nothing
                if intent == "start":
                    entry.async_create_task(
                        hass,
                        async_planned_start(hass, control, appliance, moment, delayed),
                        f"{DOMAIN} program {appliance.name}",
                    )
                continue
            entry.async_create_task(
                hass,
                control.async_evaluate(
                    source_agent=SOURCE_SCHEDULER,
                    raw_input=f"{intent} {appliance.name} (plan slot {moment.isoformat()})",
                    candidate={"intent": intent, "device_alias": appliance.entity_id},
                    context=Context(),
                    slot_start=moment,
                ),
                f"{DOMAIN} scheduler {appliance.name}",
            )
        entry.async_create_background_task(hass, planner.async_replan_due(), f"{DOMAIN} replan")

    return async_track_time_change(hass, _boundary, minute=range(0, 60, 15), second=0)
