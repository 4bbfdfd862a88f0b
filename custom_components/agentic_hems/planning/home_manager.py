"""The whole-home plan in Home Assistant: plans, re-plans (MPC) and hands the plan to the scheduler and the gates.

:class:`HomePlanManager` gathers the inputs (:mod:`.home_inputs`), runs :func:`~..scheduling.home.plan_home` in an
executor job with the appliances due for planning as loads (running, pinned and manual plans stay, as fixed loads),
writes the appliances' placements back into the :class:`~.manager.PlanManager` (whose scheduler issues their starts)
and issues the batteries' slot commands (:mod:`.home_exec`).

Under phase limits each fixed load counts on its appliance's phase (spread over L1-L3 when the appliance has none);
the house's base load, forecast from the house power sensor, has no phase and is spread over the three (all on L1
on a single-phase connection). When a phase limit leaves no plan, the result names the phase and the devices on it.

It re-plans at each 15-minute boundary, on new prices, when a battery's measured SoC departs from the plan by more
than ``mpc_soc_threshold_pct`` and when the PV forecast sensor moves by more than ``mpc_pv_threshold_kw`` in a slot.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
import math
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from homeassistant.core import CALLBACK_TYPE, Event, EventStateChangedData, HomeAssistant, callback
from homeassistant.helpers import issue_registry as ir
from homeassistant.helpers.event import async_track_state_change_event, async_track_utc_time_change
from homeassistant.util import dt as dt_util

from ..const import DOMAIN, LOGGER
from ..listeners import ChangeListeners
from ..prices.curve import FloatArray, PriceCurve
from ..scheduling.home import plan_home
from ..scheduling.home_grid import fuse_over_fixed, phases_over_fixed
from ..scheduling.home_model import HomePlan, HomePlanError, Limit, PhaseLimits, PhaseOver
from ..scheduling.plan import LoadSpec, Plan, Reason
from ..scheduling.windows import build_plan
from .heat_exec import HeatExecutor
from .heat_inputs import async_heat_pumps, cut_at_forecast, measured_temperature
from .heat_view import temp_c
from .home_approval import HomeApprovals
from .home_config import HomeConfig
from .home_exec import HomeExecutor
from .home_inputs import HomeInputs, async_inputs, phases_of
from .sg_blocks import SgBlocks
from .solar_source import sensor_forecast

if TYPE_CHECKING:
    from ..control.manager import ControlManager
    from ..coordinator import PriceCoordinator
    from ..grid_ha.manager import GridManager
    from ..grid_ha.records import GridRecords
    from .manager import PlanManager


@dataclass
class HomeResult:
    """The latest whole-home plan and what it stands on; ``plan`` None with ``reason`` when there is none.

    ``phase_over`` says which phase and devices when a phase limit left no plan; its devices go by their names
    ("base" and "pv" for the base load and the PV).
    """

    plan: HomePlan | None
    inputs: HomeInputs | None
    made_at: datetime
    reason: str = "optimal"
    detail: str = ""
    phase_over: PhaseOver | None = None


class HomePlanManager(ChangeListeners):
    """One entry's whole-home plan (see the module docstring)."""

    def __init__(
        self,
        hass: HomeAssistant,
        config: HomeConfig,
        *,
        coordinator: PriceCoordinator,
        planner: PlanManager,
        control: ControlManager,
        records: GridRecords,
        grid: GridManager,
    ) -> None:
        """Plan ``config``'s home with the entry's managers."""
        self.hass = hass
        self.config = config
        self.coordinator = coordinator
        self.planner = planner
        self.grid = grid
        chargers = {aid: (a.name, a.charger) for aid, a in planner.appliances.items() if a.charger is not None}
        self.sg_blocks = SgBlocks(hass, planner.entry_id, config.heat_pumps)  # loaded by the runtime
        self.approvals = HomeApprovals(hass, config, records, chargers, sg_times=self.sg_blocks.times)
        self.executor = HomeExecutor(hass, config, control, self.approvals)
        self.heat = HeatExecutor(hass, config, control, self.approvals, self.sg_blocks.times)
        self.result: HomeResult | None = None
        self._lock = asyncio.Lock()

    @callback
    def async_start(self) -> CALLBACK_TYPE:
        """Start the triggers (slot boundaries, prices, SoC and PV sensor changes, approvals); returns their stop."""
        unsubs = [
            async_track_utc_time_change(self.hass, self._boundary, minute=range(0, 60, 15), second=0),
            self.coordinator.async_add_listener(self._prices_updated),
            self.hass.bus.async_listen(ir.EVENT_REPAIRS_ISSUE_REGISTRY_UPDATED, self._issue_changed),
            self.sg_blocks.async_start(),
        ]
        watched = [b.soc_entity for b in self.config.batteries if b.soc_entity]
        watched += [self.config.pv_forecast_sensor] if self.config.pv_forecast_sensor else []
        watched += [h.temperature_entity for h in self.config.heat_pumps]
        if watched:
            unsubs.append(async_track_state_change_event(self.hass, watched, self._measured))

        @callback
        def _stop() -> None:
            for unsub in unsubs:
                unsub()

        return _stop

    @callback
    def _boundary(self, now: datetime) -> None:
        self.hass.async_create_background_task(self.async_replan(execute=True), f"{DOMAIN} home slot")

    @callback
    def _prices_updated(self) -> None:
        self.hass.async_create_background_task(self.async_replan(), f"{DOMAIN} home prices")

    @callback
    def _issue_changed(self, event: Event[Any]) -> None:
        """Carry out the current slot at once when an approval closes the request's repair issue."""
        request_id, issue_id = self.approvals.request_id, event.data.get("issue_id", "")
        if event.data.get("action") == "remove" and request_id and issue_id.endswith(request_id):
            self.hass.async_create_background_task(self.async_execute(), f"{DOMAIN} home approved")

    @callback
    def _measured(self, event: Event[EventStateChangedData]) -> None:
        if self.departed(event.data["entity_id"], dt_util.utcnow()):
            self.hass.async_create_background_task(self.async_replan(execute=True), f"{DOMAIN} home replan")

    def departed(self, entity_id: str, now: datetime) -> bool:
        """Tell whether ``entity_id`` departs from the plan beyond its threshold.

        That is a battery's SoC, the PV sensor or a heat pump's temperature (``mpc_temp_threshold_c``).
        """
        plan = self.result.plan if self.result else None
        if plan is None:
            return False
        for hp in self.config.heat_pumps:
            if hp.temperature_entity == entity_id:
                planned = planned_temp_c(plan, hp.subentry_id, now)
                measured = measured_temperature(self.hass, entity_id)
                if planned is not None and measured is not None:
                    return abs(measured - planned) > self.config.mpc_temp_threshold_c
        if entity_id == self.config.pv_forecast_sensor:
            found = sensor_forecast(self.hass, entity_id, plan.start, plan.pv_kw.size)
            if found is None:
                return False
            new = np.nan_to_num(found.p50, nan=0.0)
            return bool(np.max(np.abs(new - plan.pv_kw), initial=0.0) > self.config.mpc_pv_threshold_kw)
        for bat in self.config.batteries:
            if bat.soc_entity == entity_id and bat.subentry_id in plan.soc_kwh:
                planned = planned_soc_pct(plan, bat.subentry_id, bat.capacity_kwh, now)
                state = self.hass.states.get(entity_id)
                try:
                    measured = float(state.state) if state else math.nan
                except ValueError:
                    return False
                return planned is not None and abs(measured - planned) > self.config.mpc_soc_threshold_pct
        return False

    async def async_replan(self, *, execute: bool = False) -> HomeResult | None:
        """Plan the home now; with ``execute``, then issue the current slot's battery commands.

        Returns the new result (None without prices). One plan at a time.
        """
        async with self._lock:
            now = dt_util.utcnow()
            if self.coordinator.data is None:
                return None
            result = await self._async_plan(now)
            since = result.plan.start if result.plan is not None else now
            changed = self.result is None or _fingerprint(self.result, since) != _fingerprint(result, since)
            self.result = result
            if result.plan is not None and changed and await self._async_write_back(result.plan, now):
                # One kept its plan (armed or started during the solve), so none was taken: plan again around it.
                self.hass.async_create_background_task(self.async_replan(), f"{DOMAIN} home replan")
            if result.plan is not None and (changed or self.approvals.lapsed()):  # an unanswered request: ask again
                await self.approvals.async_plan_changed(result, now)
        self.async_notify_listeners()
        if execute:
            await self.async_execute()
        return result

    async def async_execute(self) -> list[dict[str, Any]]:
        """Issue the current slot's battery and heat pump commands of the latest plan.

        See :class:`.home_exec.HomeExecutor` and :class:`.heat_exec.HeatExecutor`.
        """
        now = dt_util.utcnow()
        records = await self.executor.async_execute(self.result.plan if self.result else None, now)
        return records + await self.heat.async_execute(self.result, now)

    async def _async_plan(self, now: datetime) -> HomeResult:
        """Gather the inputs and run the MILP in the executor."""
        assert self.coordinator.data is not None
        inputs = await async_inputs(self.hass, self.config, self.coordinator.data, self.grid, now)
        try:
            heat = await async_heat_pumps(self.hass, self.config, inputs.curve, now, inputs.notes, pv_kw=inputs.pv_kw)
        except ValueError as err:  # settings the form let through but the model refuses (a COP curve, ...)
            LOGGER.error("Heat pumps left out of the whole-home plan: %s", err)
            inputs.notes.append(f"heat pumps left out: {err}")
            heat = []
        inputs.curve, forecast_end = cut_at_forecast(inputs.curve, heat)
        inputs.heat_pumps = tuple(heat)
        if forecast_end is not None:
            inputs.notes.append(f"outdoor forecast ends at {forecast_end.isoformat()}: the plan ends there")
        movable = self.movable(now)
        loads = [replace(self.planner.load_for(aid, now), name=aid) for aid in movable]
        fixed = self.planner.planned_loads(inputs.curve, now, exclude=set(movable))
        fuse, phases = self._limits(inputs, fixed, [*movable, *(hp.name for hp in heat)])
        shown = self.device_names()
        job = partial(
            plan_leaving_out,
            inputs.curve,
            loads,
            shown,
            batteries=inputs.batteries,
            pv_kw=inputs.pv_kw,
            base_load_kw=inputs.base_load_kw,
            fixed_kw=fixed,
            export_price=inputs.export_price,
            fuse_kw=fuse,
            export_limit_kw=self.config.export_limit_kw,
            curtailment=bool(self.config.curtailment_entity),
            fees=inputs.fees,
            phases=phases,
            heat_pumps=heat,
            previous=self.result.plan if self.result else None,  # the replan's warm start
        )
        started = time.monotonic()
        try:
            plan, left_out = await self.hass.async_add_executor_job(job)
        except HomePlanError as err:
            LOGGER.warning("No whole-home plan: %s", err.text(shown))
            over = _named(err.phase_over, shown)
            return HomeResult(None, inputs, now, ",".join(err.constraints), err.text(shown), over)
        except ValueError as err:
            LOGGER.error("Whole-home plan refused its inputs: %s", err)
            return HomeResult(None, inputs, now, reason="invalid_inputs", detail=str(err))
        LOGGER.debug("Whole-home plan: %d slots in %.2f s", len(plan.pv_kw), time.monotonic() - started)
        inputs.heat_pumps = tuple(hp for hp in heat if hp.name in plan.heat_kw)  # those the plan kept
        notes = [plan.detail] if plan.detail else []
        if left_out:  # their own plans (the appliance planner's) stay
            notes.append(f"left out: {', '.join(left_out)}")
        if inputs.pv_unknown_from is not None and inputs.pv_unknown_from < plan.horizon_end:
            notes.append(f"PV forecast unknown from {inputs.pv_unknown_from.isoformat()}: planned as 0 kW")
        return HomeResult(plan, inputs, now, detail="; ".join([*notes, *inputs.notes]))

    def _limits(
        self, inputs: HomeInputs, fixed: dict[str, FloatArray], planned: list[str]
    ) -> tuple[Limit, PhaseLimits | None]:
        """Return the fuse and the phase limits the plan keeps, raised in the slots where the ``fixed`` loads pass them.

        ``fixed``: the loads the plan cannot move, (len(curve),) kW by appliance; ``planned``: the names of the movable
        loads and heat pumps (the batteries' come from ``inputs``). See :func:`~..scheduling.home_grid.fuse_over_fixed` and
        :func:`~..scheduling.home_grid.phases_over_fixed`; their notes go to ``inputs.notes``.
        """
        curve, notes = inputs.curve, inputs.notes
        total = inputs.base_load_kw + sum(fixed.values(), np.zeros(len(curve)))
        fuse = fuse_over_fixed(self.planner.power_limit_kw, total, notes, curve)
        phases = phases_of(inputs.phases, [*(b.name for b in inputs.batteries), *planned, *fixed])
        drawn = {"base": inputs.base_load_kw, **fixed}
        return fuse, phases_over_fixed(phases, drawn, notes, self.device_names(), curve)

    def device_names(self) -> dict[str, str]:
        """Return each appliance's, battery's and heat pump's name by its subentry id (the plan's device names)."""
        names = {aid: appliance.name for aid, appliance in self.planner.appliances.items()}
        names |= {b.subentry_id: b.name for b in self.config.batteries}
        return names | {hp.subentry_id: hp.name for hp in self.config.heat_pumps}

    def movable(self, now: datetime) -> list[str]:
        """Return the automatic appliances the home plan places: not pinned, not armed and not started."""
        return [appliance_id for appliance_id in self.planner.states if self.planner.adoptable(appliance_id, now)]

    async def _async_write_back(self, plan: HomePlan, now: datetime) -> set[str]:
        """Hand the appliances' placements to the PlanManager (its scheduler issues their starts); return those kept."""
        placed: dict[str, tuple[Plan, LoadSpec]] = {}
        curve = self.result.inputs.curve if self.result and self.result.inputs else None
        if curve is None:
            return set()
        for appliance_id, power in plan.load_kw.items():
            if appliance_id not in self.planner.states or plan.starts.get(appliance_id, True) is None:
                continue
            padded = np.zeros(len(curve))
            padded[: power.size] = power
            name = self.planner.appliances[appliance_id].name
            built = build_plan(curve, name, padded, baseline_cost=None, method="home_milp", reason=Reason.OPTIMAL)
            placed[appliance_id] = (built, self.planner.load_for(appliance_id, now))
        return await self.planner.async_adopt(placed, now) if placed else set()


def plan_leaving_out(
    curve: PriceCurve, loads: list[LoadSpec], names: Mapping[str, str] | None = None, **kwargs: Any
) -> tuple[HomePlan, list[str]]:
    """Run :func:`plan_home`, leaving out what keeps it from a plan, and plan the rest again.

    Loads a :class:`HomePlanError` names are left out ("<name>, its window cannot hold it"), and their phases with
    them; when no plan exists with the heat pumps (their comfort band cannot be kept within the fuse, the phases or
    the reserve, or their inputs are refused), the heat pumps are left out ("heat pumps: <reason>"). The notes show
    devices under ``names`` (device -> name shown to users; a device not in it under its own name). Returns the plan
    and those notes. Raises HomePlanError when no plan exists without them (the fuse, the reserve, the prices),
    ValueError on other malformed inputs.
    """
    shown = names or {}
    left_out: list[str] = []
    while True:
        try:
            return plan_home(curve, loads, **kwargs), left_out
        except (HomePlanError, ValueError) as err:
            named = set(getattr(err, "loads", ())) & {load.name for load in loads}
            if named:
                left_out += [f"{shown.get(name, name)}, its window cannot hold it" for name in sorted(named)]
                loads = [load for load in loads if load.name not in named]
                kwargs["phases"] = _without(kwargs.get("phases"), named)
            elif kwargs.get("heat_pumps"):
                left_out.append(f"heat pumps: {err.text(shown) if isinstance(err, HomePlanError) else err}")
                kwargs["phases"] = _without(kwargs.get("phases"), {hp.name for hp in kwargs["heat_pumps"]})
                kwargs["heat_pumps"] = ()
            else:
                raise


def _named(over: PhaseOver | None, shown: Mapping[str, str]) -> PhaseOver | None:
    """Return ``over`` with its devices under ``shown`` (device -> name shown to users); None for None."""
    if over is None:
        return None
    return replace(over, devices=tuple((shown.get(d, d), kw) for d, kw in over.devices))


def _without(phases: PhaseLimits | None, names: set[str]) -> PhaseLimits | None:
    """Return ``phases`` without the devices ``names``."""
    if phases is None:
        return None
    return replace(phases, assignment={k: v for k, v in phases.assignment.items() if k not in names})


def planned_soc_pct(plan: HomePlan, battery: str, capacity_kwh: float, now: datetime) -> float | None:
    """Return the plan's state of charge at ``now`` in percent (linear within the slot), None outside the plan."""
    position = (now - plan.start) / plan.resolution
    soc = plan.soc_kwh[battery]
    if not 0 <= position <= soc.size - 1:
        return None
    i = min(int(position), soc.size - 2)
    value = soc[i] + (soc[i + 1] - soc[i]) * (position - i) if soc.size > 1 else soc[0]
    return float(value) / capacity_kwh * 100


def _fingerprint(result: HomeResult, since: datetime) -> tuple[object, ...]:
    """Return what a replan must change to count as a new plan.

    That is the appliance starts, the horizon's end and the battery powers and PV curtailment per slot from ``since``
    on.
    """
    plan = result.plan
    if plan is None:
        return (result.reason,)
    skip = max(round((since - plan.start) / plan.resolution), 0)
    batteries = {name: tuple(np.round(kw[skip:], 3).tolist()) for name, kw in plan.battery_kw.items()}
    heat = {name: tuple(np.round(kw[skip:], 3).tolist()) for name, kw in plan.heat_kw.items()}
    curtail = tuple(np.round(plan.curtail_kw[skip:], 3).tolist())
    return (
        plan.horizon_end,
        tuple(sorted(plan.starts.items())),
        tuple(sorted(batteries.items())),
        curtail,
        tuple(sorted(heat.items())),
    )


def planned_temp_c(plan: HomePlan, heat_pump: str, now: datetime) -> float | None:
    """Return the plan's store temperature at ``now`` (linear within the slot), None outside the plan."""
    temps = temp_c(plan, heat_pump)
    position = (now - plan.start) / plan.resolution
    if temps is None or not 0 <= position <= temps.size - 1:
        return None
    i = min(int(position), temps.size - 2)
    return float(temps[i] + (temps[i + 1] - temps[i]) * (position - i)) if temps.size > 1 else float(temps[0])
