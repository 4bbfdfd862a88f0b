"""Each appliance's plan and settings, and their persistence (Store ``agentic_hems.<entry_id>.plans``).

Plans are replanned automatically under the main fuse, or stored by the ``schedule`` service.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, time
from functools import partial
import hashlib
from typing import Any

import numpy as np

from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers.storage import Store
from homeassistant.util import dt as dt_util

from ..const import DOMAIN, LOGGER, STORAGE_VERSION
from ..coordinator import PriceCoordinator
from ..listeners import ChangeListeners
from ..prices import PriceCurve
from ..prices.curve import FloatArray
from ..scheduling import LoadSpec, Plan, plan_joint
from ..scheduling.appliance import Appliance, appliance_load
from ..storage import async_load_store


@dataclass
class ApplianceState:
    """What is remembered per appliance across restarts.

    ``pinned`` marks a plan stored by the ``schedule`` service: automatic planning leaves it alone until it ends.
    ``basis`` identifies the prices, deadline, limit and appliance settings a plan was made on, so a change triggers a
    replan. ``window_end`` is the end (UTC) of the window the plan serves; ``done_until`` is the end of the last window
    in which the appliance ran: later plans go into the windows after it, not into what is left of it. ``ready_by_for``
    is the appliance's configured deadline when the user set ``ready_by``; reconfiguring the appliance's deadline drops
    the override. ``armed_for`` is the start (UTC) the appliance's own delayed start was set for, ``holding`` (not
    saved) the one it is being set for: while the plan starts then (:meth:`armed`), planning keeps it, since the
    appliance starts then by itself.
    """

    auto: bool = True
    ready_by: time | None = None
    ready_by_for: time | None = None
    plan: Plan | None = None
    pinned: bool = False
    basis: str = ""
    window_end: datetime | None = None
    done_until: datetime | None = None
    armed_for: datetime | None = None
    holding: datetime | None = field(default=None, repr=False)

    def armed(self) -> bool:
        """Return True while the plan starts when its delayed start was set for (``armed_for``) or is being set for."""
        start = self.plan.start if self.plan is not None else None
        return start is not None and start in (self.armed_for, self.holding)

    def as_dict(self) -> dict[str, Any]:
        """JSON-safe form for the Store."""
        return {
            "auto": self.auto,
            "ready_by": self.ready_by.isoformat() if self.ready_by else None,
            "ready_by_for": self.ready_by_for.isoformat() if self.ready_by_for else None,
            "plan": self.plan.as_dict() if self.plan else None,
            "pinned": self.pinned,
            "basis": self.basis,
            "window_end": self.window_end.isoformat() if self.window_end else None,
            "done_until": self.done_until.isoformat() if self.done_until else None,
            "armed_for": self.armed_for.isoformat() if self.armed_for else None,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ApplianceState:
        """Inverse of :meth:`as_dict`; raises KeyError/ValueError/TypeError on malformed data."""
        return cls(
            auto=bool(data.get("auto", True)),
            ready_by=time.fromisoformat(data["ready_by"]) if data.get("ready_by") else None,
            ready_by_for=time.fromisoformat(data["ready_by_for"]) if data.get("ready_by_for") else None,
            plan=Plan.from_dict(data["plan"]) if data.get("plan") else None,
            pinned=bool(data.get("pinned", False)),
            basis=str(data.get("basis", "")),
            window_end=datetime.fromisoformat(data["window_end"]) if data.get("window_end") else None,
            done_until=datetime.fromisoformat(data["done_until"]) if data.get("done_until") else None,
            armed_for=datetime.fromisoformat(data["armed_for"]) if data.get("armed_for") else None,
        )


def curve_key(curve: PriceCurve) -> str:
    """Return a short fingerprint of the prices and their trust (not of when they were fetched).

    A day that becomes known, or doubtful, changes it even where the prices stay the same, so the plans on it are
    planned again (their ``reason`` follows the trust).
    """
    digest = hashlib.sha256(curve.prices.tobytes())
    digest.update(curve.trust().tobytes())
    digest.update(curve.start.isoformat().encode())
    return digest.hexdigest()[:16]


@dataclass
class PlanManager(ChangeListeners):
    """Holds each appliance's state and replans when prices or the deadline change.

    Plans respect the household power limit (main fuse): appliances due for a plan are placed together by
    :func:`plan_joint`, on top of the plans that stay (running, scheduled by the service, or not automatic).
    A plan that is running (its first slot has started and its last has not ended) is never moved.

    The scheduler issues the plans' starts and stops at each slot boundary (:meth:`transitions_at`), and a price
    update at the same boundary triggers a replan: the two fire in either order. So a plan that has ended is replaced
    only once its stop is issued: ``issued_until`` is the last boundary the scheduler has taken the transitions of
    (at first, when the entry loaded: a plan that ended before is not the scheduler's to stop).
    """

    hass: HomeAssistant
    entry_id: str
    coordinator: PriceCoordinator
    appliances: dict[str, Appliance]
    power_limit_kw: float
    states: dict[str, ApplianceState] = field(default_factory=dict)
    issued_until: datetime = field(default_factory=dt_util.utcnow)

    def __post_init__(self) -> None:
        """Create the Store."""
        self.store: Store[dict[str, Any]] = Store(self.hass, STORAGE_VERSION, f"{DOMAIN}.{self.entry_id}.plans")
        self._lock = asyncio.Lock()  # one change of the states at a time
        self.withdrawn: dict[str, tuple[datetime, Plan]] = {}  # the last plan withdrawn per appliance, and when

    async def async_load(self) -> None:
        """Load persisted states for the configured appliances; an unreadable Store or entry starts fresh."""
        stored = await async_load_store(self.store, "stored plans") or {}
        for appliance_id, appliance in self.appliances.items():
            try:
                state = ApplianceState.from_dict(stored.get(appliance_id) or {})
            except (AttributeError, KeyError, TypeError, ValueError) as err:
                LOGGER.warning("Dropping unreadable stored plan of %s: %s", appliance.name, err)
                state = ApplianceState()
            if state.ready_by is not None and state.ready_by_for != appliance.deadline:
                state.ready_by = state.ready_by_for = None  # the appliance's own deadline was changed since
            self.states[appliance_id] = state

    async def _async_save(self) -> None:
        await self.store.async_save({k: v.as_dict() for k, v in self.states.items()})

    @callback
    def transitions_at(self, moment: datetime) -> list[tuple[str, str]]:
        """Take the starts and stops the plans have at the slot boundary ``moment`` (aware UTC).

        They come as ``(appliance_id, intent)``; the scheduler takes them once per boundary, and from then on an
        ended plan may be replaced.
        """
        due = [
            (appliance_id, intent)
            for appliance_id, state in self.states.items()
            if state.plan is not None and (intent := state.plan.transition_at(moment)) is not None
        ]
        self.issued_until = max(self.issued_until, moment)
        return due

    def deadline_for(self, appliance_id: str) -> time:
        """Return the "ready by" time in force: the user's override or the appliance default."""
        return self.states[appliance_id].ready_by or self.appliances[appliance_id].deadline

    def load_for(self, appliance_id: str, now: datetime) -> LoadSpec:
        """Return the appliance's next window with its "ready by" time in force.

        Once a plan has run, its window is done: the next window starts after it, even if the run ended early.
        """
        done_until = self.states[appliance_id].done_until
        after = max(now, done_until) if done_until is not None else now
        return appliance_load(
            self.appliances[appliance_id],
            now=after,
            tz=dt_util.get_default_time_zone(),
            deadline=self.deadline_for(appliance_id),
        )

    def base_load(self, curve: PriceCurve, now: datetime, exclude: set[str]) -> FloatArray:
        """KW already planned per slot of ``curve`` by the appliances not in ``exclude`` (plans not yet ended)."""
        return sum(self.planned_loads(curve, now, exclude).values(), np.zeros(len(curve)))

    def planned_loads(self, curve: PriceCurve, now: datetime, exclude: set[str]) -> dict[str, FloatArray]:
        """Return per appliance not in ``exclude`` whose plan has not ended its kW per slot of ``curve``."""
        loads = {}
        for appliance_id, state in self.states.items():
            plan = state.plan
            if appliance_id in exclude or plan is None or plan.end is None or plan.end <= now:
                continue
            loads[appliance_id] = plan.power_on(curve.start, len(curve))
        return loads

    async def async_plan_loads(
        self, curve: PriceCurve, loads: list[LoadSpec], *, exclude: set[str], now: datetime
    ) -> list[Plan]:
        """Plan ``loads`` together under the power limit, around the plans of the appliances not in ``exclude``.

        Runs the MILP in the executor; stores nothing.
        """
        base = self.base_load(curve, now, exclude)
        return await self.hass.async_add_executor_job(
            partial(plan_joint, curve, loads, power_limit_kw=self.power_limit_kw, base_load_kw=base)
        )

    async def async_replan_due(self) -> None:
        """Replan every automatic appliance whose prices, deadline or settings changed, or whose plan has ended.

        Replans run one at a time, so overlapping triggers (a price update during a deadline change) plan once.
        """
        async with self._lock:
            changed = await self._async_replan_due()
        if changed:
            self.async_notify_listeners()

    async def _async_replan_due(self) -> bool:
        if self.coordinator.data is None:
            return False
        curve = self.coordinator.data.total
        now = dt_util.utcnow()
        key = curve_key(curve)
        over_limit = self.base_load(curve, now, exclude=set()) > self.power_limit_kw * (1 + 1e-9)
        bases: dict[str, str] = {}
        for appliance_id, state in self.states.items():
            plan = state.plan
            ended = plan is not None and plan.end is not None and plan.end <= now
            if ended and plan is not None and plan.end is not None and plan.end > self.issued_until:
                continue  # its stop is not issued yet; the scheduler replans once it is
            running = plan is not None and plan.start is not None and plan.start <= now and not ended
            if ended and plan is not None and plan.feasible:  # it ran: its window is done
                state.done_until = state.window_end
            pinned_waiting = state.pinned and state.auto and plan is not None and not running and not ended
            if pinned_waiting and plan is not None and over_limit[plan.power_on(curve.start, len(curve)) > 0].any():
                # A scheduled plan that no longer fits under the (lowered) fuse is planned again.
                LOGGER.warning("The scheduled plan of %s exceeds the power limit; replanning", plan.name)
                state.pinned, state.basis = False, ""
            if not state.auto or running or ((state.pinned or state.armed()) and not ended):
                continue
            basis = self._basis(key, appliance_id)
            if plan is None or ended or state.basis != basis:
                bases[appliance_id] = basis  # taken before the solve: a change meanwhile triggers the next replan
        if not bases:
            return False
        loads = {appliance_id: self.load_for(appliance_id, now) for appliance_id in bases}
        plans = await self.async_plan_loads(curve, list(loads.values()), exclude=set(bases), now=now)
        if any(self.states[appliance_id].armed() for appliance_id in loads):
            return await self._async_replan_due()  # one got its delayed start meanwhile: plan the rest around it
        for (appliance_id, load), plan in zip(loads.items(), plans, strict=True):
            state = self.states[appliance_id]
            state.plan, state.basis, state.pinned = plan, bases[appliance_id], False
            state.window_end = load.deadline
        await self._async_save()
        return True

    def _basis(self, key: str, appliance_id: str) -> str:
        appliance = repr(self.appliances[appliance_id].plan_settings())
        return f"{key}|{self.deadline_for(appliance_id).isoformat()}|{self.power_limit_kw}|{appliance}"

    async def async_schedule(self, appliance_id: str, load: LoadSpec) -> Plan:
        """Plan ``load`` for the appliance around the others' plans and, when feasible, store it.

        Automatic planning keeps a stored plan until it ends. An infeasible plan is returned and nothing is stored.
        """
        return (await self.async_schedule_many({appliance_id: load}))[appliance_id]

    async def async_schedule_many(self, loads: dict[str, LoadSpec]) -> dict[str, Plan]:
        """Plan several appliances' loads jointly (one MILP under the fuse) around the other plans.

        Store the feasible ones as :meth:`async_schedule` does. Raises ValueError without prices.
        """
        async with self._lock:
            curve = self.coordinator.data.total if self.coordinator.data else None
            if curve is None:
                raise ValueError("no prices")
            now = dt_util.utcnow()
            plans = await self.async_plan_loads(curve, list(loads.values()), exclude=set(loads), now=now)
            stored = False
            for (appliance_id, load), plan in zip(loads.items(), plans, strict=True):
                if plan.feasible:
                    state = self.states[appliance_id]
                    state.plan, state.pinned, state.basis, state.window_end = plan, True, "", load.deadline
                    stored = True
            if stored:
                await self._async_save()
        if stored:
            self.async_notify_listeners()
        return dict(zip(loads, plans, strict=True))

    async def async_adopt(self, plans: dict[str, tuple[Plan, LoadSpec]], now: datetime) -> set[str]:
        """Store plans made elsewhere (the whole-home plan) as automatic plans on the current prices.

        ``plans`` maps an appliance to its plan and the load it serves. When one of them is no longer automatic, is
        pinned, armed (:meth:`ApplianceState.armed`) or its plan has started meanwhile, every appliance keeps its plan
        (the placements were made together) and those are returned, for the caller to plan again; else an empty set.
        """
        async with self._lock:
            key = curve_key(self.coordinator.data.total) if self.coordinator.data else ""
            kept = {appliance_id for appliance_id in plans if not self.adoptable(appliance_id, now)}
            if kept:  # the placements were made together, assuming these would move: none is taken
                return kept
            for appliance_id, (plan, load) in plans.items():
                state = self.states[appliance_id]
                state.plan, state.basis, state.window_end = plan, self._basis(key, appliance_id), load.deadline
            await self._async_save()
        self.async_notify_listeners()
        return kept

    def adoptable(self, appliance_id: str, now: datetime) -> bool:
        """Return True when a plan made elsewhere may replace the appliance's.

        That is: automatic, not pinned, not armed (:meth:`ApplianceState.armed`) and its plan not started.
        """
        state = self.states[appliance_id]
        started = state.plan is not None and state.plan.start is not None and state.plan.start <= now
        return state.auto and not state.pinned and not state.armed() and not started

    @asynccontextmanager
    async def async_keeping(
        self, appliance_id: str, planned: datetime, is_set: Callable[[], bool]
    ) -> AsyncIterator[None]:
        """Keep the appliance's plan at ``planned`` (UTC) while its own delayed start is sent, and from then on if set.

        Meanwhile (``ApplianceState.holding``, never saved) a whole-home plan or a replan keeps that start, so the plan
        cannot move under the commands. Afterwards ``is_set()`` tells whether the delayed start was set: then
        ``armed_for`` becomes ``planned`` (saved).
        """
        state = self.states.get(appliance_id)
        if state is None:
            yield
            return
        before = state.holding
        if state.plan is not None and state.plan.start == planned:
            state.holding = planned
        try:
            yield
        finally:
            state.holding = before
            if is_set() and state.armed_for != planned:
                state.armed_for = planned
                await self._async_save()

    async def async_clear_plan(self, appliance_id: str) -> None:
        """Forget the appliance's plan; automatic planning (if on) makes a new one."""
        async with self._lock:
            state = self.states[appliance_id]
            state.plan, state.pinned, state.basis, state.window_end = None, False, "", None
            await self._async_save()
        await self.async_replan_due()
        self.async_notify_listeners()

    def set_plan(self, appliance_id: str, now: datetime) -> Plan | None:
        """Return the plan a person set (stored by ``schedule``, ``ask`` or a tool) if it is feasible and not ended."""
        state = self.states[appliance_id]
        plan = state.plan
        if not state.pinned or plan is None or not plan.feasible or plan.end is None or plan.end <= now:
            return None
        return plan

    async def async_started_now(self, appliance_id: str, now: datetime) -> Plan | None:
        """Count a run started at ``now`` (switched on from off, not by its plan) as the one its waiting plan was for.

        A feasible plan that has not started is withdrawn and its window counts as done, so automatic planning plans
        the next window, not a second run in this one. Returns the withdrawn plan; None when there was none (no plan,
        one already running or ended, which stays, or a window already done: a second switch-on in it withdraws
        nothing more).
        """
        async with self._lock:
            state = self.states[appliance_id]
            plan = state.plan
            if plan is None or not plan.feasible or plan.start is None or plan.start <= now:
                return None
            if state.done_until is not None and state.done_until > now:
                return None
            state.done_until = state.window_end or plan.end
            self.withdrawn[appliance_id] = (now, plan)
            state.plan, state.pinned, state.basis, state.window_end = None, False, "", None
            await self._async_save()
        await self.async_replan_due()
        self.async_notify_listeners()
        return plan

    async def async_set_auto(self, appliance_id: str, auto: bool) -> None:
        """Turn automatic planning on or off."""
        async with self._lock:
            self.states[appliance_id].auto = auto
            await self._async_save()
        await self.async_replan_due()
        self.async_notify_listeners()

    async def async_set_ready_by(self, appliance_id: str, ready_by: time) -> None:
        """Change the deadline; an automatic plan follows."""
        async with self._lock:
            state = self.states[appliance_id]
            state.ready_by, state.ready_by_for = ready_by, self.appliances[appliance_id].deadline
            await self._async_save()
        await self.async_replan_due()
        self.async_notify_listeners()
