"""A MILP built block by block (columns with bounds, cost and integrality; sparse rows), solved by HiGHS.

HiGHS is called through :mod:`.highs` (highspy, imported lazily): importing this module stays cheap.
"""

from __future__ import annotations

import time
from typing import Any, Final

import numpy as np

from ..prices.curve import FloatArray
from .highs import FAILED, INFEASIBLE, LIMITED, OPTIMAL, Result, Rows, solve, stack, widened
from .windows import IntArray

MIP_REL_GAP = 1e-9
TIME_LIMIT_S = 10.0
_OPTIONS: Final[dict[str, float | str]] = {"mip_rel_gap": MIP_REL_GAP, "time_limit": TIME_LIMIT_S}
# LPs skip HiGHS's presolve: on these small, sparse models it costs more than the simplex saves.
_LP_OPTIONS: Final[dict[str, float | str]] = {**_OPTIONS, "presolve": "off"}
# A MILP given a MIP start also skips presolve: with the start, HiGHS's presolve made the least-cost MILP of one
# benchmark home 6x slower (1.04 s against 0.17 s of CPU) and never paid on the others (benchmarks/README.md).
_STARTED_OPTIONS: Final[dict[str, float | str]] = _LP_OPTIONS
_LEAST_S = 1e-3  # a solve after the deadline still gets this long: HiGHS then returns its limit status


class MilpModel:
    """Columns (bounds, cost, integrality) and sparse rows of a MILP, added block by block.

    ``deadline`` (``time.monotonic()`` seconds, None for none) bounds the MILP solves together. A solve given a plan
    (a MIP start, which its caller keeps) gets at most the time left, never less than 1 ms; one without a plan goes
    past the deadline to its first plan (within ``TIME_LIMIT_S``), so a spent deadline never leaves a model without a
    plan HiGHS could find. ``limited`` turns True once a solve stops at either. LPs (relaxations, bounds) are
    polynomial and a handful per plan, so they are not cut.
    """

    def __init__(self) -> None:
        """Start with no columns and no rows."""
        self.deadline: float | None = None
        self.limited = False
        self._bases: dict[int, Any] = {}  # the last optimal LP basis by number of rows (see _relaxed)
        self.lower: list[FloatArray] = []
        self.upper: list[FloatArray] = []
        self.cost: list[FloatArray] = []
        self.integer: list[FloatArray] = []
        self.size = 0
        self.rows: list[IntArray] = []
        self.cols: list[IntArray] = []
        self.vals: list[FloatArray] = []
        self.row_lo: list[FloatArray] = []
        self.row_hi: list[FloatArray] = []
        self.n_rows = 0

    def add(self, count: int, upper: Any, cost: Any = 0.0, *, lower: Any = 0.0, integer: bool = False) -> IntArray:
        """Add ``count`` columns; return their indices."""
        self.lower.append(np.broadcast_to(np.asarray(lower, dtype=np.float64), (count,)))
        self.upper.append(np.broadcast_to(np.asarray(upper, dtype=np.float64), (count,)))
        self.cost.append(np.broadcast_to(np.asarray(cost, dtype=np.float64), (count,)))
        self.integer.append(np.full(count, 1.0 if integer else 0.0))
        self.size += count
        return np.arange(self.size - count, self.size)

    def row(self, entries: list[tuple[Any, Any, Any]], lo: Any, hi: Any, count: int) -> IntArray:
        """Add ``count`` rows lo <= sum of entries <= hi; each entry is (row offsets, columns, values)."""
        for rows, cols, vals in entries:
            rows, cols = np.broadcast_arrays(np.asarray(rows), np.asarray(cols))
            self.rows.append(self.n_rows + rows.ravel())
            self.cols.append(cols.ravel())
            self.vals.append(np.broadcast_to(np.asarray(vals, dtype=np.float64), rows.shape).ravel())
        self.row_lo.append(np.broadcast_to(np.asarray(lo, dtype=np.float64), (count,)))
        self.row_hi.append(np.broadcast_to(np.asarray(hi, dtype=np.float64), (count,)))
        self.n_rows += count
        return np.arange(self.n_rows - count, self.n_rows)

    def solve(
        self,
        objective: FloatArray,
        extra: list[Rows] | None = None,
        *,
        relax: bool = False,
        upper: Any = None,
        lower: Any = None,
        start: FloatArray | None = None,
        gap: float = 0.0,
        cap_s: float | None = None,
    ) -> Result:
        """Run HiGHS on ``objective`` with the rows plus ``extra`` rows; return its :class:`~.highs.Result`.

        ``relax`` solves the LP relaxation (from the last basis: :meth:`_relaxed`); ``upper`` and ``lower`` replace
        the columns' bounds (pruned starts at 0, fixed binaries). ``start`` is a MIP start (a plan believed feasible;
        HiGHS ignores it when it is not); such a MILP is solved without presolve. A MILP solved with presolve that
        fails (status FAILED: HiGHS's presolve breaks down on some models with zero prices) is solved once more
        without it. ``gap`` is an absolute optimality gap in objective units (HiGHS's ``mip_abs_gap``; 0 leaves only
        ``MIP_REL_GAP``). ``cap_s`` (seconds) caps an optional solve, one whose caller keeps a plan in hand: it also
        ends at ``deadline``, with or without a plan, and a stop at either never sets ``limited``.
        """
        lower = np.concatenate(self.lower) if lower is None else np.asarray(lower, dtype=np.float64)
        bounds = self.upper_bounds() if upper is None else np.asarray(upper, dtype=np.float64)
        if relax:
            return self._relaxed(objective, lower, bounds, extra)
        rows = stack([self.constraints(), *(extra or [])])
        planless = start is None and cap_s is None  # past the deadline, it stops at its first plan
        cut = dict if planless else self._cut
        stop_at = self.deadline if planless else None
        integer = np.concatenate(self.integer)
        options = {
            **(_OPTIONS if start is None else _STARTED_OPTIONS),
            "time_limit": TIME_LIMIT_S if cap_s is None else cap_s,
        }
        if gap > 0:
            options["mip_abs_gap"] = gap
        found = solve(
            objective, lower, bounds, rows, integer=integer, options=cut(options), start=start, stop_at=stop_at
        )
        if found.status == FAILED and start is None:  # a started MILP ran without presolve already
            again = cut({**options, "presolve": "off"})
            found = solve(objective, lower, bounds, rows, integer=integer, options=again, stop_at=stop_at)
        self.limited |= found.status == LIMITED and cap_s is None
        return found

    def _cut(self, options: dict[str, float | str]) -> dict[str, float | str]:
        """Return ``options`` with the time limit cut to what is left before ``deadline``."""
        if self.deadline is None:
            return options
        left = max(self.deadline - time.monotonic(), _LEAST_S)
        return {**options, "time_limit": min(float(options["time_limit"]), left)}

    def pinned(self, columns: IntArray, values: Any, upper: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Return (lower, upper) column bounds: the model's lower bounds and ``upper``, ``columns`` fixed at ``values``."""
        lower, upper = np.concatenate(self.lower), upper.copy()
        lower[columns] = upper[columns] = values
        return lower, upper

    def integer_columns(self) -> IntArray:
        """Return the indices of the integer columns."""
        return np.flatnonzero(np.concatenate(self.integer) > 0)

    def upper_bounds(self) -> FloatArray:
        """Return the columns' upper bounds."""
        return np.concatenate(self.upper)

    def constraints(self) -> Rows:
        """Return the rows added so far."""
        return Rows(
            np.concatenate([np.zeros(0, dtype=np.intp), *self.rows]),
            np.concatenate([np.zeros(0, dtype=np.intp), *self.cols]),
            np.concatenate([np.zeros(0), *self.vals]),
            np.concatenate([np.zeros(0), *self.row_lo]),
            np.concatenate([np.zeros(0), *self.row_hi]),
        )

    def reduced_costs(self, objective: FloatArray) -> tuple[float, FloatArray, FloatArray] | None:
        """Return the LP relaxation's optimum, its reduced costs at the lower bounds and its solution.

        Any solution with column j at value v costs at least ``optimum + reduced[j] * (v - lower[j])`` (Lagrangian
        bound: every other term of the dual is >= 0). None when HiGHS reports no optimum.
        """
        found = self._lp(objective, self.upper_bounds())
        if found.status != OPTIMAL or found.x is None or found.lower_dual is None or found.fun is None:
            return None
        return found.fun, found.lower_dual, found.x

    def lower_bound(self, objective: FloatArray, upper: FloatArray) -> float:
        """Return a lower bound of ``objective`` over the LP relaxation with ``upper``, exact whatever HiGHS's tolerances.

        The bound is the Lagrangian of the LP's row duals, each clipped to the sign its row allows (<= 0 where the
        row's upper side is finite, >= 0 where its lower side is, free for an equality): ``y . b`` (b the side each
        dual's sign picks) plus, per column, its reduced cost times the bound that minimises it. It holds for any
        duals, so a tolerance in HiGHS's answer can only lower it; an unbounded column with the wrong sign makes it
        -inf. inf when HiGHS proves the LP infeasible, -inf when it reports neither.
        """
        found = self._lp(objective, upper)
        if found.status == INFEASIBLE:
            return np.inf
        if found.status != OPTIMAL or found.row_dual is None:
            return -np.inf
        rows = self.constraints()
        lo, hi = rows.lo, rows.hi
        y = np.where(lo == hi, found.row_dual, 0.0)
        y = np.where((lo != hi) & np.isfinite(hi), np.minimum(found.row_dual, 0.0), y)
        y = np.where((lo != hi) & np.isfinite(lo), y + np.maximum(found.row_dual, 0.0), y)
        reduced = objective - rows.transpose_dot(y, self.size)
        side = np.where(y < 0, hi, np.where(y > 0, lo, 0.0))
        lower = np.concatenate(self.lower)
        at = np.where(reduced > 0, lower, np.where(reduced < 0, upper, 0.0))
        with np.errstate(invalid="ignore"):
            terms = np.where(reduced == 0, 0.0, reduced * at)
        return float(y @ side + np.sum(terms))

    def _lp(self, objective: FloatArray, upper: FloatArray) -> Result:
        """Solve the LP relaxation with ``upper`` (no time limit, no presolve), its duals included."""
        return self._relaxed(objective, np.concatenate(self.lower), upper, None, options={"presolve": "off"})

    def _relaxed(
        self,
        objective: FloatArray,
        lower: FloatArray,
        upper: FloatArray,
        extra: list[Rows] | None,
        options: dict[str, float | str] = _LP_OPTIONS,
    ) -> Result:
        """Solve an LP of the model (plus ``extra`` rows) from the last optimal basis of an LP with as many rows.

        The model's LPs differ in bounds and objective only (a dive fixes one run after another), so the last basis
        is a valid start and the simplex needs a few iterations instead of a solve from scratch (about 10 against
        40 ms on the demo home); the optimum is the same, its vertex may differ where the LP is degenerate. An LP
        with rows of its own (the tie stage's budget) first starts from the model's basis with those rows basic
        (the demo home's placement LP: 65 against 150 ms).
        """
        own = self.constraints()
        rows = stack([own, *(extra or [])])
        basis = self._bases.get(rows.count) or widened(self._bases.get(own.count), rows.count)
        found = solve(objective, lower, upper, rows, options=options, basis=basis)
        if found.basis is not None and found.status == OPTIMAL:
            self._bases[rows.count] = found.basis
        return found

    def objective(self) -> FloatArray:
        """Return the cost of every column."""
        return np.concatenate(self.cost)


def whole(x: FloatArray, columns: IntArray) -> bool:
    """Return True when ``x`` is within 1e-9 of an integer on every one of ``columns``."""
    return bool(np.all(np.abs(x[columns] - np.round(x[columns])) <= 1e-9))
