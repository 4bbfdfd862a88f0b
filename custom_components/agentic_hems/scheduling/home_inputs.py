"""The whole-home plan's inputs: validated, cut to the horizon (the known prices), windows resolved."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
import math

import numpy as np
import numpy.typing as npt

from ..prices.curve import FloatArray, PriceCurve
from .contiguous import run_options
from .energy import charge_options
from .home_evaluate import Tariff
from .home_grid import cut_fees, cut_phases, quarter_index
from .home_heat import check_heat_pump
from .home_model import GridFees, HomeBattery, HomeHeatPump, HomePlanError, Infeasibility, Limit, PhaseLimits
from .plan import LoadSpec
from .windows import REL_EPS, IntArray, check_positive, resolve_window, slot_hours, slots_for_duration


@dataclass(frozen=True)
class Load:
    """A load restricted to the horizon: a run's admissible starts, or an energy load's usable slots."""

    spec: LoadSpec
    keys: IntArray  # starts (runs) or slots (energy loads), ascending
    slots: int  # run length in slots (runs), 0 for energy loads
    energy_kwh: float  # energy loads: kWh to deliver


@dataclass(kw_only=True)
class Inputs:
    """Everything the model needs over the horizon of n slots from ``start``.

    ``base`` is the house's base load plus the fixed loads (``fixed``, by name).
    """

    tariff: Tariff
    base: FloatArray
    pv: FloatArray
    batteries: tuple[HomeBattery, ...]
    loads: list[Load]
    curtailment: bool
    heat_pumps: tuple[HomeHeatPump, ...]
    fixed: dict[str, FloatArray]
    start: datetime
    resolution: timedelta

    @property
    def n(self) -> int:
        """Slots in the horizon."""
        return int(self.base.size)

    def constant(self) -> dict[str, FloatArray]:
        """Return the kW per slot the plan cannot change, by device: the base load ("base"), each fixed load, PV."""
        house = self.base - sum(self.fixed.values(), np.zeros(self.n))
        return {"base": house, **self.fixed, "pv": -self.pv}


def _array(value: float | npt.ArrayLike, n: int, label: str) -> FloatArray:
    """``value`` as a float array (n,), a number repeated; ValueError on a wrong shape."""
    out = np.asarray(value, dtype=np.float64)
    if out.ndim == 0:
        out = np.full(n, float(out))
    if out.shape != (n,):
        raise ValueError(f"{label} must be a number or an array of {n} values, got shape {out.shape}")
    return out


def horizon_length(curve: PriceCurve, export_price: FloatArray) -> int:
    """Slots from the curve's first up to the first whose import or export price is NaN (the plan's horizon)."""
    unknown = np.flatnonzero(np.isnan(curve.prices) | np.isnan(export_price))
    return int(unknown[0]) if unknown.size else len(curve)


def prepare(
    curve: PriceCurve,
    loads: Sequence[LoadSpec],
    *,
    batteries: Sequence[HomeBattery],
    pv_kw: float | npt.ArrayLike,
    base_load_kw: float | npt.ArrayLike,
    export_price: float | npt.ArrayLike,
    fuse_kw: float | npt.ArrayLike,
    extras: Extras,
) -> tuple[Inputs, dict[str, str], list[str]]:
    """Validate the inputs, cut them to the horizon and resolve the loads' windows."""
    n, export_limit_kw = len(curve), extras.export_limit_kw
    if not export_limit_kw >= 0:
        raise ValueError(f"export_limit_kw must be >= 0, got {export_limit_kw!r}")
    _check_names(batteries, loads, extras)
    q = _array(export_price, n, "export_price")
    horizon = horizon_length(curve, q)
    if horizon == 0:
        raise HomePlanError((Infeasibility.PRICES,), "the first slot has no known import and export price")
    pv, base = (_array(v, n, label)[:horizon] for v, label in ((pv_kw, "pv_kw"), (base_load_kw, "base_load_kw")))
    if not (np.isfinite(pv).all() and np.isfinite(base).all() and (pv >= 0).all() and (base >= 0).all()):
        raise ValueError("pv_kw and base_load_kw must be finite and >= 0 on every slot of the horizon")
    fixed = {name: _array(kw, n, f"fixed_kw[{name!r}]")[:horizon] for name, kw in extras.fixed.items()}
    if not all(np.isfinite(kw).all() and (kw >= 0).all() for kw in fixed.values()):
        raise ValueError("fixed_kw must be finite and >= 0 on every slot of the horizon")
    fuse = _fuse(fuse_kw, n, horizon)
    tariff = _tariff(curve, q, horizon, batteries, extras, limits=(fuse, float(export_limit_kw)))
    placed, unplanned, notes = _loads(curve, loads, horizon)
    inputs = Inputs(
        tariff=tariff,
        base=base + sum(fixed.values(), np.zeros(horizon)),
        pv=pv,
        batteries=tuple(batteries),
        loads=placed,
        curtailment=extras.curtailment,
        heat_pumps=extras.heat_pumps,
        fixed=fixed,
        start=curve.start,
        resolution=curve.resolution,
    )
    return inputs, unplanned, notes


def _fuse(fuse_kw: float | npt.ArrayLike, n: int, horizon: int) -> Limit:
    """Return the fuse over the horizon, kW: a number, or (horizon,) one per slot; ValueError unless > 0 there."""
    fuse: Limit = float(np.asarray(fuse_kw)) if np.ndim(fuse_kw) == 0 else _array(fuse_kw, n, "fuse_kw")[:horizon]
    if not np.all(np.asarray(fuse) > 0):  # also NaN
        raise ValueError(f"fuse_kw must be > 0, got {fuse_kw!r}")
    return fuse


@dataclass(frozen=True)
class Extras:
    """What :func:`~.home.plan_home` was given besides the prices, forecasts, loads, batteries and fuse."""

    heat_pumps: tuple[HomeHeatPump, ...]
    fees: GridFees | None
    phases: PhaseLimits | None
    terminal_price: float | None
    fixed: Mapping[str, float | npt.ArrayLike]
    export_limit_kw: float
    curtailment: bool


def _check_names(batteries: Sequence[HomeBattery], loads: Sequence[LoadSpec], extras: Extras) -> None:
    """Raise ValueError for a name used twice, a device named "pv" or "base", or a phase given to no device."""
    names = [*(b.name for b in batteries), *(spec.name for spec in loads), *(p.name for p in extras.heat_pumps)]
    names += list(extras.fixed)
    if len(set(names)) != len(names) or not set(names).isdisjoint({"pv", "base"}):
        raise ValueError("batteries, loads, fixed loads and heat pumps need distinct names, none 'pv' or 'base'")
    if extras.phases is not None and not set(extras.phases.assignment) <= {*names, "pv", "base"}:
        unknown = sorted(set(extras.phases.assignment) - {*names, "pv", "base"})
        raise ValueError(f"phase assignment names unknown devices: {unknown}")


def _tariff(
    curve: PriceCurve,
    export_price: FloatArray,
    horizon: int,
    batteries: Sequence[HomeBattery],
    extras: Extras,
    *,
    limits: tuple[Limit, float],
) -> Tariff:
    """Return the tariff over the horizon: prices plus fees, limits, terminal values (the median import price).

    The fuse comes cut to the horizon; the phases' per-slot raised limits are cut here.
    """
    n, hours = len(curve), slot_hours(curve)
    for pump in extras.heat_pumps:
        check_heat_pump(pump, length=n, horizon=horizon, hours=hours)
    cut = None if extras.fees is None else cut_fees(extras.fees, length=n, horizon=horizon)
    prices = curve.prices[:horizon] + (0.0 if cut is None else cut.energy_fee)
    median = float(np.median(prices))
    terminal = {b.name: median * b.discharge_efficiency for b in batteries}
    if extras.terminal_price is not None:
        terminal = dict.fromkeys(terminal, float(extras.terminal_price))
    terminal |= {p.name: median / float(p.cop[horizon - 1]) for p in extras.heat_pumps}
    return Tariff(
        import_price=prices,
        export_price=export_price[:horizon],
        hours=hours,
        fuse_kw=limits[0],
        export_limit_kw=limits[1],
        terminal_price=terminal,
        fees=cut,
        quarter=quarter_index(curve.start, curve.resolution, horizon),
        phases=cut_phases(extras.phases, length=n, horizon=horizon),
    )


def _loads(curve: PriceCurve, loads: Sequence[LoadSpec], horizon: int) -> tuple[list[Load], dict[str, str], list[str]]:
    """Each load's starts or slots inside the horizon; loads that cannot fit are left out or raise DEADLINE."""
    placed: list[Load] = []
    unplanned: dict[str, str] = {}
    notes: list[str] = []
    end_text = f"{curve.slot_start(horizon):%Y-%m-%dT%H:%MZ}"
    for spec in loads:
        load = _load(curve, spec, horizon)
        window = resolve_window(curve, spec.earliest_start, spec.deadline)
        if load is not None:
            placed.append(load)
            if window.stop > horizon:
                notes.append(f"{spec.name!r}: prices known until {end_text}; planned on the known slots only")
        elif window.stop > horizon:
            unplanned[spec.name] = f"does not fit before {end_text}, when the known prices end"
        else:
            raise HomePlanError(
                (Infeasibility.DEADLINE,), f"{spec.name!r} cannot be done within its window", (spec.name,)
            )
    return placed, unplanned, notes


def _load(curve: PriceCurve, spec: LoadSpec, horizon: int) -> Load | None:
    """Return the load inside the horizon, None when it cannot fit there even alone."""
    check_positive(**{f"{spec.name}.power_kw": spec.power_kw})
    window = resolve_window(curve, spec.earliest_start, spec.deadline)
    if spec.contiguous:
        if spec.duration_min is None or spec.energy_kwh is not None:
            raise ValueError(f"load {spec.name!r}: a contiguous load needs duration_min and no energy_kwh")
        check_positive(**{f"{spec.name}.duration_min": spec.duration_min})
        slots = slots_for_duration(spec.duration_min, curve.resolution)
        starts = run_options(curve, window, power_kw=spec.power_kw, slots=slots).starts
        starts = starts[starts + slots <= horizon]
        return Load(spec, starts, slots, 0.0) if starts.size else None
    if spec.energy_kwh is None or spec.duration_min is not None:
        raise ValueError(f"load {spec.name!r}: a non-contiguous load needs energy_kwh and no duration_min")
    check_positive(**{f"{spec.name}.energy_kwh": spec.energy_kwh})
    if not (math.isfinite(spec.min_power_kw) and 0 <= spec.min_power_kw <= spec.power_kw):
        raise ValueError(f"load {spec.name!r}: min_power_kw must lie in 0..power_kw, got {spec.min_power_kw!r}")
    usable = charge_options(curve, window, max_power_kw=spec.power_kw, energy_kwh=spec.energy_kwh).slots
    usable = usable[usable < horizon]
    fits = usable.size * spec.power_kw * slot_hours(curve) >= spec.energy_kwh * (1 - REL_EPS)
    return Load(spec, usable, 0, spec.energy_kwh) if fits else None
