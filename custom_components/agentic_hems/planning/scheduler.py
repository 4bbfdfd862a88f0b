"""The slot scheduler: at each 15-minute boundary, the stored plans' starts and stops and the grid plans' slots.

Every command goes through the gates: a plan's start or stop with ``source_agent="scheduler"`` (through
:meth:`.manager.PlanManager.transitions_at`), an approved grid plan's slot command with ``source_agent="grid"``
(through :meth:`..grid_ha.manager.GridManager.async_execute_due`). A program appliance with its own delayed start
gets it when it is planned or at a boundary before its planned start (:mod:`.program_exec`); from then on planning
keeps that start (:meth:`.manager.PlanManager.async_keeping`). An EV charger with a
control profile gets its slot's charging current before its start, every slot it charges in (:mod:`.ev_exec`). Then
what has ended is replanned (an ended plan waits for its stop, see :class:`.manager.PlanManager`).
"""

from __future__ import annotations

from collections.abc import Coroutine
from datetime import datetime
from typing import TYPE_CHECKING, Any

from homeassistant.core import CALLBACK_TYPE, Context, HomeAssistant, callback
from homeassistant.helpers.event import async_track_time_change
from homeassistant.util import dt as dt_util

from ..const import DOMAIN, MEASUREMENT_OPTIONS
from ..gates.models import SOURCE_SCHEDULER
from ..scheduling.appliance import Appliance
from ..scheduling.program import has_delayed_start, is_program
from .ev_exec import async_charger_slot
from .program_exec import DelayedStarts, async_delayed_start, async_planned_start

if TYPE_CHECKING:
    from ..runtime import AgenticHemsConfigEntry
    from .manager import PlanManager


@callback
def async_track_slots(hass: HomeAssistant, entry: AgenticHemsConfigEntry) -> CALLBACK_TYPE:
    """Run the entry's slot boundaries (minutes 0, 15, 30, 45) and its delayed starts; returns the boundaries' stop.

    A new plan sets a program appliance's own delayed start at once where it can; the plan listener ends with the
    entry's unload.
    """
    runtime = entry.runtime_data
    planner, control, grid = runtime.planner, runtime.control, runtime.grid
    delayed = DelayedStarts()  # the program appliances' own delayed starts sent

    @callback
    def _arm(moment: datetime, *, on_step_only: bool) -> None:
        for appliance, delay in _delayed_starts(hass, entry, delayed, moment, on_step_only=on_step_only):
            entry.async_create_task(hass, delay, f"{DOMAIN} delayed start {appliance.name}")

    @callback
    def _planned() -> None:
        # A new plan sets the delayed start at once, counted from the whole minute (at most 59 s late), where the delay
        # lies on the appliance's step; else the next boundary does (so does it while device control is off: a dry
        # run there counts as the one try).
        if control.allow_control:
            _arm(dt_util.utcnow().replace(second=0, microsecond=0), on_step_only=True)

    @callback
    def _boundary(now: datetime) -> None:
        moment = dt_util.as_utc(now).replace(second=0, microsecond=0)
        grid.expire_requests()
        entry.async_create_task(hass, grid.async_execute_due(moment), f"{DOMAIN} grid slot")
        due = dict(planner.transitions_at(moment))
        _charger_slots(hass, entry, moment, due)
        _arm(moment, on_step_only=False)
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

    entry.async_on_unload(planner.async_add_listener(_planned))
    return async_track_time_change(hass, _boundary, minute=range(0, 60, 15), second=0)


@callback
def _charger_slots(hass: HomeAssistant, entry: AgenticHemsConfigEntry, moment: datetime, due: dict[str, str]) -> None:
    """Run each EV charger's slot at ``moment``, with its due start or stop taken out of ``due``."""
    planner, home = entry.runtime_data.planner, entry.runtime_data.home
    grid_entity = entry.options.get(MEASUREMENT_OPTIONS["grid.power"])
    for appliance_id, appliance in planner.appliances.items():
        if appliance.charger is None or appliance_id not in planner.states:
            continue
        slot = async_charger_slot(
            hass,
            entry.runtime_data.control,
            appliance,
            plan=planner.states[appliance_id].plan,
            moment=moment,
            intent=due.pop(appliance_id, None),
            grid_entity=grid_entity,
            approvals=home.approvals if home is not None else None,
        )
        entry.async_create_task(hass, slot, f"{DOMAIN} charger {appliance.name}")


def _delayed_starts(
    hass: HomeAssistant, entry: AgenticHemsConfigEntry, delayed: DelayedStarts, moment: datetime, *, on_step_only: bool
) -> list[tuple[Appliance, Coroutine[Any, Any, list[dict[str, Any]]]]]:
    """Return each program appliance's delayed start to set at ``moment`` for its planned start.

    One already tried for that start sends nothing (:func:`.program_exec.async_delayed_start`); one set tells the
    planner, which keeps that start from then on.
    """
    planner, control = entry.runtime_data.planner, entry.runtime_data.control
    out = []
    for appliance_id, appliance in planner.appliances.items():
        state = planner.states.get(appliance_id)
        plan = state.plan if state is not None else None
        if not has_delayed_start(appliance) or plan is None or plan.start is None or plan.start <= moment:
            continue
        delay = async_delayed_start(
            hass, control, appliance, planned=plan.start, moment=moment, delayed=delayed, on_step_only=on_step_only
        )
        out.append((appliance, _armed(planner, appliance_id, plan.start, delay, delayed)))
    return out


async def _armed(
    planner: PlanManager,
    appliance_id: str,
    planned: datetime,
    delay: Coroutine[Any, Any, list[dict[str, Any]]],
    delayed: DelayedStarts,
) -> list[dict[str, Any]]:
    """Await the delayed start ``delay`` with the plan kept at ``planned``; once it is set, the planner keeps it."""
    async with planner.async_keeping(appliance_id, planned, lambda: delayed.set_for.get(appliance_id) == planned):
        return await delay
