"""Plan and load types shared by the planners: :class:`LoadSpec`, :class:`Plan` and its :class:`Reason`."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from datetime import datetime, timedelta
from enum import StrEnum
import math
from typing import Any

import numpy as np

from ..prices.curve import FloatArray, PriceCurve


class Reason(StrEnum):
    """Why a plan looks as it does (``reason`` in a plan's dict and the next-start sensor's attributes)."""

    OPTIMAL = "optimal"
    PARTIAL_PRICES = "partial_prices"  # the window runs past the known prices; planned on the known slots
    DOUBTFUL_PRICES = "doubtful_prices"  # the plan uses doubtful prices (a day of zeros, ...); ``detail`` says which
    WINDOW_TOO_SHORT = "window_too_short"  # the window cannot hold the load at its power
    NO_PRICES = "no_prices"  # no known price inside the window
    POWER_LIMIT = "power_limit"  # the household power limit leaves no room for the loads


@dataclass(frozen=True)
class LoadSpec:
    """One flexible load for :func:`plan_joint`: ``LoadSpec(name, *, power_kw, ..., earliest_start, deadline)``.

    Attributes:
        name: label carried into the plan.
        power_kw: kW drawn while running (contiguous) or the maximum charge power (energy loads).
        duration_min: run time in minutes for contiguous loads; rounded up to whole slots.
        energy_kwh: energy to deliver for non-contiguous loads (EV); the last slot may be partial.
        earliest_start: aware datetime; rounded up to a slot boundary.
        deadline: aware datetime by which the load must be done; rounded down to a slot boundary.
        contiguous: True for a run that cannot be interrupted (dishwasher, washing machine, heat-pump block).
        min_power_kw: energy loads in the whole-home plan only: the least kW while drawing (an EV charger's minimum
            current), 0 <= min_power_kw <= power_kw; each slot then draws 0 or between it and ``power_kw``, and the
            energy delivered may exceed ``energy_kwh`` by less than one slot at this power. 0: any power.

    """

    name: str
    _: KW_ONLY
    power_kw: float
    duration_min: float | None = None
    energy_kwh: float | None = None
    earliest_start: datetime
    deadline: datetime
    contiguous: bool = True
    min_power_kw: float = 0.0


@dataclass(frozen=True, eq=False, kw_only=True)
class Plan:
    """A placed load.

    Attributes:
        name: the load's label.
        feasible: False when nothing could be placed; ``reason`` says why and ``power_kw`` is all zero.
        start, end: aware UTC datetimes of the first planned slot start and last planned slot end, or None.
        power_kw: float64 array (n,) of kW per slot, aligned with the curve it was planned on
            (index i covers ``curve_start + i * resolution``).
        curve_start, resolution: the grid ``power_kw`` is aligned with.
        energy_kwh: energy placed (sum of power_kw times slot hours).
        cost: price-weighted energy in ``currency``; None when infeasible.
        baseline_cost: cost of starting at the earliest slot and running as fast as allowed; None if unknown.
        currency: ISO 4217 code of the curve.
        method: the algorithm (``window_sums``, ``greedy_sorted``, ``milp``).
        reason: a :class:`Reason` value.
        detail: a short English explanation for logs and service responses.

    """

    name: str
    feasible: bool
    start: datetime | None
    end: datetime | None
    power_kw: FloatArray
    curve_start: datetime
    resolution: timedelta
    energy_kwh: float
    cost: float | None
    baseline_cost: float | None
    currency: str
    method: str
    reason: Reason
    detail: str = ""

    @property
    def savings(self) -> float | None:
        """baseline_cost - cost, in ``currency``; None when either is unknown."""
        if self.cost is None or self.baseline_cost is None:
            return None
        return self.baseline_cost - self.cost

    def slot_starts(self) -> list[datetime]:
        """UTC start of every slot of ``power_kw``."""
        return [self.curve_start + self.resolution * i for i in range(len(self.power_kw))]

    def power_on(self, start: datetime, n: int) -> FloatArray:
        """Planned kW on another grid of ``n`` slots from ``start`` (same resolution); 0.0 outside the plan."""
        out = np.zeros(n)
        offset = round((start - self.curve_start) / self.resolution)
        lo, hi = max(offset, 0), min(offset + n, len(self.power_kw))
        if hi > lo:
            out[lo - offset : hi - offset] = self.power_kw[lo:hi]
        return out

    def cost_on(self, curve: PriceCurve) -> float | None:
        """Return this plan's cost at ``curve``'s prices (e.g. after the price formula changed).

        None when a planned slot has no price there.
        """
        power = self.power_on(curve.start, len(curve))
        active = power > 0
        if (
            not self.feasible
            or curve.currency != self.currency
            or np.isnan(curve.prices[active]).any()
            or power.sum() < self.power_kw.sum() - 1e-9
        ):
            return None
        return float(np.dot(curve.prices[active], power[active])) * (curve.resolution.total_seconds() / 3600)

    def is_running(self, moment: datetime) -> bool:
        """Return True when ``moment`` falls in a slot with planned power > 0."""
        i = math.floor((moment - self.curve_start) / self.resolution)
        return 0 <= i < len(self.power_kw) and bool(self.power_kw[i] > 0)

    def transition_at(self, moment: datetime) -> str | None:
        """Return the scheduler's command at ``moment``: ``"start"``, ``"stop"`` or None.

        ``"start"`` when the planned power goes from 0 to > 0 at ``moment``, ``"stop"`` when it goes back to 0, else
        None (also when ``moment`` is not a slot boundary of this plan).
        """
        offset = moment - self.curve_start
        if offset % self.resolution or not self.feasible:
            return None
        i = offset // self.resolution
        now = bool(0 <= i < len(self.power_kw) and self.power_kw[i] > 0)
        before = bool(1 <= i <= len(self.power_kw) and self.power_kw[i - 1] > 0)
        if now and not before:
            return "start"
        if before and not now:
            return "stop"
        return None

    def as_dict(self) -> dict[str, Any]:
        """JSON-safe form (ISO 8601 UTC strings, floats, None) for service responses and storage."""
        return {
            "name": self.name,
            "feasible": self.feasible,
            "start": self.start.isoformat() if self.start else None,
            "end": self.end.isoformat() if self.end else None,
            "curve_start": self.curve_start.isoformat(),
            "resolution_minutes": int(self.resolution.total_seconds() // 60),
            "power_kw": [round(float(p), 6) for p in self.power_kw],
            "energy_kwh": round(self.energy_kwh, 6),
            "cost": None if self.cost is None else round(self.cost, 6),
            "baseline_cost": None if self.baseline_cost is None else round(self.baseline_cost, 6),
            "savings": None if self.savings is None else round(self.savings, 6),
            "currency": self.currency,
            "method": self.method,
            "reason": str(self.reason),
            "detail": self.detail,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Plan:
        """Inverse of :meth:`as_dict`.

        Raises:
            KeyError, ValueError, TypeError: malformed data.

        """
        return cls(
            name=str(data["name"]),
            feasible=bool(data["feasible"]),
            start=datetime.fromisoformat(data["start"]) if data.get("start") else None,
            end=datetime.fromisoformat(data["end"]) if data.get("end") else None,
            power_kw=np.array(data["power_kw"], dtype=np.float64),
            curve_start=datetime.fromisoformat(data["curve_start"]),
            resolution=timedelta(minutes=float(data["resolution_minutes"])),
            energy_kwh=float(data["energy_kwh"]),
            cost=None if data.get("cost") is None else float(data["cost"]),
            baseline_cost=None if data.get("baseline_cost") is None else float(data["baseline_cost"]),
            currency=str(data["currency"]),
            method=str(data["method"]),
            reason=Reason(data["reason"]),
            detail=str(data.get("detail", "")),
        )
