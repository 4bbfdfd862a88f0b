"""A MILP built block by block (columns with bounds, cost and integrality; sparse rows), solved by HiGHS via scipy.

scipy is imported lazily, inside the solving methods: importing this module stays cheap.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from ..prices.curve import FloatArray
from .windows import IntArray

MIP_REL_GAP = 1e-9
TIME_LIMIT_S = 10.0
_OPTIONS: Final = {"mip_rel_gap": MIP_REL_GAP, "time_limit": TIME_LIMIT_S}
# LPs skip HiGHS's presolve: on these small, sparse models it costs more than the simplex saves.
_LP_OPTIONS: Final = {**_OPTIONS, "presolve": False}


class MilpModel:
    """Columns (bounds, cost, integrality) and sparse rows of a MILP, added block by block."""

    def __init__(self) -> None:
        """Start with no columns and no rows."""
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
        self, objective: FloatArray, extra: list[Any] | None = None, *, relax: bool = False, upper: Any = None
    ) -> Any:
        """Run HiGHS on ``objective`` with the rows plus ``extra`` LinearConstraints; return scipy's result.

        ``relax`` solves the LP relaxation; ``upper`` replaces the columns' upper bounds (pruned starts at 0).
        """
        from scipy.optimize import Bounds, LinearConstraint, milp  # noqa: PLC0415 - lazy: scipy is heavy
        from scipy.sparse import csr_array  # noqa: PLC0415

        constraints = [
            LinearConstraint(self._matrix(csr_array), np.concatenate(self.row_lo), np.concatenate(self.row_hi))
        ]
        integrality = np.zeros(self.size) if relax else np.concatenate(self.integer)
        bounds = Bounds(np.concatenate(self.lower), self.upper_bounds() if upper is None else upper)
        return milp(
            objective,
            integrality=integrality,
            bounds=bounds,
            constraints=constraints + (extra or []),
            options=_LP_OPTIONS if relax else _OPTIONS,
        )

    def upper_bounds(self) -> FloatArray:
        """Return the columns' upper bounds."""
        return np.concatenate(self.upper)

    def reduced_costs(self, objective: FloatArray) -> tuple[float, FloatArray, FloatArray] | None:
        """Return the LP relaxation's optimum, its reduced costs at the lower bounds and its solution (linprog).

        Any solution with column j at value v costs at least ``optimum + reduced[j] * (v - lower[j])`` (Lagrangian
        bound: every other term of the dual is >= 0). None when HiGHS reports no optimum.
        """
        from scipy.optimize import linprog  # noqa: PLC0415 - lazy, as in solve
        from scipy.sparse import csr_array, vstack  # noqa: PLC0415

        matrix = self._matrix(csr_array)
        lo, hi = np.concatenate(self.row_lo), np.concatenate(self.row_hi)
        eq, upper = lo == hi, np.isfinite(hi) & (lo != hi)
        lower_rows = np.isfinite(lo) & (lo != hi)
        found = linprog(
            objective,
            A_ub=vstack([matrix[upper], -matrix[lower_rows]]),
            b_ub=np.concatenate([hi[upper], -lo[lower_rows]]),
            A_eq=matrix[eq],
            b_eq=lo[eq],
            bounds=np.column_stack([np.concatenate(self.lower), np.concatenate(self.upper)]),
            method="highs",
            options={"presolve": False},
        )
        if found.status != 0:
            return None
        return float(found.fun), np.asarray(found.lower.marginals, dtype=np.float64), np.asarray(found.x)

    def _matrix(self, csr_array: Any) -> Any:
        """Return the rows as a sparse (rows, columns) matrix."""
        return csr_array(
            (np.concatenate(self.vals), (np.concatenate(self.rows), np.concatenate(self.cols))),
            shape=(self.n_rows, self.size),
        )

    def objective(self) -> FloatArray:
        """Return the cost of every column."""
        return np.concatenate(self.cost)
