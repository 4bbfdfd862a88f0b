"""Grid fees, the capacity charge and per-phase limits in the whole-home MILP.

Per billing month m with slots S_m, capacity price c and the month's peak so far F_m (the floor, free):

    e_m >= avg15_t(imp) - F_m  for t in S_m,  e_m >= 0,  cost c e_m

where avg15_t is the slot's own import for slots of 15 minutes or longer (constant over the slot, so also its
15-minute average) and the mean over its quarter-hour for shorter slots. The network fee per kWh is part of the
import price (``Tariff.import_price``); it never fills in an unknown price.

Per phase p and slot t, with each device's share s_dp (1 on its phase, 1/3 each when three-phase, the default):

    -limit_p <= sum_d s_dp power_dt <= limit_p

where power is drawn kW (loads, battery charge minus discharge, heat pumps, the fixed loads each on its own phase,
the house's base load) and PV counts negative (forecast minus curtailment). limit_p is the connection's limit, or a
phase's raised limit (:attr:`~.home_model.PhaseLimits.raised_kw`, per slot: :func:`phases_over_fixed` raises it
only in the slots where the fixed loads alone pass it). The kW fuse on the import still applies on top
(:func:`fuse_over_fixed` raises it the same way).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime, timedelta
import math
from typing import Any

import numpy as np
import numpy.typing as npt

from ..prices.curve import FloatArray, PriceCurve
from .home_evaluate import Tariff
from .home_model import PHASES, GridFees, Limit, PhaseLimits, phase_power
from .milp import MilpModel
from .windows import IntArray

QUARTER = timedelta(minutes=15)
Entries = list[tuple[Any, Any, Any]]


def cut_fees(fees: GridFees, *, length: int, horizon: int) -> GridFees:
    """Return ``fees`` cut to the horizon; ValueError when its arrays do not have ``length`` values or are not finite."""
    if len(fees.energy_fee) != length:
        raise ValueError(f"energy_fee needs {length} values, got {len(fees.energy_fee)}")
    fee = np.asarray(fees.energy_fee[:horizon], dtype=np.float64)
    if not np.isfinite(fee).all():
        raise ValueError("energy_fee must be finite on every slot of the horizon")
    month = None if fees.month is None else np.asarray(fees.month[:horizon], dtype=np.intp)
    return GridFees(energy_fee=fee, capacity_price=fees.capacity_price, month=month, peak_floor_kw=fees.peak_floor_kw)


def cut_phases(phases: PhaseLimits | None, *, length: int, horizon: int) -> PhaseLimits | None:
    """Return ``phases`` with its per-slot raised limits cut to the horizon.

    Raises ValueError when such an array does not have ``length`` values.
    """
    if phases is None:
        return None
    raised: dict[str, Limit] = {}
    for phase, kw in phases.raised_kw.items():
        if np.ndim(kw) and np.size(kw) != length:
            raise ValueError(f"raised_kw[{phase!r}] needs {length} values, got {np.size(kw)}")
        raised[phase] = np.asarray(kw, dtype=np.float64)[:horizon] if np.ndim(kw) else kw
    return replace(phases, raised_kw=raised)


def quarter_index(start: datetime, resolution: timedelta, n: int) -> npt.NDArray[np.intp] | None:
    """Return (n,) the quarter-hour (counted from the first slot's) of each slot shorter than 15 minutes, else None."""
    if resolution >= QUARTER:
        return None
    offset = (start - datetime(2000, 1, 1, tzinfo=start.tzinfo)) % QUARTER
    return np.asarray([(offset + i * resolution) // QUARTER for i in range(n)], dtype=np.intp)


def add_capacity(model: MilpModel, tariff: Tariff, imp: IntArray) -> None:
    """Add each billing month's peak excess column (cost: capacity price per kW) and its rows over the import."""
    fees = tariff.fees
    if fees is None or fees.capacity_price <= 0:
        return
    n = imp.size
    month = fees.months(n)
    group = np.arange(n) if tariff.quarter is None else tariff.quarter
    groups, first = np.unique(group, return_index=True)
    size = np.bincount(np.searchsorted(groups, group))
    months = np.unique(month)
    excess = model.add(months.size, math.inf, fees.capacity_price)
    row = np.searchsorted(groups, group)
    owner = np.searchsorted(months, month[first])
    floor = np.asarray(fees.peak_floor_kw, dtype=np.float64)[months[owner]]
    entries = [(row, imp, 1.0 / size[row]), (np.arange(groups.size), excess[owner], -1.0)]
    model.row(entries, -math.inf, floor, groups.size)


def add_phases(
    model: MilpModel, phases: PhaseLimits, devices: dict[str, Entries], fixed: dict[str, FloatArray], *, relax: bool
) -> list[IntArray]:
    """Add each phase's net-power rows; return the slack columns when ``relax`` (else an empty list).

    ``devices`` maps a device name to its grid-balance entries (coefficients of minus its drawn kW), ``fixed`` to
    its constant kW (the base load, the fixed loads, minus the PV forecast); both are (n,) per slot. The slacks come
    in phase order, the excess (up) before the shortfall (down) of each.
    """
    n = next(iter(fixed.values())).size
    t = np.arange(n)
    slacks: list[IntArray] = []
    for p in PHASES:
        entries: Entries = [
            (rows, cols, -phases.shares(name)[p] * np.asarray(vals, dtype=np.float64))
            for name, device in devices.items()
            for rows, cols, vals in device
            if phases.shares(name)[p]
        ]
        const = sum((phases.shares(name)[p] * kw for name, kw in fixed.items()), np.zeros(n))
        if relax:
            up, down = model.add(n, math.inf), model.add(n, math.inf)
            entries += [(t, up, -1.0), (t, down, 1.0)]
            slacks += [up, down]
        model.row(entries, -phases.limit(p) - const, phases.limit(p) - const, n)
    return slacks


def phases_over_fixed(
    phases: PhaseLimits | None,
    fixed_kw: Mapping[str, FloatArray],
    notes: list[str],
    names: Mapping[str, str],
    curve: PriceCurve,
) -> PhaseLimits | None:
    """Return the phase limits the plan can keep: ``phases``, each phase's limit raised in the slots fixed loads pass it.

    ``fixed_kw`` (kW per slot by device, (len(curve),)) holds the loads the plan cannot change: "base", the house's
    base load (it has no phase of its own, so it is spread over the three), and the running, pinned and manual
    appliance plans, each on its phase in ``phases`` (spread when it has none). Where they alone pass a phase's
    limit, that phase's limit becomes (len(curve),) per slot: their kW on it in those slots, its limit elsewhere;
    ``notes`` names the phase, its peak, the slots and the devices at the peak (``names``: device -> shown name).
    """
    if phases is None or not fixed_kw:
        return phases
    raised: dict[str, Limit] = {}
    for phase, power in phase_power(phases, fixed_kw).items():
        over = power > phases.limit(phase)
        if not over.any():
            continue
        raised[phase] = np.maximum(power, phases.limit(phase))
        t = int(np.argmax(power))
        notes.append(
            f"loads the plan cannot move draw up to {power[t]:.2f} kW on {phase}, above its {phases.limit_kw:g} kW "
            f"limit, at {slots_text(curve, over)}: {_devices_at(phases, fixed_kw, names, phase, t)}"
        )
    return replace(phases, raised_kw={**phases.raised_kw, **raised}) if raised else phases


def _devices_at(
    phases: PhaseLimits, fixed_kw: Mapping[str, FloatArray], names: Mapping[str, str], phase: str, t: int
) -> str:
    """Return "name kW, ..." of the fixed loads drawing on ``phase`` in slot ``t``, largest first."""
    on = [
        (names.get(d, "base load" if d == "base" else d), phases.shares(d)[phase] * kw[t]) for d, kw in fixed_kw.items()
    ]
    return ", ".join(f"{name} {kw:.2f} kW" for name, kw in sorted(on, key=lambda d: -d[1]) if kw > 0)


def slots_text(curve: PriceCurve, mask: npt.NDArray[np.bool_], most: int = 3) -> str:
    """Return the slots ``mask`` ((len(curve),) bool) selects as UTC spans, e.g. "2026-03-29T18:00-19:00Z".

    The first ``most`` spans are named, then "and k more".
    """
    edges = np.flatnonzero(np.diff(np.concatenate(([0], mask.astype(np.int8), [0]))))
    spans = [
        f"{curve.slot_start(int(a)):%Y-%m-%dT%H:%M}-{curve.slot_start(int(b)):%H:%MZ}"
        for a, b in zip(edges[::2], edges[1::2], strict=True)
    ]
    return ", ".join(spans[:most]) + (f" and {len(spans) - most} more" if len(spans) > most else "")


def fuse_over_fixed(fuse_kw: float, fixed_kw: FloatArray, notes: list[str], curve: PriceCurve) -> Limit:
    """Return the fuse the plan can keep, kW: ``fuse_kw``, or (len(curve),) per slot where loads it cannot move pass it.

    Running, pinned and manual appliance plans and the house's base load (``fixed_kw``, (len(curve),) kW) are not
    the plan's to change; in the slots where they alone pass the fuse, the limit there is their draw (the plan adds
    nothing to the import above it) rather than no plan at all, the fuse holds in every other slot, and ``notes``
    says so with the peak and the slots.
    """
    over = fixed_kw > fuse_kw
    if not over.any():
        return fuse_kw
    notes.append(
        f"loads the plan cannot move draw up to {float(np.max(fixed_kw)):.2f} kW, above the {fuse_kw:g} kW fuse, "
        f"at {slots_text(curve, over)}"
    )
    return np.maximum(fixed_kw, fuse_kw)
