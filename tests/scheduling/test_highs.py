"""scheduling.highs (HiGHS through highspy) against scipy.optimize's milp and linprog, a second path to HiGHS.

scipy builds its own sparse matrix and calls its own copy of HiGHS, so agreement on random models checks the
column-wise matrix, the bounds, the statuses and the duals that the planners' pruning relies on.
"""

from __future__ import annotations

import json
from pathlib import Path
import subprocess
import sys
import time

import numpy as np
import pytest
from scipy.optimize import Bounds, LinearConstraint, linprog, milp
from scipy.sparse import coo_array

from custom_components.agentic_hems.scheduling.highs import LIMITED, OPTIMAL, Rows, columnwise, solve, stack
from custom_components.agentic_hems.scheduling.milp import MilpModel

ROOT = Path(__file__).parent.parent.parent


def _model(seed: int) -> tuple[Rows, np.ndarray, np.ndarray, np.ndarray]:
    """A random model with duplicate entries, one-sided and two-sided rows, and mixed integrality."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(2, 12)), int(rng.integers(1, 8))
    k = int(rng.integers(1, n * m + 1))
    lo = np.where(rng.random(m) < 0.5, -np.inf, rng.integers(-5, 1, m).astype(np.float64))
    rows = Rows(
        rng.integers(0, m, k),
        rng.integers(0, n, k),
        rng.integers(-3, 5, k).astype(np.float64),
        lo,
        rng.integers(0, 10, m).astype(np.float64),
    )
    return rows, rng.normal(size=n), rng.integers(1, 4, n).astype(np.float64), (rng.random(n) < 0.5).astype(float)


def _matrix(rows: Rows, n: int) -> np.ndarray:
    return coo_array((rows.vals, (rows.rows, rows.cols)), shape=(rows.count, n)).toarray()


@pytest.mark.parametrize("seed", range(60))
def test_milp_matches_scipy(seed: int) -> None:
    rows, cost, upper, integer = _model(seed)
    n = cost.size
    a = _matrix(rows, n)
    expected = milp(
        cost,
        integrality=integer,
        bounds=Bounds(0, upper),
        constraints=[LinearConstraint(a, rows.lo, rows.hi)],
        options={"mip_rel_gap": 1e-9},
    )
    found = solve(cost, np.zeros(n), upper, rows, integer=integer, options={"mip_rel_gap": 1e-9, "presolve": "off"})
    assert found.status == expected.status
    if expected.status == OPTIMAL:
        assert found.x is not None and found.fun == pytest.approx(expected.fun, abs=1e-7)
        assert np.all(a @ found.x <= rows.hi + 1e-7) and np.all(a @ found.x >= rows.lo - 1e-7)
        assert np.all(np.abs(found.x[integer > 0] - np.round(found.x[integer > 0])) <= 1e-7)
        assert float(cost @ found.x) == pytest.approx(found.fun, abs=1e-9)


@pytest.mark.parametrize("seed", range(60))
def test_lp_duals_match_linprog(seed: int) -> None:
    rows, cost, upper, _ = _model(seed)
    n = cost.size
    a = _matrix(rows, n)
    upper_rows, lower_rows = np.isfinite(rows.hi), np.isfinite(rows.lo)
    expected = linprog(
        cost,
        A_ub=np.vstack([a[upper_rows], -a[lower_rows]]),
        b_ub=np.concatenate([rows.hi[upper_rows], -rows.lo[lower_rows]]),
        bounds=np.column_stack([np.zeros(n), upper]),
        method="highs",
        options={"presolve": False},
    )
    found = solve(cost, np.zeros(n), upper, rows, options={"presolve": "off"})
    assert found.status == expected.status
    if expected.status == OPTIMAL:
        assert found.fun == pytest.approx(expected.fun, abs=1e-7)
        assert found.lower_dual == pytest.approx(expected.lower.marginals, abs=1e-7)
        assert found.row_dual is not None
        # strong duality with HiGHS's sign convention (the one LpBound and MilpModel.lower_bound assume): the
        # Lagrangian of the row duals, each row at the bound its dual's sign picks, reaches the optimum
        y = found.row_dual
        reduced = cost - rows.transpose_dot(y, n)
        with np.errstate(invalid="ignore"):
            rhs = np.where(y < 0, rows.hi, np.where(y > 0, rows.lo, 0.0))
        assert float(y @ rhs + np.sum(np.minimum(reduced, 0.0) * upper)) == pytest.approx(expected.fun, abs=1e-6)


@pytest.mark.parametrize("seed", range(20))
def test_columnwise_is_scipys_csc(seed: int) -> None:
    rows, cost, _, _ = _model(seed)
    starts, index, value = columnwise(rows, cost.size)
    csc = coo_array((rows.vals, (rows.rows, rows.cols)), shape=(rows.count, cost.size)).tocsc()
    csc.sum_duplicates()
    assert starts.tolist() == csc.indptr.tolist() and index.tolist() == csc.indices.tolist()
    assert value.tolist() == csc.data.tolist()


def test_rows_helpers() -> None:
    dense = np.array([[1.0, 0.0, 2.0], [0.0, -1.0, 0.0]])
    rows = Rows.dense(dense, -np.inf, [4.0, 5.0])
    x, y = np.array([1.0, 2.0, 3.0]), np.array([0.5, -2.0])
    assert rows.dot(x).tolist() == (dense @ x).tolist()
    assert rows.transpose_dot(y, 3).tolist() == (dense.T @ y).tolist()
    both = stack([rows, Rows.dense(dense[1], 1.0, 1.0)])
    assert both.count == 3 and both.dot(x).tolist() == [7.0, -2.0, -2.0]
    flipped = both.select(np.array([True, False, True]), sign=-1.0)
    assert flipped.dot(x).tolist() == [-7.0, 2.0] and flipped.lo.tolist() == [-4.0, -1.0]
    assert flipped.hi.tolist() == [np.inf, -1.0]


PROBE = """
import json, sys
from datetime import UTC, datetime, timedelta
import numpy as np
from custom_components.agentic_hems.prices.curve import PriceCurve
from custom_components.agentic_hems.scheduling import LoadSpec, joint, plan_joint
joint.SEARCH = {few}
t0 = datetime(2026, 1, 5, tzinfo=UTC)
curve = PriceCurve(start=t0, resolution=timedelta(minutes=15), prices=np.tile([0.3, 0.1, 0.2, 0.25], 24), source="t")
loads = [LoadSpec(name, power_kw=2.0, duration_min=60, earliest_start=t0, deadline=t0 + timedelta(minutes=150))
         for name in ("a", "b")]
plans = plan_joint(curve, loads, power_limit_kw=3.0)
print(json.dumps({{"loaded": sorted(m for m in ("scipy", "highspy") if m in sys.modules),
                  "starts": [p.start.isoformat() for p in plans], "costs": [p.cost for p in plans]}}))
"""


def _plan_in_fresh_process(few: bool) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(few=few)], cwd=ROOT, capture_output=True, text=True, check=True
    )
    found: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return found


HOME_PROBE = """
import json, sys
from datetime import UTC, datetime, timedelta
import numpy as np
from custom_components.agentic_hems.prices.curve import PriceCurve
from custom_components.agentic_hems.scheduling import LoadSpec
from custom_components.agentic_hems.scheduling.home import plan_home
t0 = datetime(2026, 1, 5, tzinfo=UTC)
curve = PriceCurve(start=t0, resolution=timedelta(minutes=15), prices=np.tile([0.3, 0.1, 0.2, 0.25], 24), source="t")
loads = [LoadSpec(name, power_kw=2.0, duration_min=60, earliest_start=t0, deadline=t0 + timedelta(hours=6))
         for name in ("a", "b")]
plan = plan_home(curve, loads, base_load_kw=0.5, fuse_kw=3.0)
print(json.dumps({"loaded": sorted(m for m in ("scipy", "highspy") if m in sys.modules)}))
"""


def test_the_home_plan_solves_with_highspy_alone() -> None:
    """Two runs under a 3 kW fuse beside 0.5 kW of base load: the whole-home MILP loads highspy, never scipy."""
    out = subprocess.run([sys.executable, "-c", HOME_PROBE], cwd=ROOT, capture_output=True, text=True, check=True)
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["loaded"] == ["highspy"]


def test_joint_plans_load_neither_scipy_nor_more_than_they_need() -> None:
    """Two runs that cannot overlap: few start combinations, so no solver is loaded; the MILP loads highspy alone.

    Both give the same plans (the earliest of the cheapest, apart under the 3 kW limit).
    """
    few, solved = _plan_in_fresh_process(True), _plan_in_fresh_process(False)
    assert few["loaded"] == [] and solved["loaded"] == ["highspy"]
    assert few["starts"] == solved["starts"] and few["costs"] == pytest.approx(solved["costs"], abs=1e-12)


@pytest.mark.parametrize("seed", range(40))
def test_mip_start_keeps_the_optimum(seed: int) -> None:
    """A feasible start (another objective's optimum), an infeasible one and a stale one: the cold solve's optimum."""
    rows, cost, upper, integer = _model(seed)
    n = cost.size
    options = {"mip_rel_gap": 1e-9}
    cold = solve(cost, np.zeros(n), upper, rows, integer=integer, options=options)
    other = solve(-cost, np.zeros(n), upper, rows, integer=integer, options=options)
    rng = np.random.default_rng(seed)
    starts = [
        other.x,
        upper + rng.integers(1, 3, n),  # above every bound
        np.full(n, np.nan),
        np.zeros(n + 1),  # a stale start from a larger model
    ]
    for start in starts:
        warm = solve(cost, np.zeros(n), upper, rows, integer=integer, options=options, start=start)
        assert warm.status == cold.status
        if cold.status == OPTIMAL:
            assert cold.fun is not None and warm.fun == pytest.approx(cold.fun, rel=1e-9, abs=1e-9)
            a = _matrix(rows, n)
            assert warm.x is not None and np.all(a @ warm.x <= rows.hi + 1e-7)
            assert np.all(a @ warm.x >= rows.lo - 1e-7)


def _knapsack(seed: int) -> tuple[Rows, np.ndarray, np.ndarray]:
    """50 binaries, three weight rows: least ``cost`` (negative values), a MILP HiGHS does not settle at its root."""
    rng = np.random.default_rng(seed)
    n, m = 50, 3
    weights = rng.integers(5, 40, (m, n)).astype(np.float64)
    rows = Rows(
        np.repeat(np.arange(m), n),
        np.tile(np.arange(n), m),
        weights.ravel(),
        np.full(m, -np.inf),
        weights.sum(axis=1) / 3,
    )
    return rows, -(weights.mean(axis=0) + rng.integers(0, 10, n)), np.ones(n)


@pytest.mark.parametrize("seed", range(5))
def test_a_passed_stop_at_keeps_the_plan_in_hand_and_stops_at_the_first_plan_without(seed: int) -> None:
    """Past ``stop_at`` HiGHS stops as soon as it holds a plan: given a feasible start (take nothing) it returns at
    once, LIMITED, a feasible plan no cheaper than the optimum; with no start it stops at its first plan, dearer
    than the optimum on these knapsacks (HiGHS is deterministic: the same first plan every run)."""
    rows, cost, upper = _knapsack(seed)
    n, a = cost.size, _matrix(rows, cost.size)
    options = {"mip_rel_gap": 1e-9, "presolve": "off"}
    exact = solve(cost, np.zeros(n), upper, rows, integer=upper, options=options)
    assert exact.status == OPTIMAL and exact.fun is not None and exact.fun < -1
    past = time.monotonic() - 1.0
    kept = solve(cost, np.zeros(n), upper, rows, integer=upper, options=options, start=np.zeros(n), stop_at=past)
    found = solve(cost, np.zeros(n), upper, rows, integer=upper, options=options, stop_at=past)
    assert kept.status == LIMITED and kept.fun is not None and kept.fun >= exact.fun - 1e-9
    assert found.status == LIMITED and found.fun is not None and found.fun > exact.fun + 1
    for plan in (kept.x, found.x):
        assert plan is not None and np.all(a @ plan <= rows.hi + 1e-7)
        assert np.all(np.abs(plan - np.round(plan)) <= 1e-7)


def test_a_spent_deadline_stops_a_planless_milp_at_its_first_plan_and_marks_it_limited() -> None:
    """``MilpModel``: with its deadline spent, a MILP without a plan in hand still returns one (its first) and sets
    ``limited``; given that plan as a start, it returns at once and says so too; with no deadline, the optimum."""
    rows, cost, upper = _knapsack(0)
    model = MilpModel()
    items = model.add(cost.size, upper, cost, integer=True)
    model.row([(rows.rows, items[rows.cols], rows.vals)], rows.lo, rows.hi, rows.count)
    exact = model.solve(cost)
    assert exact.status == OPTIMAL and not model.limited
    model.deadline = time.monotonic() - 1.0
    first = model.solve(cost)
    assert first.status == LIMITED and model.limited and first.fun is not None and exact.fun is not None
    assert first.fun > exact.fun + 1
    model.limited = False
    again = model.solve(cost, start=first.x)
    assert model.limited and again.fun is not None and again.fun >= exact.fun - 1e-9


POOL_PROBE = """
import json, sys
import numpy as np, highspy
from custom_components.agentic_hems.scheduling.highs import Rows, solve

def foreign(threads):
    h = highspy._core._Highs()
    h.setOptionValue("output_flag", False)
    if threads:
        h.setOptionValue("threads", threads)
    h.addVar(0, 1)
    h.changeColIntegrality(0, highspy.HighsVarType.kInteger)
    h.changeColCost(0, -1)
    return h.run() == highspy.HighsStatus.kOk

first = int(sys.argv[1])
before = foreign(first) if first else None
rows = Rows(np.array([0, 0]), np.array([0, 1]), np.array([1.0, 1.0]), np.array([-np.inf]), np.array([1.5]))
found = solve(np.array([-1.0, -2.0]), np.zeros(2), np.ones(2), rows, integer=np.array([1, 1]))
print(json.dumps({"before": before, "status": found.status, "x": found.x.tolist(), "after": foreign(0)}))
"""


@pytest.mark.parametrize("first", [0, 2])
def test_a_solve_runs_on_one_thread_or_on_the_pool_another_highspy_user_started(first: int) -> None:
    """HiGHS keeps one thread pool per process. A solve asks for one thread; where another user of highspy started a
    pool of two threads first (``first``), HiGHS refuses that and the solve runs again on the pool: the optimum
    (x = [0, 1], cost -2) either way, and a later user with HiGHS's default threads still runs."""
    out = subprocess.run(
        [sys.executable, "-c", POOL_PROBE, str(first)], cwd=ROOT, capture_output=True, text=True, check=True
    )
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found == {"before": True if first else None, "status": OPTIMAL, "x": [0.0, 1.0], "after": True}
