"""The joint planner's MILP: its loads, its sparse model, and a lower bound from the LP relaxation's duals.

The model, with binary start variables y for contiguous loads and continuous kW x for energy loads:

    min  sum_l sum_j P_l h W_lj y_lj + sum_l sum_t h p_t x_lt                (W_lj: window sum of the run at j)
    s.t. sum_j y_lj = 1                           for each contiguous load
         sum_t h x_lt = E_l,  0 <= x_lt <= min(P_l, limit - base_t)   for each energy load
         sum_l P_l sum_{j <= t < j + k_l} y_lj + sum_l x_lt <= limit - base_t   for every slot t

HiGHS is called through :mod:`.highs` (highspy, imported lazily): importing this module stays cheap.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate
from typing import Final

import numpy as np

from ..prices.curve import FloatArray, PriceCurve
from .contiguous import RunOptions
from .energy import ChargeOptions
from .highs import OPTIMAL, Rows, solve, stack
from .plan import LoadSpec
from .windows import REL_EPS, BoolArray, IntArray, slot_hours

# HiGHS stops when (primal - dual bound) / |primal| <= MIP_REL_GAP. Its absolute gap stays at its default 1e-6, so the
# joint planner scales the cost objective to a fixed size (its COST_SCALE).
MIP_REL_GAP = 1e-9
# Wall-clock cap per HiGHS call; a 192-slot, 4-load problem takes tens of milliseconds.
TIME_LIMIT_S = 10.0
# Without HiGHS's presolve: on the benchmark's 30 joint instances (bench_scheduling.py) it took 1.8x the CPU time of
# the solves it served (0.92 s against 0.50 s in all, the slowest 250 ms against 106 ms), for the same plans.
MILP_OPTIONS: Final[dict[str, float | str]] = {
    "mip_rel_gap": MIP_REL_GAP,
    "time_limit": TIME_LIMIT_S,
    "presolve": "off",
}


@dataclass
class RunLoad:
    """A contiguous load: one binary variable per start its window and the limit allow."""

    index: int  # position in the caller's list
    spec: LoadSpec
    options: RunOptions
    starts: IntArray  # allowed starts, ascending
    cost: FloatArray  # cost of the run at each start (currency)
    tolerance: float  # costs closer than this are equal (:func:`~.ties.tie_tolerance` over the starts' span)


@dataclass
class ChargeLoad:
    """An energy load: one continuous kW variable per known slot of its window with headroom."""

    index: int
    spec: LoadSpec
    options: ChargeOptions
    slots: IntArray  # usable slots, ascending
    caps_kw: FloatArray  # per-slot cap: min(max power, headroom)
    energy_kwh: float
    order: IntArray  # positions of ``slots`` in the cheapest fill's order (:func:`~.energy.fill_positions`)


type JointLoad = RunLoad | ChargeLoad


@dataclass
class JointModel:
    """The MILP over a subset of the variables (see :func:`build_model`)."""

    cost: FloatArray  # currency per unit of each variable
    tie: FloatArray  # kWh x slot index per unit of each variable
    upper: FloatArray
    integrality: FloatArray
    limit: Rows  # the power limit of every slot touched: sum of kW <= headroom
    limit_slots: IntArray  # the curve slot of each limit row
    equality: Rows  # each load's placement: one start, or its energy
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


def _run_columns(load: RunLoad, mask: BoolArray, hours: float) -> _Columns:
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


def _charge_columns(curve: PriceCurve, load: ChargeLoad, mask: BoolArray, hours: float) -> _Columns:
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


def build_model(curve: PriceCurve, fitting: list[JointLoad], keep: list[BoolArray], headroom: FloatArray) -> JointModel:
    """Return the MILP with the variables ``keep[l]`` selects of load l (a mask over its starts or slots)."""
    hours = slot_hours(curve)
    parts = [
        _run_columns(load, mask, hours) if isinstance(load, RunLoad) else _charge_columns(curve, load, mask, hours)
        for load, mask in zip(fitting, keep, strict=True)
    ]
    sizes = [part.keys.size for part in parts]
    firsts = [0, *accumulate(sizes)]  # each load's first variable; the last entry is the number of variables
    column = firsts[-1]
    limit_rows = np.concatenate([part.rows for part in parts])
    limit_cols = np.concatenate([part.cols + first for part, first in zip(parts, firsts, strict=False)])
    used = np.unique(limit_rows)
    eq_rows = np.repeat(np.arange(len(fitting)), sizes)
    rhs = np.array([part.eq_rhs for part in parts])
    return JointModel(
        cost=np.concatenate([part.cost for part in parts]),
        tie=np.concatenate([part.tie for part in parts]),
        upper=np.concatenate([part.upper for part in parts]),
        integrality=np.concatenate([part.integrality for part in parts]),
        limit=Rows(
            np.searchsorted(used, limit_rows),
            limit_cols,
            np.concatenate([part.vals for part in parts]),
            np.full(used.size, -np.inf),
            headroom[used],
        ),
        limit_slots=used,
        equality=Rows(eq_rows, np.arange(column), np.concatenate([part.eq_vals for part in parts]), rhs, rhs),
        columns=[slice(first, first + size) for first, size in zip(firsts, sizes, strict=False)],
        keys=[part.keys for part in parts],
        energy=[load_energy(load, hours) for load in fitting],
    )


def clear_starts(starts: IntArray, slots: int, over: BoolArray) -> BoolArray:
    """Mask of the ``starts`` whose run of ``slots`` slots meets no slot of ``over`` (a run there breaks the limit)."""
    counts = np.zeros(over.size + 1, dtype=np.int64)
    over.cumsum(out=counts[1:])  # integer prefix counts: exact
    clear: BoolArray = counts[starts + slots] == counts[starts]
    return clear


def model_constraints(model: JointModel) -> list[Rows]:
    """Return the power limit per slot and each load's placement (one start, or its energy)."""
    return [model.limit, model.equality]


def load_energy(load: JointLoad, hours: float) -> float:
    """KWh a load draws (a run: power x whole slots)."""
    if isinstance(load, RunLoad):
        return load.options.slots * load.spec.power_kw * hours
    return load.energy_kwh


def clean_solution(model: JointModel, x: FloatArray) -> FloatArray:
    """Binaries rounded, continuous values clipped to their bounds with solver noise below REL_EPS x bound zeroed."""
    x = np.clip(x, 0.0, model.upper)
    x[model.integrality > 0] = np.round(x[model.integrality > 0])
    x[x <= REL_EPS * model.upper] = 0.0
    return x


@dataclass
class LpBound:
    """A lower bound on the cost of every schedule that uses a given start, from one LP relaxation's duals.

    For any row duals y (those of the ``<=`` rows clipped to <= 0), the Lagrangian ``base = y . b + sum_j min(0, r_j)
    u_j`` with reduced costs ``r = c - A^T y`` bounds the relaxation from below; a schedule that starts a run at
    column j costs at least ``base + max(r_j, 0)``. The bound holds whatever HiGHS's tolerances (they can only weaken
    it), and for every model with fewer columns or more rows, such as the tie stages' models.
    """

    keys: list[IntArray]  # each load's starts (runs) or slots (energy loads) in the LP's model
    columns: list[slice]
    base: float  # currency
    reduced: FloatArray  # currency per unit of each column
    limit_price: FloatArray  # (n,) -dual of each slot's limit row, >= 0 (currency per kW); 0 where no row
    solution: FloatArray  # the relaxation's optimum, one value per column

    @classmethod
    def of(cls, model: JointModel, factor: float, slots: int) -> LpBound | None:
        """Solve ``model``'s LP relaxation with its cost times ``factor`` (conditioning); None without an optimum.

        ``slots`` is the curve's length (the size of ``limit_price``).
        """
        cost = model.cost * factor
        rows = stack(model_constraints(model))
        found = solve(cost, np.zeros(cost.size), model.upper, rows, options={"presolve": "off"})
        if found.status != OPTIMAL or found.row_dual is None or found.x is None:
            return None
        y_ub = np.minimum(found.row_dual[: model.limit.count], 0.0)
        y_eq = found.row_dual[model.limit.count :]
        reduced = cost - model.limit.transpose_dot(y_ub, cost.size) - model.equality.transpose_dot(y_eq, cost.size)
        base = y_ub @ model.limit.hi + y_eq @ model.equality.hi + np.sum(np.minimum(reduced, 0.0) * model.upper)
        limit_price = np.zeros(slots)
        limit_price[model.limit_slots] = -y_ub / factor
        return cls(model.keys, model.columns, float(base) / factor, reduced / factor, limit_price, found.x)

    def prune(self, fitting: list[JointLoad], keep: list[BoolArray], budget: float) -> list[BoolArray]:
        """Return ``keep`` (masks over each load's starts or slots) less the run starts that cost more than ``budget``.

        A start outside the LP's model keeps its mask (no bound is known for it). The comparison allows 1e-9 of
        ``budget`` for the float sums, so a start the bound does not clearly exclude stays.
        """
        margin = 1e-9 * abs(budget) + 1e-12
        pruned = []
        for number, (load, mask) in enumerate(zip(fitting, keep, strict=True)):
            mask = mask.copy()
            if isinstance(load, RunLoad):
                keys = self.keys[number]
                over = self.base + np.maximum(self.reduced[self.columns[number]], 0.0) > budget + margin
                mask[np.searchsorted(load.starts, keys[over])] = False
            pruned.append(mask)
        return pruned
