"""The joint planner against the same MILP written in CVXPY and solved by HiGHS, on 30 seeded instances.

Used by ``bench_scheduling.py``; it needs cvxpy with HiGHS (highspy), which ``benchmarks/setup_emhass.sh`` installs in
``.venv-bench`` (EMHASS 0.18.7 brings both), so run that script with ``.venv-bench/bin/python``.

Each instance is a two-day, 192-slot curve (the benchmark's price shape with its own noise), two to four runs
(1-3.5 kW, 45 min to 4 h) and, in most instances, an EV (7-11 kW, 10-40 kWh) in random windows, under a fuse whose
limit binds: the loads' own optima together break it, so ``plan_joint`` solves its MILP (with its tie stages). The
CVXPY model is the plain formulation, as a CVXPY user writes it: a binary per allowed start of each run, the run's
per-slot power as a sparse matrix times those binaries, a continuous kW per slot of the EV, the fuse in every slot,
least cost, HiGHS at the same relative gap (1e-9). Its time includes building and compiling the problem, which a
user pays on every replan. Before timing, both must reach the same least cost (1e-7 relative).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
import math
import statistics
import time
from typing import Any

import home_inputs  # noqa: F401 - first: makes the pure core importable without Home Assistant (.venv-bench)
import numpy as np

from custom_components.agentic_hems.prices.curve import PriceCurve
from custom_components.agentic_hems.scheduling import LoadSpec, Plan, plan_contiguous, plan_energy, plan_joint

SLOT = timedelta(minutes=15)
HOURS = 0.25
BASE_KW = 0.5
INSTANCES = 30
TARGET_RATIO = 40.0


@dataclass
class Instance:
    """One joint planning problem: a curve, its loads and a binding fuse (kW)."""

    curve: PriceCurve
    loads: list[LoadSpec]
    limit_kw: float


def instances(start: datetime, count: int = INSTANCES, seed: int = 25) -> list[Instance]:
    """``count`` seeded instances whose limit binds (the loads' own optima together exceed it) and that fit."""
    rng = np.random.default_rng(seed)
    hours = np.arange(192) / 4
    daily = 0.18 + 0.06 * np.sin((hours % 24 - 9) / 24 * 2 * math.pi) + 0.08 * np.exp(-(((hours % 24) - 19) ** 2) / 4)
    found: list[Instance] = []
    while len(found) < count:
        prices = np.round(daily + rng.normal(0, 0.015, 192), 5)
        curve = PriceCurve(start=start, resolution=SLOT, prices=prices, source="bench")
        loads = [_run(rng, start, number) for number in range(int(rng.integers(2, 5)))]
        if rng.random() < 0.8:
            first = int(rng.integers(0, 96))
            loads.append(
                LoadSpec(
                    "ev",
                    power_kw=float(rng.choice([7.4, 11.0])),
                    energy_kwh=float(rng.integers(10, 41)),
                    earliest_start=start + SLOT * first,
                    deadline=start + SLOT * int(rng.integers(first + 48, 193)),
                    contiguous=False,
                )
            )
        limit = max(spec.power_kw for spec in loads) + BASE_KW + float(rng.choice([1.0, 2.0, 3.0, 4.0]))
        case = Instance(curve, loads, limit)
        if _binds(case) and all(
            plan.feasible for plan in plan_joint(curve, loads, power_limit_kw=limit, base_load_kw=BASE_KW)
        ):
            found.append(case)
    return found


def _run(rng: np.random.Generator, start: datetime, number: int) -> LoadSpec:
    first = int(rng.integers(0, 120))
    return LoadSpec(
        f"run{number}",
        power_kw=float(rng.choice([1.0, 1.5, 2.0, 2.2, 3.0, 3.5])),
        duration_min=int(rng.choice([45, 60, 90, 120, 150, 180, 240])),
        earliest_start=start + SLOT * first,
        deadline=start + SLOT * int(rng.integers(first + 24, 193)),
    )


def _binds(case: Instance) -> bool:
    """Whether each load's own optimum, all together, breaks the limit (so plan_joint runs its MILP)."""
    total = np.full(len(case.curve), BASE_KW)
    for spec in case.loads:
        window = {"earliest_start": spec.earliest_start, "deadline": spec.deadline}
        if spec.contiguous:
            plan = plan_contiguous(case.curve, power_kw=spec.power_kw, duration_min=spec.duration_min, **window)
        else:
            plan = plan_energy(case.curve, max_power_kw=spec.power_kw, energy_kwh=spec.energy_kwh, **window)
        if not plan.feasible:
            return False
        total += plan.power_kw
    return bool(np.any(total > case.limit_kw))


def cvxpy_cost(case: Instance) -> float:
    """Least cost (currency) of the instance's plain MILP in CVXPY, solved by HiGHS; raise when it finds none."""
    import cvxpy as cp  # noqa: PLC0415 - only in .venv-bench
    from scipy.sparse import coo_array  # noqa: PLC0415

    curve, n = case.curve, len(case.curve)
    prices = curve.prices
    slot_of = {curve.slot_start(i): i for i in range(n)}
    total: Any = 0
    cost: Any = 0
    constraints = []
    for spec in case.loads:
        first = _first_slot(spec.earliest_start, curve, slot_of)
        last = _last_slot(spec.deadline, curve, slot_of)  # exclusive
        if spec.contiguous:
            k = -(-int(spec.duration_min) // 15)
            starts = np.arange(first, last - k + 1)
            y = cp.Variable(starts.size, boolean=True)
            rows = (starts[:, None] + np.arange(k)).ravel()
            cols = np.repeat(np.arange(starts.size), k)
            cover = coo_array((np.full(rows.size, spec.power_kw), (rows, cols)), shape=(n, starts.size)).tocsr()
            total = total + cover @ y
            cost = cost + (prices * HOURS) @ (cover @ y)
            constraints.append(cp.sum(y) == 1)
        else:
            x = cp.Variable(n)
            cap = np.zeros(n)
            cap[first:last] = spec.power_kw
            constraints += [x >= 0, x <= cap, HOURS * cp.sum(x) == spec.energy_kwh]
            total = total + x
            cost = cost + (prices * HOURS) @ x
    constraints.append(total + BASE_KW <= case.limit_kw)
    problem = cp.Problem(cp.Minimize(cost), constraints)
    problem.solve(solver=cp.HIGHS, mip_rel_gap=1e-9)
    if problem.status != cp.OPTIMAL:
        raise RuntimeError(f"CVXPY: {problem.status}")
    return float(problem.value)


def _first_slot(moment: datetime, curve: PriceCurve, slot_of: dict[datetime, int]) -> int:
    return slot_of.get(moment, 0) if moment > curve.start else 0


def _last_slot(moment: datetime, curve: PriceCurve, slot_of: dict[datetime, int]) -> int:
    return slot_of.get(moment, len(curve)) if moment < curve.end else len(curve)


def ours_cost(case: Instance) -> float:
    """Total cost of ``plan_joint``'s plans (currency)."""
    plans: list[Plan] = plan_joint(case.curve, case.loads, power_limit_kw=case.limit_kw, base_load_kw=BASE_KW)
    return sum(float(plan.cost or 0.0) for plan in plans)


def cpu_median_ms(fn: Any, repeats: int) -> tuple[float, float]:
    """Medians of CPU time (every thread of the process) and wall time of ``fn()`` in ms, after one warm-up."""
    fn()
    cpu, wall = [], []
    for _ in range(repeats):
        began_cpu, began = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - began_cpu)
        wall.append(time.perf_counter() - began)
    return statistics.median(cpu) * 1e3, statistics.median(wall) * 1e3


def compare(start: datetime, repeats: int = 5) -> tuple[list[str], bool]:
    """Time both on every instance; return the table's lines and whether the 40x target (total CPU) is met.

    Raises AssertionError when the two least costs differ by more than 1e-7 relative on any instance.
    """
    cases = instances(start)
    rows = []
    for number, case in enumerate(cases):
        ours, theirs = ours_cost(case), cvxpy_cost(case)
        assert math.isclose(ours, theirs, rel_tol=1e-7, abs_tol=1e-9), f"instance {number}: {ours} != {theirs}"
        rows.append(
            (cpu_median_ms(lambda c=case: ours_cost(c), repeats), cpu_median_ms(lambda c=case: cvxpy_cost(c), repeats))
        )
    ours_cpu = sum(row[0][0] for row in rows)
    ref_cpu = sum(row[1][0] for row in rows)
    ours_wall = sum(row[0][1] for row in rows)
    ref_wall = sum(row[1][1] for row in rows)
    ratios = [row[1][0] / row[0][0] for row in rows]
    ratio = ref_cpu / ours_cpu
    lines = [
        f"joint planner vs CVXPY+HiGHS, {len(cases)} instances (same least cost on each), sums of per-instance medians:",
        f"{'':<30} {'CPU ms':>10} {'wall ms':>10}",
        f"{'plan_joint (with tie stages)':<30} {ours_cpu:>10.1f} {ours_wall:>10.1f}",
        f"{'CVXPY + HiGHS (cost only)':<30} {ref_cpu:>10.1f} {ref_wall:>10.1f}",
        (
            f"ratio (CVXPY / ours): CPU {ratio:.1f}x, wall {ref_wall / ours_wall:.1f}x; per instance (CPU) median "
            f"{statistics.median(ratios):.1f}x, lowest {min(ratios):.1f}x; target CPU >= {TARGET_RATIO:g}x: "
            f"{'pass' if ratio >= TARGET_RATIO else 'FAIL'}"
        ),
    ]
    return lines, ratio >= TARGET_RATIO
