"""Several loads at once under the household power limit: a MILP solved by HiGHS (scipy.optimize.milp).

The model, with binary start variables y for contiguous loads and continuous kW x for energy loads:

    min  sum_l sum_j P_l h W_lj y_lj + sum_l sum_t h p_t x_lt                (W_lj: window sum of the run at j)
    s.t. sum_j y_lj = 1                           for each contiguous load
         sum_t h x_lt = E_l,  0 <= x_lt <= min(P_l, limit - base_t)   for each energy load
         sum_l P_l sum_{j <= t < j + k_l} y_lj + sum_l x_lt <= limit - base_t   for every slot t
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import accumulate
import math
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ..prices.curve import FloatArray, PriceCurve
from .contiguous import RunOptions, run_options, run_power
from .energy import ChargeOptions, charge_options, cheapest_fill
from .plan import LoadSpec, Plan, Reason
from .ties import TIE_REL, earliest_cheapest, tie_tolerance
from .windows import (
    REL_EPS,
    BoolArray,
    IntArray,
    build_plan,
    check_positive,
    resolve_window,
    slot_hours,
    slots_for_duration,
    unplanned,
)

METHOD = "milp"
# HiGHS stops when (primal - dual bound) / |primal| <= MIP_REL_GAP. Its absolute gap is fixed at 1e-6 (scipy does not
# expose it), so the cost objective is scaled to COST_SCALE: 1e-6 is then 1e-10 of the cost scale.
MIP_REL_GAP = 1e-9
COST_SCALE = 1e4
# Wall-clock cap per HiGHS call; a 192-slot, 4-load problem takes tens of milliseconds.
TIME_LIMIT_S = 10.0
# The tie-break may spend this fraction of the cost scale (max |price| x total energy) to move loads earlier.
TIE_SLACK = TIE_REL
# Later tie stages keep an energy load's mean slot index within this of its least value (absorbs HiGHS's noise).
PIN_SLOTS = 1e-6
# Largest weighted objective of a stage of runs: integers this large stay apart under MIP_REL_GAP (1e-3 here).
LEX_LIMIT = 1e6


@dataclass
class _Run:
    """A contiguous load: one binary variable per start its window and the limit allow."""

    index: int  # position in the caller's list
    spec: LoadSpec
    options: RunOptions
    starts: IntArray  # allowed starts, ascending
    cost: FloatArray  # cost of the run at each start (currency)


@dataclass
class _Charge:
    """An energy load: one continuous kW variable per known slot of its window with headroom."""

    index: int
    spec: LoadSpec
    options: ChargeOptions
    slots: IntArray  # usable slots, ascending
    caps_kw: FloatArray  # per-slot cap: min(max power, headroom)
    energy_kwh: float


type _Load = _Run | _Charge


def _validate(spec: LoadSpec) -> float:
    """Check the load and return its duration (contiguous) or energy; raise ValueError or TypeError when malformed."""
    label = spec.name or "load"
    check_positive(**{f"{label}.power_kw": spec.power_kw})
    if (spec.duration_min is None) == (spec.energy_kwh is None):
        raise ValueError(f"load {label!r}: give exactly one of duration_min and energy_kwh")
    if spec.contiguous:
        if spec.duration_min is None:
            raise ValueError(
                f"load {label!r}: a contiguous load needs duration_min (energy_kwh needs contiguous=False)"
            )
        check_positive(**{f"{label}.duration_min": spec.duration_min})
        return spec.duration_min
    if spec.energy_kwh is None:
        raise ValueError(f"load {label!r}: a non-contiguous load needs energy_kwh (duration_min needs contiguous=True)")
    check_positive(**{f"{label}.energy_kwh": spec.energy_kwh})
    return spec.energy_kwh


def _base_load(base_load_kw: float | npt.ArrayLike, n: int) -> FloatArray:
    base = np.asarray(base_load_kw, dtype=np.float64)
    if base.ndim == 0:
        base = np.full(n, float(base))
    if base.shape != (n,):
        raise ValueError(f"base_load_kw must be a number or an array of {n} values, got shape {base.shape}")
    if not np.isfinite(base).all():
        raise ValueError("base_load_kw must be finite in every slot")
    return base


def plan_joint(
    curve: PriceCurve,
    loads: Sequence[LoadSpec],
    *,
    power_limit_kw: float,
    base_load_kw: float | npt.ArrayLike = 0.0,
) -> list[Plan]:
    """Schedule several loads together at least total cost without exceeding the household power limit.

    Args:
        curve: prices per kWh (NaN = unknown); every plan's ``power_kw`` array is aligned with it.
        loads: the loads; ``contiguous=True`` needs ``duration_min`` (one uninterrupted run at ``power_kw``),
            ``contiguous=False`` needs ``energy_kwh`` (any slots, 0 to ``power_kw`` kW each, exactly that energy).
            Windows round as in :func:`plan_contiguous` and :func:`plan_energy`; unknown prices are never used.
        power_limit_kw: the main fuse in kW, > 0 (``math.inf`` for none); base load plus planned loads stay at or
            below it in every slot (to 1e-9 relative, which absorbs float noise such as 2.8 - 0.8 < 2.0).
        base_load_kw: kW drawn by the rest of the house, a number or a finite array (n,) aligned with the curve
            (negative where solar exports).

    Returns:
        One :class:`Plan` per load, in order, method ``milp``. A load whose window cannot hold it on its own gets
        feasible=False with WINDOW_TOO_SHORT or NO_PRICES and the others are still planned. When the limit leaves
        no common schedule (or HiGHS finds none within ``TIME_LIMIT_S``), every other plan is feasible=False with
        POWER_LIMIT and nothing is scheduled; the ``detail`` names the loads that cannot run under the limit even
        alone. ``baseline_cost`` is each load's own
        baseline (earliest start, limit ignored). Cost is optimal to a relative gap of 1e-9.

    Raises:
        ValueError: a malformed load (non-positive or non-finite numbers, both or neither of ``duration_min`` and
            ``energy_kwh``, or one that contradicts ``contiguous``), a limit that is not > 0, a base load of the
            wrong shape or not finite, or a naive datetime.
        TypeError: a power, duration, energy or limit that is not a real number (bool included).

    The model is in the module docstring. Starts whose run meets a slot with ``base + P > limit`` are dropped first. The
    limit is the only coupling, so when the loads' own optima (:func:`plan_contiguous`, :func:`plan_energy` under the
    limit) fit together they are the optimum and HiGHS is not called. Otherwise HiGHS solves the MILP with explicit
    ``mip_rel_gap`` and ``time_limit``. Ties (costs within the tolerance of :mod:`.ties`) are broken lexicographically
    in the order of ``loads``: the first load as early as it can be, then the second, and so on (see :func:`_solve`),
    whatever HiGHS's rounding; the same inputs give the same plans. A plan that uses doubtful slots has reason
    DOUBTFUL_PRICES.

    """
    _check_limit(power_limit_kw)
    amounts = [_validate(spec) for spec in loads]
    base = _base_load(base_load_kw, len(curve))
    headroom = power_limit_kw * (1 + REL_EPS) - base  # kW left for the loads per slot; REL_EPS absorbs float noise
    plans: list[Plan | None] = [None] * len(loads)
    fitting: list[_Load] = []
    for index, (spec, amount) in enumerate(zip(loads, amounts, strict=True)):
        option = _option(curve, index, spec, amount, headroom)
        if isinstance(option, Plan):
            plans[index] = option
        else:
            fitting.append(option)
    return _schedule(curve, plans, fitting, headroom, power_limit_kw)


def _check_limit(power_limit_kw: float) -> None:
    """Raise TypeError unless the limit is a real number (bool excluded), ValueError unless it is > 0."""
    if isinstance(power_limit_kw, bool) or not isinstance(power_limit_kw, (int, float, np.integer, np.floating)):
        raise TypeError(f"power_limit_kw must be a number, got {power_limit_kw!r}")
    if not power_limit_kw > 0:  # also NaN; +inf means no limit
        raise ValueError(f"power_limit_kw must be > 0, got {power_limit_kw!r}")


def _option(curve: PriceCurve, index: int, spec: LoadSpec, amount: float, headroom: FloatArray) -> _Load | Plan:
    """Return the load's variables (starts or slots with room for it alone), or its unplanned Plan when none fit."""
    window = resolve_window(curve, spec.earliest_start, spec.deadline)
    if spec.contiguous:
        slots = slots_for_duration(amount, curve.resolution)
        run = run_options(curve, window, power_kw=spec.power_kw, slots=slots)
        if run.feasible:
            ok = _fits(run.starts, slots, spec.power_kw, headroom)  # room for this load alone
            return _Run(index, spec, run, run.starts[ok], spec.power_kw * slot_hours(curve) * run.sums[ok])
        reason, detail = run.reason, run.detail
    else:
        charge = charge_options(curve, window, max_power_kw=spec.power_kw, energy_kwh=amount)
        if charge.feasible:
            caps = np.minimum(spec.power_kw, headroom[charge.slots])
            keep = caps > 0
            return _Charge(index, spec, charge, charge.slots[keep], caps[keep], amount)
        reason, detail = charge.reason, charge.detail
    return unplanned(curve, spec.name, method=METHOD, reason=reason, detail=detail)


def _schedule(
    curve: PriceCurve, plans: list[Plan | None], fitting: list[_Load], headroom: FloatArray, power_limit_kw: float
) -> list[Plan]:
    """Plan the fitting loads into ``plans``: their own optima when these fit together, else the MILP's schedule."""
    # Each load's own optimum under the limit: the same choice plan_contiguous / plan_energy make.
    alone = [_place(curve, load, headroom) for load in fitting]
    blocked_names = [repr(load.spec.name) for load, best in zip(fitting, alone, strict=True) if best is None]
    if blocked_names:
        detail = (
            f"{', '.join(blocked_names)} cannot run within its window: the {power_limit_kw:g} kW limit leaves too "
            "little room beside the base load (the other appliances' plans); nothing scheduled"
        )
        return _blocked(curve, plans, fitting, detail)

    powers = [best[0] for best in alone if best is not None]
    note = ""
    if fitting and np.any(np.sum(powers, axis=0) > headroom):
        costs = [best[1] for best in alone if best is not None]
        solved, note = _solve(curve, fitting, headroom, costs)
        if solved is None:
            detail = f"the loads do not fit together under the {power_limit_kw:g} kW limit and the base load{note}"
            return _blocked(curve, plans, fitting, detail + "; nothing scheduled")
        powers = solved
    for load, power in zip(fitting, powers, strict=True):
        plans[load.index] = build_plan(
            curve,
            load.spec.name,
            power,
            baseline_cost=load.options.baseline_cost,
            method=METHOD,
            reason=load.options.reason,
            detail="; ".join(part for part in (load.options.detail, note) if part),
        )
    return [plan for plan in plans if plan is not None]


def _blocked(curve: PriceCurve, plans: list[Plan | None], fitting: list[_Load], detail: str) -> list[Plan]:
    for load in fitting:
        plans[load.index] = unplanned(
            curve,
            load.spec.name,
            method=METHOD,
            reason=Reason.POWER_LIMIT,
            detail=detail,
            baseline_cost=load.options.baseline_cost,
        )
    return [plan for plan in plans if plan is not None]


@dataclass
class _Model:
    """The MILP over a subset of the variables (see :func:`_build`)."""

    cost: FloatArray  # currency per unit of each variable
    tie: FloatArray  # kWh x slot index per unit of each variable
    upper: FloatArray
    integrality: FloatArray
    limit_matrix: Any  # scipy.sparse csr (slots touched, variables)
    limit_rhs: FloatArray
    equality_matrix: Any  # scipy.sparse csr (loads, variables)
    equality_rhs: FloatArray
    columns: list[slice]  # each load's variables
    keys: list[IntArray]  # each load's starts (runs) or slots (energy loads), one per variable
    energy: list[float]  # each load's kWh


@dataclass
class _Columns:
    """One load's variables: objective, bounds, and its entries in the limit rows and its equality row."""

    keys: IntArray  # starts (runs) or slots (energy loads), one per variable
    cost: FloatArray
    tie: FloatArray
    upper: FloatArray
    integrality: FloatArray
    rows: IntArray  # limit rows (curve slots) of the load's sparse entries
    cols: IntArray  # their variables, counted from the load's first
    vals: FloatArray
    eq_vals: FloatArray
    eq_rhs: float


def _run_columns(load: _Run, mask: BoolArray, hours: float) -> _Columns:
    """Return a contiguous load's binary start variables: one row entry per slot its run covers."""
    starts, slots, power = load.starts[mask], load.options.slots, load.spec.power_kw
    count = starts.size
    return _Columns(
        keys=starts,
        cost=load.cost[mask],
        tie=power * hours * slots * (starts.astype(np.float64) + (slots - 1) / 2),
        upper=np.ones(count),
        integrality=np.ones(count),
        rows=(starts[:, None] + np.arange(slots)).ravel(),
        cols=np.repeat(np.arange(count), slots),
        vals=np.full(count * slots, power),
        eq_vals=np.ones(count),
        eq_rhs=1.0,
    )


def _charge_columns(curve: PriceCurve, load: _Charge, mask: BoolArray, hours: float) -> _Columns:
    """Return an energy load's continuous kW variables, one per slot, and its energy row."""
    slots_used = load.slots[mask]
    count = slots_used.size
    return _Columns(
        keys=slots_used,
        cost=hours * curve.prices[slots_used],
        tie=hours * slots_used.astype(np.float64),
        upper=load.caps_kw[mask],
        integrality=np.zeros(count),
        rows=slots_used,
        cols=np.arange(count),
        vals=np.ones(count),
        eq_vals=np.full(count, hours),
        eq_rhs=load.energy_kwh,
    )


def _build(curve: PriceCurve, fitting: list[_Load], keep: list[BoolArray], headroom: FloatArray) -> _Model:
    """Return the MILP with the variables ``keep[l]`` selects of load l (a mask over its starts or slots)."""
    from scipy.sparse import coo_array  # noqa: PLC0415 - lazy: scipy is heavy, and plan_joint runs in an executor job

    hours = slot_hours(curve)
    parts = [
        _run_columns(load, mask, hours) if isinstance(load, _Run) else _charge_columns(curve, load, mask, hours)
        for load, mask in zip(fitting, keep, strict=True)
    ]
    sizes = [part.keys.size for part in parts]
    firsts = [0, *accumulate(sizes)]  # each load's first variable; the last entry is the number of variables
    column = firsts[-1]
    limit_rows = np.concatenate([part.rows for part in parts])
    limit_cols = np.concatenate([part.cols + first for part, first in zip(parts, firsts, strict=False)])
    used = np.unique(limit_rows)
    eq_rows = np.repeat(np.arange(len(fitting)), sizes)
    return _Model(
        cost=np.concatenate([part.cost for part in parts]),
        tie=np.concatenate([part.tie for part in parts]),
        upper=np.concatenate([part.upper for part in parts]),
        integrality=np.concatenate([part.integrality for part in parts]),
        limit_matrix=coo_array(
            (np.concatenate([part.vals for part in parts]), (np.searchsorted(used, limit_rows), limit_cols)),
            shape=(used.size, column),
        ).tocsr(),
        limit_rhs=headroom[used],
        equality_matrix=coo_array(
            (np.concatenate([part.eq_vals for part in parts]), (eq_rows, np.arange(column))),
            shape=(len(fitting), column),
        ).tocsr(),
        equality_rhs=np.array([part.eq_rhs for part in parts]),
        columns=[slice(first, first + size) for first, size in zip(firsts, sizes, strict=False)],
        keys=[part.keys for part in parts],
        energy=[_energy(load, hours) for load in fitting],
    )


def _solve(
    curve: PriceCurve, fitting: list[_Load], headroom: FloatArray, own_costs: list[float]
) -> tuple[list[FloatArray] | None, str]:
    """Solve the MILP; per-load kW arrays (None when no schedule exists) and a note for ``detail``.

    Stage 0 minimises cost alone, giving C0. Every later stage (:class:`_TieStages`) keeps ``cost <= B`` with
    B = C0 + TIE_SLACK x S (S = max|price| x total energy, the tie tolerance of :mod:`.ties`) and moves loads
    earlier, lexicographically in the caller's order.

    Pruning. Every other load costs at least its own optimum, so in a schedule costing at most B a run cannot cost
    more than its own optimum + (B - sum of own optima). Stage 0 drops such starts with B the cost of a quick
    feasible schedule (:func:`_heuristic`), later stages with B = C0. Small models matter: scipy 1.15.0-1.15.2
    spend O(variables^2) after each HiGHS call (scipy#22655), about 85 ms at 600 variables.
    """
    from scipy.optimize import Bounds, milp  # noqa: PLC0415 - lazy, as in _build

    hours = slot_hours(curve)
    energy = sum(_energy(load, hours) for load in fitting)
    spans = [
        curve.prices[load.starts[0] : load.starts[-1] + load.options.slots]
        if isinstance(load, _Run)
        else curve.prices[load.slots]
        for load in fitting
    ]
    scale = max(float(np.nanmax(np.abs(span))) for span in spans) * energy or energy
    slack = TIE_SLACK * scale

    def within(budget: float) -> list[BoolArray]:
        """Return the columns that can be part of a schedule costing at most ``budget`` (+ slack).

        Every other load costs at least its own optimum, so a run dearer than its own optimum + (budget - sum of own
        optima) cannot.
        """
        extra = max(budget - sum(own_costs), 0.0) + slack  # >= 0 exactly; HiGHS's rounding can end a bit below
        return [
            load.cost - own <= extra if isinstance(load, _Run) else np.ones(load.slots.size, dtype=bool)
            for load, own in zip(fitting, own_costs, strict=True)
        ]

    model = _build(curve, fitting, within(_heuristic(curve, fitting, headroom)), headroom)
    first = milp(
        model.cost * (COST_SCALE / scale),
        integrality=model.integrality,
        bounds=Bounds(0, model.upper),
        constraints=_constraints(model),
        options=_OPTIONS,
    )
    if first.x is None:
        return None, "" if first.status == 2 else f" (no schedule found: {first.message})"
    note = "" if first.status == 0 else f"solver stopped early ({first.message}); best schedule found"
    x = _clean(model, first.x)
    cost = float(model.cost @ x)
    stages = _TieStages(curve, fitting, headroom, within(cost), cost + slack, scale, model, x)
    stages.run()
    powers = _powers(curve, fitting, stages.model, stages.x, headroom)
    return _canonical(curve, fitting, powers, headroom, stages.budget) or powers, note


_OPTIONS: Final = {"mip_rel_gap": MIP_REL_GAP, "time_limit": TIME_LIMIT_S}


def _constraints(model: _Model) -> list[Any]:
    """Return the power limit per slot and each load's placement (one start, or its energy) as LinearConstraints."""
    from scipy.optimize import LinearConstraint  # noqa: PLC0415 - lazy, as in _build

    return [
        LinearConstraint(model.limit_matrix, -np.inf, model.limit_rhs),
        LinearConstraint(model.equality_matrix, model.equality_rhs, model.equality_rhs),
    ]


@dataclass
class _TieStages:
    """Among schedules costing at most ``budget``: the first load as early as it can be, then the second, and so on.

    Each stage minimises an objective in slots, where different placements differ by far more than HiGHS's
    tolerances (absolute gap 1e-6, not settable through scipy; feasibility 1e-7), which a penalty folded into the
    cost objective (below 1e-9 of the cost scale) could never be; so HiGHS's rounding decides nothing. Consecutive
    runs share a stage: their starts (offsets from their earliest candidate) weighted so that one slot of a run
    outweighs every later run of the stage, while the weighted objective stays below ``LEX_LIMIT``. An energy load
    minimises its energy-weighted mean slot. A stage pins what it placed: a run to its start, an energy load to its
    mean slot (+ PIN_SLOTS). The first run of a stage only considers starts up to its current one, and a run whose
    candidates leave one start needs no stage; the only energy load needs none once every run is pinned, as
    :func:`_canonical` then places it exactly. A stage's schedule is kept only when its recomputed cost stays within
    ``budget + TIE_SLACK x scale`` (HiGHS may end on the budget row); otherwise the stages stop there.
    """

    curve: PriceCurve
    fitting: list[_Load]
    headroom: FloatArray
    keep: list[BoolArray]  # each load's usable columns (runs: a mask over its starts)
    budget: float
    scale: float
    model: _Model
    x: FloatArray
    pins: list[tuple[int, float]] = field(default_factory=list)  # (energy load, its least mean slot)

    def run(self) -> None:
        """All stages, in the order of the loads."""
        group: list[int] = []
        weight = 1
        for number, load in enumerate(self.fitting):
            if isinstance(load, _Charge):
                if not self._flush(group):
                    return
                group, weight = [], 1
                if not self._last_energy_load(number) and not self._stage([number]):
                    return
                continue
            span = self._span(number, first=not group)
            if group and weight * span > LEX_LIMIT:
                if not self._flush(group):
                    return
                group, weight = [], 1
                span = self._span(number, first=True)
            if span > 1:  # else it is as early as it can be
                group.append(number)
                weight *= span
        self._flush(group)

    def _span(self, number: int, *, first: bool) -> int:
        """Return how many slots the candidate starts of run ``number`` span.

        The first run of a stage keeps only starts up to its current one: the schedule in hand is feasible, so only
        those can improve on it.
        """
        load = self.fitting[number]
        assert isinstance(load, _Run)
        if first:
            current = self.model.keys[number][int(np.argmax(self.x[self.model.columns[number]]))]
            self.keep[number] &= load.starts <= current
        return int(np.ptp(load.starts[self.keep[number]])) + 1

    def _flush(self, group: list[int]) -> bool:
        """Run the stage of a group of runs (nothing to do for none); return False when the stages must stop."""
        return not group or self._stage(group)

    def _last_energy_load(self, number: int) -> bool:
        """Return True when load ``number`` is the only energy load and no run follows it."""
        return all(isinstance(load, _Run) for i, load in enumerate(self.fitting) if i != number) and not any(
            isinstance(load, _Run) for load in self.fitting[number + 1 :]
        )

    def _stage(self, numbers: list[int]) -> bool:
        """Place the loads ``numbers`` as early as they can be and pin them.

        Return False when HiGHS found nothing better within the budget (the schedule in hand stays).
        """
        from scipy.optimize import Bounds, LinearConstraint, milp  # noqa: PLC0415 - lazy, as in _build

        model = _build(self.curve, self.fitting, self.keep, self.headroom)
        rows = [
            LinearConstraint(
                model.cost[None, :] * (COST_SCALE / self.scale), -np.inf, self.budget * COST_SCALE / self.scale
            )
        ]
        rows += [LinearConstraint(_mean_slot(model, j)[None, :], -np.inf, mean + PIN_SLOTS) for j, mean in self.pins]
        found = milp(
            self._objective(model, numbers),
            integrality=model.integrality,
            bounds=Bounds(0, model.upper),
            constraints=[*_constraints(model), *rows],
            options=_OPTIONS,
        )
        if found.x is None or float(model.cost @ _clean(model, found.x)) > self.budget + TIE_SLACK * self.scale:
            return False
        self.model, self.x = model, _clean(model, found.x)
        for number in numbers:
            load = self.fitting[number]
            if isinstance(load, _Run):
                self.keep[number] = load.starts == model.keys[number][int(np.argmax(self.x[model.columns[number]]))]
            else:
                self.pins.append((number, float(_mean_slot(model, number) @ self.x)))
        return True

    def _objective(self, model: _Model, numbers: list[int]) -> FloatArray:
        """Return an energy load's mean slot, or the runs' start offsets weighted lexicographically (first heaviest)."""
        if isinstance(self.fitting[numbers[0]], _Charge):
            return _mean_slot(model, numbers[0])
        row = np.zeros(model.cost.size)
        weight = 1.0
        for number in reversed(numbers):
            keys = model.keys[number]
            row[model.columns[number]] = weight * (keys - keys[0])
            weight *= int(keys[-1] - keys[0]) + 1
        return row


def _mean_slot(model: _Model, number: int) -> FloatArray:
    """Objective row (over all variables) of load ``number``'s energy-weighted mean slot index, from its first."""
    columns = model.columns[number]
    row = np.zeros(model.cost.size)
    tie = model.tie[columns]
    row[columns] = (tie - (tie.min() if tie.size else 0.0)) / model.energy[number]
    return row


def _canonical(
    curve: PriceCurve, fitting: list[_Load], powers: list[FloatArray], headroom: FloatArray, budget: float
) -> list[FloatArray] | None:
    """Keep the runs of ``powers`` and place each energy load again, in order, at its cheapest in the room left.

    Energy loads go earliest on ties (:func:`~.energy.cheapest_fill`). Return None when that does not fit or costs
    more than ``budget``.
    """
    runs = [power for power, load in zip(powers, fitting, strict=True) if isinstance(load, _Run)]
    room = headroom - sum(runs, np.zeros(len(curve)))
    placed = list(powers)
    for number, load in enumerate(fitting):
        if isinstance(load, _Charge):
            caps = np.minimum(load.caps_kw, np.maximum(room[load.slots], 0.0))
            power = cheapest_fill(curve, load.slots, caps, load.energy_kwh)
            if power is None:
                return None
            placed[number] = power
            room = room - power
    cost = sum(float(np.dot(curve.prices[p > 0], p[p > 0])) for p in placed) * slot_hours(curve)
    return placed if cost <= budget else None


def _energy(load: _Load, hours: float) -> float:
    """KWh a load draws (a run: power x whole slots)."""
    if isinstance(load, _Run):
        return load.options.slots * load.spec.power_kw * hours
    return load.energy_kwh


def _fits(starts: IntArray, slots: int, power_kw: float, room: FloatArray) -> BoolArray:
    """Mask of the ``starts`` whose run of ``slots`` slots at ``power_kw`` stays within ``room`` (kW per slot)."""
    over = np.concatenate(([0], np.cumsum(power_kw > room)))  # integer prefix counts: exact
    fits: BoolArray = over[starts + slots] == over[starts]
    return fits


def _place(curve: PriceCurve, load: _Load, room: FloatArray) -> tuple[FloatArray, float] | None:
    """``load`` at its cheapest place within ``room`` (kW per slot): per-slot kW and cost, None if it does not fit."""
    if isinstance(load, _Run):
        ok = np.flatnonzero(_fits(load.starts, load.options.slots, load.spec.power_kw, room))
        if ok.size == 0:
            return None
        energy = load.spec.power_kw * slot_hours(curve) * load.options.slots
        tolerance = tie_tolerance(curve.prices[load.starts[0] : load.starts[-1] + load.options.slots], energy)
        best = int(ok[earliest_cheapest(load.cost[ok], tolerance)])
        return run_power(len(curve), int(load.starts[best]), load.options.slots, load.spec.power_kw), float(
            load.cost[best]
        )
    caps = np.minimum(load.caps_kw, np.maximum(room[load.slots], 0.0))
    power = cheapest_fill(curve, load.slots, caps, load.energy_kwh)
    if power is None:
        return None
    used = power > 0
    return power, float(np.dot(curve.prices[used], power[used])) * slot_hours(curve)


def _heuristic(curve: PriceCurve, fitting: list[_Load], headroom: FloatArray) -> float:
    """Cost of a quick feasible schedule: an upper bound that lets :func:`_solve` drop hopeless starts.

    The loads go one at a time, most energy first, each to its cheapest place in the room the others left; then
    each load in turn is lifted out and put back at its cheapest place, while that lowers the cost (at most
    ``len(fitting)`` rounds). ``math.inf`` when the first pass cannot place every load.
    """
    hours = slot_hours(curve)
    room = headroom.copy()
    placed: dict[int, tuple[FloatArray, float]] = {}
    for number in sorted(
        range(len(fitting)), key=lambda i: (isinstance(fitting[i], _Charge), -_energy(fitting[i], hours))
    ):
        spot = _place(curve, fitting[number], room)
        if spot is None:
            return math.inf
        placed[number] = spot
        room -= spot[0]
    for _ in range(len(fitting)):
        improved = False
        for number, load in enumerate(fitting):
            power, cost = placed[number]
            spot = _place(curve, load, room + power)
            if spot is not None and spot[1] < cost:
                room += power - spot[0]
                placed[number] = spot
                improved = True
        if not improved:
            break
    return sum(cost for _, cost in placed.values())


def _clean(model: _Model, x: FloatArray) -> FloatArray:
    """Binaries rounded, continuous values clipped to their bounds with solver noise below REL_EPS x bound zeroed."""
    x = np.clip(x, 0.0, model.upper)
    x[model.integrality > 0] = np.round(x[model.integrality > 0])
    x[x <= REL_EPS * model.upper] = 0.0
    return x


def _powers(
    curve: PriceCurve, fitting: list[_Load], model: _Model, x: FloatArray, headroom: FloatArray
) -> list[FloatArray]:
    """Per-slot kW of each load from a cleaned solution, kept exactly within the limit."""
    n = len(curve)
    powers: list[FloatArray] = []
    for load, columns, keys in zip(fitting, model.columns, model.keys, strict=True):
        power: FloatArray = np.zeros(n)
        if isinstance(load, _Run):
            power = run_power(n, int(keys[int(np.argmax(x[columns]))]), load.options.slots, load.spec.power_kw)
        else:
            power[keys] = x[columns]
        powers.append(power)
    runs = sum((p for p, load in zip(powers, fitting, strict=True) if isinstance(load, _Run)), np.zeros(n))
    flexible = sum((p for p, load in zip(powers, fitting, strict=True) if isinstance(load, _Charge)), np.zeros(n))
    # Feasibility tolerances (~1e-7 kW) may overshoot the limit; scale energy loads back into the headroom exactly.
    room = np.maximum(headroom - runs, 0.0)
    factor = np.where(flexible > room, room / np.where(flexible > 0, flexible, 1.0), 1.0)
    return [p * factor if isinstance(load, _Charge) else p for p, load in zip(powers, fitting, strict=True)]
