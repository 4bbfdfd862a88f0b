"""A replan warm-started from the previous plan (``plan_home(previous=...)``) against the same replan cold.

The oracle is the cold plan of the same inputs: both are exact, so their net costs agree; the warm start may only
change the time (and, at a spent time bound, which plan is found).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
import math

import numpy as np
import pytest

from custom_components.agentic_hems.scheduling.home import plan_home
from custom_components.agentic_hems.scheduling.home_build import build
from custom_components.agentic_hems.scheduling.home_model import HomeBattery, HomeHeatPump, HomePlan
from custom_components.agentic_hems.scheduling.highs import solve
from custom_components.agentic_hems.scheduling.home_warm import carried, warm_start
from custom_components.agentic_hems.scheduling.plan import LoadSpec

from .conftest import EXACT_S, SLOT, T0, home_inputs, make_curve
from .test_home_time_bound import _home as runs_home

N = 48


def _home(seed: int) -> dict:
    """Half a day: random prices, PV, a battery, two runs, an EV with a least power, a fixed-speed heat pump."""
    rng = np.random.default_rng(seed)
    hours = np.arange(N) / 4
    loads = [
        LoadSpec(name, power_kw=kw, duration_min=minutes, earliest_start=T0, deadline=T0 + timedelta(hours=12))
        for name, kw, minutes in (("dishwasher", 2.0, 60), ("washer", 2.2, 45))
    ]
    loads.append(
        LoadSpec("ev", power_kw=7.4, min_power_kw=4.1, energy_kwh=6.0, contiguous=False, earliest_start=T0,
                 deadline=T0 + timedelta(hours=12))
    )
    pump = HomeHeatPump(
        name="hp", ua_kw_per_k=0.25, capacity_kwh_per_k=8.0, min_kw=2.0, max_kw=2.0, initial_temp_c=20.5,
        ambient_c=np.full(N, 2.0), cop=np.full(N, 3.0), comfort_low_c=np.full(N, 19.5),
        comfort_high_c=np.full(N, 23.0), min_run_slots=3, min_off_slots=2,
    )
    return {
        "curve": make_curve(np.round(rng.uniform(-0.05, 0.40, N), 4)),
        "loads": loads,
        "batteries": [HomeBattery(name="b", capacity_kwh=5.0, charge_kw=2.5, discharge_kw=2.5, initial_soc_pct=50.0)],
        "pv_kw": 5.0 * np.clip(np.sin(hours / 12 * math.pi), 0.0, None) * rng.uniform(0.4, 1.0, N),
        "base_load_kw": np.round(rng.uniform(0.2, 0.8, N), 3),
        "export_price": 0.05,
        "fuse_kw": 11.0,
        "heat_pumps": [pump],
    }


def _next(home: dict, plan: HomePlan) -> dict:
    """The same home one slot later, from the state ``plan`` leaves after its first slot (a run started stays)."""
    pump = home["heat_pumps"][0]
    running = plan.heat_kw["hp"][0] > 1e-6
    loads = [replace(spec, earliest_start=T0 + SLOT) for spec in home["loads"] if plan.starts.get(spec.name) != T0]
    for spec in loads:
        if not spec.contiguous:
            loads[loads.index(spec)] = replace(spec, energy_kwh=spec.energy_kwh - 0.25 * plan.load_kw["ev"][0])
    fixed = {
        spec.name: np.where(np.arange(N - 1) < spec.duration_min // 15 - 1, spec.power_kw, 0.0)
        for spec in home["loads"]
        if plan.starts.get(spec.name) == T0
    }
    return {
        **home,
        "curve": make_curve(home["curve"].prices[1:], T0 + SLOT),
        "loads": loads,
        "batteries": [replace(home["batteries"][0], initial_soc_pct=20.0 * float(plan.soc_kwh["b"][1]))],
        "pv_kw": home["pv_kw"][1:],
        "base_load_kw": home["base_load_kw"][1:],
        "heat_pumps": [
            replace(
                pump, initial_temp_c=float(plan.temp_c["hp"][1]), ambient_c=pump.ambient_c[1:], cop=pump.cop[1:],
                comfort_low_c=pump.comfort_low_c[1:], comfort_high_c=pump.comfort_high_c[1:],
                initial_on_slots=1 if running else 0, initial_off_slots=0 if running else 1,
            )
        ],
        "fixed_kw": fixed or None,
    }


def replans(home: dict) -> tuple[dict, HomePlan, HomePlan]:
    """Plan ``home``, then replan one slot on (:func:`_next`) cold and warm from that plan: (arguments, cold, warm).

    Every plan gets ``EXACT_S``, so the three are proven whatever the machine's load.
    """
    first = plan_home(**home, time_limit_s=EXACT_S)
    following = _next(home, first)
    cold = plan_home(**following, time_limit_s=EXACT_S)
    return following, cold, plan_home(**following, previous=first, time_limit_s=EXACT_S)


@pytest.mark.parametrize("seed", range(8))
def test_a_warm_replan_costs_what_the_cold_replan_costs(seed: int) -> None:
    """Replan one slot on, from the state the first plan leaves: warm from it or cold, the same net cost."""
    _, cold, warm = replans(_home(seed))
    assert not cold.time_limited and not warm.time_limited
    assert warm.net_cost == pytest.approx(cold.net_cost, rel=1e-9, abs=1e-9)
    assert warm.starts == cold.starts  # the earliest among the ties, whatever plan was in hand


@pytest.mark.parametrize("seed", range(4))
def test_a_stale_previous_plan_changes_nothing(seed: int) -> None:
    """A previous plan of other prices, another day or another resolution: the replan costs what the cold one does."""
    home = _home(seed)
    cold = plan_home(**home, time_limit_s=EXACT_S)
    other = plan_home(**{**home, "curve": make_curve(home["curve"].prices[::-1])})
    later = replace(other, start=other.start + timedelta(days=1))
    hourly = replace(other, resolution=timedelta(hours=1))
    for previous in (other, later, hourly):
        warm = plan_home(**home, previous=previous, time_limit_s=EXACT_S)
        assert warm.net_cost == pytest.approx(cold.net_cost, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("seed", [1, 3, 6])
def test_at_a_spent_time_bound_the_previous_optimum_is_kept(seed: int) -> None:
    """With no time left, a replan of unchanged inputs warm-started from their optimum returns that optimum; cold,
    it returns a dearer plan (a day whose LP relaxation splits the runs: the dive's plan is not optimal). The warm
    replan needs no MILP where the optimum lies within the plan gap of the LP bound (seeds 1 and 6), so it is not
    time-limited there."""
    home = runs_home(seed)
    exact = plan_home(**home, time_limit_s=EXACT_S)
    warm = plan_home(**home, time_limit_s=0.0, previous=exact)
    cold = plan_home(**home, time_limit_s=0.0)
    assert cold.time_limited and warm.time_limited == (seed == 3)
    assert warm.net_cost == pytest.approx(exact.net_cost, abs=1e-6)  # HiGHS's tolerances
    assert cold.net_cost > exact.net_cost + 1e-3


def test_the_previous_plan_is_carried_one_slot_on() -> None:
    """The binaries read off a plan one slot earlier: the heat pump's on/off and the EV's, one slot on; each run's
    start binary at its planned start; nothing for slots past the previous plan."""
    home = _home(3)
    first = plan_home(**home)
    following = _next(home, first)
    inputs = home_inputs(following)
    model, cols = build(inputs)
    decided = carried(inputs, cols, model.size, first)
    on = decided[cols.heat[0].on]
    assert np.array_equal(on, (first.heat_kw["hp"][1:] > 1e-6).astype(float))
    ev = next(load for load in inputs.loads if load.spec.name == "ev")
    assert np.array_equal(decided[cols.on["ev"]], (first.load_kw["ev"][ev.keys + 1] > 4.1 - 1e-6).astype(float))
    for load, columns in zip(inputs.loads, cols.loads, strict=True):
        if load.slots:
            at = int((first.starts[load.spec.name] - inputs.start) / SLOT)
            assert np.array_equal(decided[columns], (load.keys == at).astype(float))
    moved = carried(inputs, cols, model.size, replace(first, start=first.start - timedelta(hours=11)))
    assert np.isnan(moved[cols.heat[0].on][4:]).all()  # 11 h earlier: the previous plan covers 4 of these slots


@pytest.mark.parametrize("seed", [1, 3, 6])
def test_a_milp_stopped_at_once_returns_a_feasible_plan_or_none(seed: int) -> None:
    """HiGHS given a MIP start, without presolve and a millisecond: what ``highs.solve`` returns as a plan meets every
    row and bound (HiGHS then reports the objective of an infeasible point, which must not pass for a plan)."""
    home = runs_home(seed)
    inputs = home_inputs(home)
    model, _ = build(inputs)
    objective = model.objective()
    exact = model.solve(objective)
    assert exact.x is not None
    rows, lower, upper = model.constraints(), np.concatenate(model.lower), model.upper_bounds()
    integer = np.concatenate(model.integer)
    for limit in (1e-4, 1e-3, 1e-2):
        options = {"presolve": "off", "time_limit": limit, "mip_rel_gap": 1e-9}
        found = solve(objective, lower, upper, rows, integer=integer, options=options, start=exact.x)
        if found.x is None:
            continue
        activity = rows.dot(found.x)
        assert np.all(activity >= rows.lo - 1e-6) and np.all(activity <= rows.hi + 1e-6)
        assert np.all(found.x >= lower - 1e-6) and np.all(found.x <= upper + 1e-6)
        assert found.fun == pytest.approx(float(objective @ found.x), abs=1e-6)


def test_a_previous_plan_that_breaks_a_run_in_progress_is_not_used() -> None:
    """The heat pump has just started and must run two more slots; a previous plan with it off there is refused
    (fixing its binaries would lift the minimum run), and the replan keeps the pump on at the cold replan's cost."""
    home = _home(2)
    wide = np.full(N, 15.0), np.full(N, 25.0)  # a band the pump's later runs need not follow the two slots off
    pump = replace(home["heat_pumps"][0], initial_on_slots=1, comfort_low_c=wide[0], comfort_high_c=wide[1])
    prices = np.where(np.arange(N) < 2, 1.0, np.random.default_rng(2).uniform(0.25, 0.35, N))
    running = {**home, "heat_pumps": [pump], "curve": make_curve(np.round(prices, 4))}
    cold = plan_home(**running, time_limit_s=EXACT_S)
    assert cold.heat_kw["hp"][:2] == pytest.approx([2.0, 2.0])
    heat = cold.heat_kw["hp"].copy()
    heat[:2] = 0.0
    previous = replace(cold, heat_kw={"hp": heat})
    inputs = home_inputs(running)
    model, cols = build(inputs)
    decided = carried(inputs, cols, model.size, previous)
    assert decided[cols.heat[0].on][:2] == pytest.approx([0.0, 0.0])
    assert warm_start(model, model.objective(), decided, None) is None
    warm = plan_home(**running, previous=previous, time_limit_s=EXACT_S)
    assert warm.heat_kw["hp"][:2] == pytest.approx([2.0, 2.0])
    assert warm.net_cost == pytest.approx(cold.net_cost, rel=1e-9, abs=1e-9)
