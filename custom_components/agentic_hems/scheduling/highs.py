"""HiGHS through its own Python API (highspy) for the planners' MILPs and LPs, from plain numpy arrays.

The rows come in coordinates (:class:`Rows`) and go to HiGHS as a column-wise matrix built here, so neither
scipy.sparse nor scipy.optimize is loaded: on this project's benchmark (``benchmarks/bench_startup.py``) they added
about 35 MB of resident memory to an entry, highspy about 8 MB. highspy is imported lazily, inside :func:`solve`.
Status numbers are scipy.optimize.milp's, which the planners compare.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
import time
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ..prices.curve import FloatArray
from .windows import IntArray

OPTIMAL: Final = 0
# stopped at its time or iteration limit, or past ``stop_at``; ``x`` is the best solution found, if any
LIMITED: Final = 1
INFEASIBLE: Final = 2
UNBOUNDED: Final = 3
FAILED: Final = 4  # any other end (a solver error, an empty model...)
# HiGHS's threads. Its parallel MILP search saved no wall clock on the benchmark's homes and cost up to 30 % more CPU
# (benchmarks/README.md). HiGHS starts one thread pool per process: where another user of highspy started it with
# more threads first, HiGHS refuses a run asking for one, and the solve runs again on that pool. (In turn, a user that
# asks HiGHS for more threads after this pool started is refused; one on HiGHS's default runs on it.)
THREADS: Final = 1


@dataclass(frozen=True)
class Rows:
    """Sparse rows ``lo <= A x <= hi`` in coordinates: entry k adds ``vals[k] * x[cols[k]]`` to row ``rows[k]``.

    Entries at the same place add up. ``lo`` and ``hi`` have one value per row (-inf or inf for none).
    """

    rows: IntArray
    cols: IntArray
    vals: FloatArray
    lo: FloatArray
    hi: FloatArray

    @classmethod
    def dense(cls, matrix: npt.ArrayLike, lo: npt.ArrayLike, hi: npt.ArrayLike) -> Rows:
        """Return the rows of a dense (rows, columns) matrix; ``lo`` and ``hi`` broadcast to one per row."""
        array = np.atleast_2d(np.asarray(matrix, dtype=np.float64))
        rows, cols = np.nonzero(array)
        count = array.shape[0]
        return cls(
            rows.astype(np.intp),
            cols.astype(np.intp),
            array[rows, cols],
            np.broadcast_to(np.asarray(lo, dtype=np.float64), (count,)),
            np.broadcast_to(np.asarray(hi, dtype=np.float64), (count,)),
        )

    @property
    def count(self) -> int:
        """Return the number of rows."""
        return int(self.lo.size)

    def dot(self, x: FloatArray) -> FloatArray:
        """Return ``A x`` (one value per row)."""
        return np.bincount(self.rows, weights=self.vals * x[self.cols], minlength=self.count).astype(np.float64)

    def transpose_dot(self, y: FloatArray, size: int) -> FloatArray:
        """Return ``A^T y`` over ``size`` columns."""
        return np.bincount(self.cols, weights=self.vals * y[self.rows], minlength=size).astype(np.float64)

    def select(self, mask: npt.NDArray[np.bool_], sign: float = 1.0) -> Rows:
        """Return the rows ``mask`` selects, renumbered in order, with their entries and bounds times ``sign``."""
        number = np.cumsum(mask) - 1
        keep = mask[self.rows]
        lo, hi = (self.lo[mask], self.hi[mask]) if sign > 0 else (-self.hi[mask], -self.lo[mask])
        return Rows(number[self.rows[keep]], self.cols[keep], sign * self.vals[keep], lo, hi)


def stack(parts: Sequence[Rows]) -> Rows:
    """Return the rows of ``parts`` one below the other."""
    offsets = np.cumsum([0, *(part.count for part in parts)])
    return Rows(
        np.concatenate([np.zeros(0, dtype=np.intp), *(p.rows + o for p, o in zip(parts, offsets, strict=False))]),
        np.concatenate([np.zeros(0, dtype=np.intp), *(p.cols for p in parts)]),
        np.concatenate([np.zeros(0), *(p.vals for p in parts)]),
        np.concatenate([np.zeros(0), *(p.lo for p in parts)]),
        np.concatenate([np.zeros(0), *(p.hi for p in parts)]),
    )


def columnwise(rows: Rows, size: int) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], FloatArray]:
    """Return ``rows``' matrix over ``size`` columns as HiGHS's column-wise arrays (starts, row indices, values).

    Row indices ascend within each column and entries at the same place are summed, as scipy's CSC form has them.
    """
    order = np.lexsort((rows.rows, rows.cols))
    cols, rws, vals = rows.cols[order], rows.rows[order], rows.vals[order]
    first = np.ones(cols.size, dtype=bool)
    first[1:] = (cols[1:] != cols[:-1]) | (rws[1:] != rws[:-1])
    at = np.flatnonzero(first)
    summed = np.add.reduceat(vals, at) if at.size else vals
    starts = np.concatenate(([0], np.cumsum(np.bincount(cols[at], minlength=size))))
    return starts.astype(np.int32), rws[at].astype(np.int32), summed.astype(np.float64)


@dataclass(frozen=True)
class Result:
    """What HiGHS found: scipy's status number, a message, and the solution where there is one.

    ``row_dual`` (one per row), ``col_dual`` (one per column), :attr:`lower_dual` (each column's dual where the
    column is nonbasic at its lower bound, else 0: scipy linprog's ``lower.marginals``) and ``basis`` (HiGHS's, a
    start for a like LP) are given for an optimal LP only.
    """

    status: int
    message: str
    x: FloatArray | None = None
    fun: float | None = None
    row_dual: FloatArray | None = None
    col_dual: FloatArray | None = None  # every column's dual (an optimal LP)
    basis: Any = None

    @cached_property
    def lower_dual(self) -> FloatArray | None:
        """Return ``col_dual`` where the column is nonbasic at its lower bound, else 0; None without an LP basis.

        Read from the basis on first use only: on a planner's small LPs it cost about as much as HiGHS's own
        reading of the solution.
        """
        if self.col_dual is None or self.basis is None or not self.col_dual.size:
            return self.col_dual
        import highspy  # noqa: PLC0415 - loaded already: a basis comes from it

        lower = highspy.HighsBasisStatus.kLower
        at_lower = np.array([status == lower for status in self.basis.col_status])
        dual: FloatArray = np.where(at_lower, self.col_dual, 0.0)
        return dual


def solve(
    cost: FloatArray,
    lower: FloatArray,
    upper: FloatArray,
    rows: Rows,
    *,
    integer: npt.NDArray[Any] | None = None,
    options: Mapping[str, float | str] | None = None,
    start: FloatArray | None = None,
    basis: Any = None,
    stop_at: float | None = None,
) -> Result:
    """Minimise ``cost @ x`` subject to ``rows`` and ``lower <= x <= upper``, ``x[integer > 0]`` integral.

    Args:
        cost: the objective, one value per column.
        lower: the columns' lower bounds (-inf for none).
        upper: the columns' upper bounds (inf for none).
        rows: the constraints, over the same columns.
        integer: nonzero where a column is integral; None (or all zero) for an LP.
        options: HiGHS options by name (``presolve`` is "on" or "off"); HiGHS's output is always off.
        start: a MIP start, one value per column (a MILP only; NaN or another size: none). Only its integer
            columns (rounded) are given: HiGHS completes them with an LP and takes the result as its first incumbent
            when that is feasible, else ignores it, so a wrong or stale start costs time, never the optimum.
        basis: an LP's start (an LP only): a ``Result.basis`` of an LP with the same columns and rows.
        stop_at: a ``time.monotonic()`` instant (a MILP only) after which HiGHS stops as soon as it has a plan
            (status LIMITED); before its first plan it goes on, to its ``time_limit``.

    Returns:
        The :class:`Result`: a MILP that stops at its limit keeps its best solution (status LIMITED), an LP gives
        its duals; no ``x`` when nothing was found.

    Raises:
        ValueError: an option HiGHS does not know or whose value it refuses.

    """
    import highspy  # noqa: PLC0415 - lazy: the planners run in executor jobs, and most plans need no solver

    size = int(cost.size)
    # the bare solver, as scipy uses it: highspy.Highs's callbacks print HiGHS's banner before any option is set
    highs = highspy._core._Highs()  # noqa: SLF001
    highs.setOptionValue("output_flag", False)
    highs.setOptionValue("threads", THREADS)
    for name, setting in (options or {}).items():
        if highs.setOptionValue(name, setting) != highspy.HighsStatus.kOk:
            raise ValueError(f"HiGHS refused option {name}={setting!r}")
    mip = integer is not None and bool(np.any(integer))
    whole = (np.asarray(integer) > 0).astype(np.int32) if mip else np.zeros(size, dtype=np.int32)
    if _pass(highspy, highs, (cost, lower, upper), rows, whole) == highspy.HighsStatus.kError:
        return Result(FAILED, "HiGHS refused the model")
    if mip and start is not None and start.size == size and np.all(np.isfinite(start)):
        _start(highs, start, np.asarray(integer))
    if basis is not None and not mip:
        highs.setBasis(basis)  # a basis HiGHS finds invalid is dropped (HiGHS starts from scratch)
    if mip and stop_at is not None:
        _stop_with_a_plan(highspy, highs, stop_at)
    if highs.run() == highspy.HighsStatus.kError and highs.getModelStatus() == highspy.HighsModelStatus.kNotset:
        highs.setOptionValue("threads", 0)  # another pool started first (above): use it
        highs.run()
    return _result(highspy, highs, mip=mip)


def widened(basis: Any, count: int) -> Any:
    """Return ``basis`` (a :attr:`Result.basis`) for ``count`` rows, the rows it lacks basic; None for None.

    A start for an LP that adds rows (their slacks basic) to the one whose basis it was.
    """
    if basis is None:
        return None
    import highspy  # noqa: PLC0415 - lazy, as in solve

    out = highspy.HighsBasis()
    out.col_status = list(basis.col_status)
    out.row_status = [*basis.row_status, *[highspy.HighsBasisStatus.kBasic] * (count - len(basis.row_status))]
    out.valid = True
    return out


def _pass(highspy: Any, highs: Any, columns: tuple[FloatArray, FloatArray, FloatArray], rows: Rows, whole: Any) -> Any:
    """Pass HiGHS the model: ``columns`` (cost, lower, upper), ``rows`` and ``whole`` (1 per integer column)."""
    cost, lower, upper = columns
    size = int(cost.size)
    starts, index, value = columnwise(rows, size)
    return highs.passModel(
        size,
        rows.count,
        int(value.size),
        int(highspy.MatrixFormat.kColwise),
        int(highspy.ObjSense.kMinimize),
        0.0,
        np.asarray(cost, dtype=np.float64),
        np.asarray(lower, dtype=np.float64),
        np.asarray(upper, dtype=np.float64),
        np.asarray(rows.lo, dtype=np.float64),
        np.asarray(rows.hi, dtype=np.float64),
        starts,
        index,
        value,
        whole,
    )


def _stop_with_a_plan(highspy: Any, highs: Any, stop_at: float) -> None:
    """Have HiGHS's MIP interrupt itself once ``stop_at`` (``time.monotonic()``) has passed and it holds a plan."""

    def interrupt(_kind: int, _message: str, out: Any, answer: Any, _data: Any) -> None:
        if out.mip_primal_bound < highspy.kHighsInf and time.monotonic() >= stop_at:
            answer.user_interrupt = True

    highs.setCallback(interrupt, None)
    highs.startCallback(highspy.cb.HighsCallbackType.kCallbackMipInterrupt)


def _start(highs: Any, start: FloatArray, integer: npt.NDArray[Any]) -> None:
    """Give HiGHS ``start``'s integer columns, rounded, as a partial MIP start (HiGHS completes the rest)."""
    whole = np.flatnonzero(integer > 0).astype(np.int32)
    highs.setSolution(int(whole.size), whole, np.round(np.asarray(start, dtype=np.float64)[whole]))


def _result(highspy: Any, highs: Any, *, mip: bool) -> Result:
    """Read the run's status and solution as scipy's milp and linprog do."""
    model = highs.getModelStatus()
    kind = highspy.HighsModelStatus
    code = {
        kind.kOptimal: OPTIMAL,
        kind.kTimeLimit: LIMITED,
        kind.kIterationLimit: LIMITED,
        kind.kInterrupt: LIMITED,  # stop_at passed with a plan in hand
        kind.kInfeasible: INFEASIBLE,
        kind.kModelError: INFEASIBLE,
        kind.kUnbounded: UNBOUNDED,
    }.get(model, FAILED)
    message = f"{highs.modelStatusToString(model)} (HiGHS status {int(model)})"
    info = highs.getInfo()
    # A MILP stopped at its limit has a plan only when HiGHS marks its primal solution feasible: without presolve and
    # with a MIP start, HiGHS stopped within a millisecond reports the objective of an infeasible point.
    found = model == kind.kOptimal or (
        mip
        and model in (kind.kTimeLimit, kind.kIterationLimit, kind.kSolutionLimit, kind.kInterrupt)
        and info.objective_function_value != highspy.kHighsInf
        and info.primal_solution_status == highspy.SolutionStatus.kSolutionStatusFeasible
    )
    if not found:
        return Result(code, message)
    solution = highs.getSolution()
    x = np.array(solution.col_value, dtype=np.float64)
    if mip:
        return Result(code, message, x, float(info.objective_function_value))
    return Result(
        code,
        message,
        x,
        float(info.objective_function_value),
        np.array(solution.row_dual, dtype=np.float64),
        np.array(solution.col_dual, dtype=np.float64),
        highs.getBasis(),
    )
