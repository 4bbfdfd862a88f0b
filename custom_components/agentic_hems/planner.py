"""Per-appliance plans: automatic replanning, service-scheduled plans, persistence."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, time
from functools import partial
import hashlib
from typing import Any

import numpy as np

from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers.storage import Store
from homeassistant.util import dt as dt_util

from .const import DOMAIN, LOGGER, STORAGE_VERSION
from .coordinator import PriceCoordinator
from .prices import PriceCurve
from .prices.curve import FloatArray
from .scheduling import LoadSpec, Plan, plan_joint
from .scheduling.appliance import Appliance, appliance_load


@dataclass
class ApplianceState:
    """What is remembered per appliance across restarts.

    ``pinned`` marks a plan stored by the ``schedule`` service: automatic planning leaves it alone until it ends.
    ``basis`` identifies the prices and deadline a plan was made on, so a change triggers a replan.
    """

    auto: bool = True
    ready_by: time | None = None
    plan: Plan | None = None
    pinned: bool = False
    basis: str = ""

    def as_dict(self) -> dict[str, Any]:
        """JSON-safe form for the Store."""
        return {
            "auto": self.auto,
            "ready_by": self.ready_by.isoformat() if self.ready_by else None,
            "plan": self.plan.as_dict() if self.plan else None,
            "pinned": self.pinned,
            "basis": self.basis,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ApplianceState:
        """Inverse of :meth:`as_dict`; raises KeyError/ValueError/TypeError on malformed data."""
        return cls(
            auto=bool(data.get("auto", True)),
            ready_by=time.fromisoformat(data["ready_by"]) if data.get("ready_by") else None,
            plan=Plan.from_dict(data["plan"]) if data.get("plan") else None,
            pinned=bool(data.get("pinned", False)),
            basis=str(data.get("basis", "")),
        )


def curve_key(curve: PriceCurve) -> str:
    """A short fingerprint of the prices (not of when they were fetched)."""
    digest = hashlib.sha256(curve.prices.tobytes())
    digest.update(curve.start.isoformat().encode())
    return digest.hexdigest()[:16]


@dataclass
class PlanManager:
    """Holds each appliance's state and replans when prices or the deadline change.

    Plans respect the household power limit (main fuse): appliances due for a plan are placed together by
    :func:`plan_joint`, on top of the plans that stay (running, scheduled by the service, or not automatic).
    A plan that is running (its first slot has started and its last has not ended) is never moved.
    """

    hass: HomeAssistant
    entry_id: str
    coordinator: PriceCoordinator
    appliances: dict[str, Appliance]
    power_limit_kw: float
    states: dict[str, ApplianceState] = field(default_factory=dict)
    _listeners: list[Callable[[], None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        """Create the Store."""
        self.store: Store[dict[str, Any]] = Store(self.hass, STORAGE_VERSION, f"{DOMAIN}.{self.entry_id}.plans")
        self._replan_lock = asyncio.Lock()

    async def async_load(self) -> None:
        """Load persisted states for the configured appliances; unreadable ones start fresh."""
        stored = await self.store.async_load() or {}
        for appliance_id in self.appliances:
            try:
                self.states[appliance_id] = ApplianceState.from_dict(stored.get(appliance_id) or {})
            except (KeyError, TypeError, ValueError) as err:
                LOGGER.warning("Dropping unreadable stored plan of %s: %s", appliance_id, err)
                self.states[appliance_id] = ApplianceState()

    async def _async_save(self) -> None:
        await self.store.async_save({k: v.as_dict() for k, v in self.states.items()})

    @callback
    def async_add_listener(self, update: Callable[[], None]) -> Callable[[], None]:
        """Call ``update`` whenever a plan or setting changes; returns the remover."""
        self._listeners.append(update)
        return lambda: self._listeners.remove(update)

    @callback
    def _notify(self) -> None:
        for update in list(self._listeners):
            update()

    def deadline_for(self, appliance_id: str) -> time:
        """The "ready by" time in force: the user's override or the appliance default."""
        return self.states[appliance_id].ready_by or self.appliances[appliance_id].deadline

    def load_for(self, appliance_id: str, now: datetime) -> LoadSpec:
        """The appliance's next window with its "ready by" time in force."""
        return appliance_load(
            self.appliances[appliance_id],
            now=now,
            tz=dt_util.get_default_time_zone(),
            deadline=self.deadline_for(appliance_id),
        )

    def base_load(self, curve: PriceCurve, now: datetime, exclude: set[str]) -> FloatArray:
        """kW already planned per slot of ``curve`` by the appliances not in ``exclude`` (plans not yet ended)."""
        base = np.zeros(len(curve))
        for appliance_id, state in self.states.items():
            plan = state.plan
            if appliance_id in exclude or plan is None or plan.end is None or plan.end <= now:
                continue
            base += plan.power_on(curve.start, len(curve))
        return base

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
        """Replan every automatic appliance whose prices or deadline changed, or whose plan has ended.

        Replans run one at a time, so overlapping triggers (a price update during a deadline change) plan once.
        """
        async with self._replan_lock:
            await self._async_replan_due()

    async def _async_replan_due(self) -> None:
        if self.coordinator.data is None:
            return
        curve = self.coordinator.data.total
        now = dt_util.utcnow()
        key = curve_key(curve)
        due: list[str] = []
        for appliance_id, state in self.states.items():
            plan = state.plan
            ended = plan is not None and plan.end is not None and plan.end <= now
            running = plan is not None and plan.start is not None and plan.start <= now and not ended
            if not state.auto or running or (state.pinned and not ended):
                continue
            if plan is None or ended or state.basis != self._basis(key, appliance_id):
                due.append(appliance_id)
        if due:
            plans = await self.async_plan_loads(
                curve, [self.load_for(a, now) for a in due], exclude=set(due), now=now
            )
            for appliance_id, plan in zip(due, plans, strict=True):
                state = self.states[appliance_id]
                state.plan, state.basis, state.pinned = plan, self._basis(key, appliance_id), False
            await self._async_save()
        self._notify()

    def _basis(self, key: str, appliance_id: str) -> str:
        return f"{key}|{self.deadline_for(appliance_id).isoformat()}|{self.power_limit_kw}"

    async def async_store_plan(self, appliance_id: str, plan: Plan) -> None:
        """Store a plan from the ``schedule`` service; automatic planning keeps it until it ends."""
        state = self.states[appliance_id]
        state.plan, state.pinned, state.basis = plan, True, ""
        await self._async_save()
        self._notify()

    async def async_clear_plan(self, appliance_id: str) -> None:
        """Forget the appliance's plan; automatic planning (if on) makes a new one."""
        state = self.states[appliance_id]
        state.plan, state.pinned, state.basis = None, False, ""
        await self._async_save()
        await self.async_replan_due()

    async def async_set_auto(self, appliance_id: str, auto: bool) -> None:
        """Turn automatic planning on or off."""
        self.states[appliance_id].auto = auto
        self.states[appliance_id].basis = ""
        await self._async_save()
        await self.async_replan_due()

    async def async_set_ready_by(self, appliance_id: str, ready_by: time) -> None:
        """Change the deadline; an automatic plan follows."""
        self.states[appliance_id].ready_by = ready_by
        await self._async_save()
        await self.async_replan_due()
