"""A MILP built block by block (columns with bounds, cost and integrality; sparse rows), solved by HiGHS via scipy.

scipy is imported lazily, inside the solving methods: importing this module stays cheap.
"""

from __future__ import annotations

import time
from typing import Any, Final

import numpy as np

from ..prices.curve import FloatArray
from .windows import IntArray

MIP_REL_GAP = 1e-9
TIME_LIMIT_S = 10.0
_OPTIONS: Final = {"mip_rel_gap": MIP_REL_GAP, "time_limit": TIME_LIMIT_S}
# LPs skip HiGHS's presolve: on these small, sparse models it costs more than the simplex saves.
_LP_OPTIONS: Final = {**_OPTIONS, "presolve": False}
_SOLVE_ERROR = 4  # scipy.optimize.milp status: HiGHS stopped with an error (not infeasible, unbounded or limited)
_LIMITED = 1  # scipy's milp and linprog status: HiGHS stopped at its time (or iteration) limit
_LEAST_S = 1e-3  # a solve after the deadline still gets this long: HiGHS then returns its limit status


class MilpModel:
    """Columns (bounds, cost, integrality) and sparse rows of a MILP, added block by block.

    ``deadline`` (``time.monotonic()`` seconds, None for none) bounds the MILP solves together: each gets at most the
    time left (never more than ``TIME_LIMIT_S``, never less than 1 ms); ``limited`` turns True once a solve stops at
    its limit. LPs (relaxations, bounds) are polynomial and a handful per plan, so they are not cut.
    """

    def __init__(self) -> None:
        """Start with no columns and no rows."""
        self.deadline: float | None = None
        self.limited = False
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
        extra: list[Any] | None = None,
        *,
        relax: bool = False,
        upper: Any = None,
        bounded: bool = True,
    ) -> Any:
        """Run HiGHS on ``objective`` with the rows plus ``extra`` LinearConstraints; return scipy's result.

        ``relax`` solves the LP relaxation; ``upper`` replaces the columns' upper bounds (pruned starts at 0). A MILP
        whose solve fails with HiGHS's status 4 (its presolve breaks down on some models with zero prices) is solved
        once more without presolve. ``bounded=False`` gives a MILP its own ``TIME_LIMIT_S`` whatever ``deadline``.
        """
        from scipy.optimize import Bounds, LinearConstraint, milp  # noqa: PLC0415 - lazy: scipy is heavy
        from scipy.sparse import csr_array  # noqa: PLC0415

        constraints = [
            LinearConstraint(self._matrix(csr_array), np.concatenate(self.row_lo), np.concatenate(self.row_hi))
        ]
        integrality = np.zeros(self.size) if relax else np.concatenate(self.integer)
        bounds = Bounds(np.concatenate(self.lower), self.upper_bounds() if upper is None else upper)
        rows = constraints + (extra or [])
        if relax:
            return milp(objective, integrality=integrality, bounds=bounds, constraints=rows, options=_LP_OPTIONS)
        cut = self._cut if bounded else dict
        found = milp(objective, integrality=integrality, bounds=bounds, constraints=rows, options=cut(_OPTIONS))
        if found.status == _SOLVE_ERROR:
            options = cut(_LP_OPTIONS)
            found = milp(objective, integrality=integrality, bounds=bounds, constraints=rows, options=options)
        self.limited |= found.status == _LIMITED
        return found

    def _cut(self, options: dict[str, Any]) -> dict[str, Any]:
        """Return ``options`` with the time limit cut to what is left before ``deadline``."""
        if self.deadline is None:
            return options
        left = max(self.deadline - time.monotonic(), _LEAST_S)
        return {**options, "time_limit": min(TIME_LIMIT_S, left)}

    def upper_bounds(self) -> FloatArray:
        """Return the columns' upper bounds."""
        return np.concatenate(self.upper)

    def reduced_costs(self, objective: FloatArray) -> tuple[float, FloatArray, FloatArray] | None:
        """Return the LP relaxation's optimum, its reduced costs at the lower bounds and its solution (linprog).

        Any solution with column j at value v costs at least ``optimum + reduced[j] * (v - lower[j])`` (Lagrangian
        bound: every other term of the dual is >= 0). None when HiGHS reports no optimum.
        """
        found, _ = self._linprog(objective, self.upper_bounds())
        if found.status != 0:
            return None
        return float(found.fun), np.asarray(found.lower.marginals, dtype=np.float64), np.asarray(found.x)

    def lower_bound(self, objective: FloatArray, upper: FloatArray) -> float:
        """Return a lower bound of ``objective`` over the LP relaxation with ``upper``, exact whatever HiGHS's tolerances.

        The bound is the Lagrangian of the LP's row duals (inequality duals clipped to their sign): ``y . b`` plus,
        per column, its reduced cost times the bound that minimises it. It holds for any duals, so a tolerance in
        HiGHS's answer can only lower it; an unbounded column with the wrong sign makes it -inf. inf when HiGHS
        proves the LP infeasible, -inf when it reports neither.
        """
        found, (a_ub, b_ub, a_eq, b_eq) = self._linprog(objective, upper)
        if found.status == 2:
            return np.inf
        if found.status != 0:
            return -np.inf
        y_ub = np.minimum(np.asarray(found.ineqlin.marginals, dtype=np.float64), 0.0)
        y_eq = np.asarray(found.eqlin.marginals, dtype=np.float64)
        reduced = objective - a_ub.T @ y_ub - a_eq.T @ y_eq
        lower = np.concatenate(self.lower)
        at = np.where(reduced > 0, lower, np.where(reduced < 0, upper, 0.0))
        with np.errstate(invalid="ignore"):
            terms = np.where(reduced == 0, 0.0, reduced * at)
        return float(y_ub @ b_ub + y_eq @ b_eq + np.sum(terms))

    def _linprog(self, objective: FloatArray, upper: FloatArray) -> tuple[Any, tuple[Any, FloatArray, Any, FloatArray]]:
        """Solve the LP relaxation with linprog (rows split into A_ub x <= b_ub and A_eq x = b_eq); return both."""
        from scipy.optimize import linprog  # noqa: PLC0415 - lazy, as in solve
        from scipy.sparse import csr_array, vstack  # noqa: PLC0415

        matrix = self._matrix(csr_array)
        lo, hi = np.concatenate(self.row_lo), np.concatenate(self.row_hi)
        eq, upper_rows = lo == hi, np.isfinite(hi) & (lo != hi)
        lower_rows = np.isfinite(lo) & (lo != hi)
        system = (
            vstack([matrix[upper_rows], -matrix[lower_rows]]).tocsr(),
            np.concatenate([hi[upper_rows], -lo[lower_rows]]),
            matrix[eq],
            lo[eq],
        )
        found = linprog(
            objective,
            A_ub=system[0],
            b_ub=system[1],
            A_eq=system[2],
            b_eq=system[3],
            bounds=np.column_stack([np.concatenate(self.lower), upper]),
            method="highs",
            options={"presolve": False},
        )
        return found, system

    def _matrix(self, csr_array: Any) -> Any:
        """Return the rows as a sparse (rows, columns) matrix."""
        return csr_array(
            (np.concatenate(self.vals), (np.concatenate(self.rows), np.concatenate(self.cols))),
            shape=(self.n_rows, self.size),
        )

    def objective(self) -> FloatArray:
        """Return the cost of every column."""
        return np.concatenate(self.cost)
