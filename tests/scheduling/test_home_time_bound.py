"""The whole-home plan's time bound: when it stops HiGHS, the best plan found is used and the plan says so."""

from __future__ import annotations

from datetime import timedelta
import math

import numpy as np
import pytest

from custom_components.agentic_hems.scheduling.home import plan_home
from custom_components.agentic_hems.scheduling.home_evaluate import Tariff, evaluate
from custom_components.agentic_hems.scheduling.home_model import HomeBattery, HomeHeatPump, HomePlan
from custom_components.agentic_hems.scheduling.plan import LoadSpec

from .conftest import EXACT_S, T0, make_curve

N = 96
EXPORT = 0.05  # a fixed feed-in below every import price: the runs follow the PV surplus and the LP relaxation splits them


def _home(seed: int) -> dict:
    """A day with random prices, a PV bell, a battery and three runs free over the whole day."""
    rng = np.random.default_rng(seed)
    hours = np.arange(N) / 4
    pv = 6.0 * np.clip(np.sin((hours - 7) / 11 * math.pi), 0.0, None) ** 1.5 * rng.uniform(0.5, 1.0, N)
    runs = [("dishwasher", 2.0, 120), ("washer", 2.2, 90), ("dryer", 2.5, 90)]
    return {
        "curve": make_curve(np.round(rng.uniform(0.15, 0.40, N), 4)),
        "loads": [
            LoadSpec(name, power_kw=kw, duration_min=minutes, earliest_start=T0, deadline=T0 + timedelta(hours=24))
            for name, kw, minutes in runs
        ],
        "batteries": [
            HomeBattery(name="b", capacity_kwh=5.0, charge_kw=2.5, discharge_kw=2.5, initial_soc_pct=50.0, wear_cost=0.02)
        ],
        "pv_kw": pv,
        "base_load_kw": np.round(rng.uniform(0.2, 0.8, N), 3),
        "export_price": EXPORT,
        "fuse_kw": 9.0,
        "export_limit_kw": 3.0,
    }


def _cost(home: dict, plan: HomePlan) -> float:
    """The plan's net cost by the common evaluator, after checking it breaks no limit and runs every load once."""
    for spec in home["loads"]:
        assert np.count_nonzero(plan.load_kw[spec.name]) * 15 == spec.duration_min
    tariff = Tariff(
        import_price=home["curve"].prices,
        export_price=np.full(N, EXPORT),
        hours=0.25,
        fuse_kw=home["fuse_kw"],
        export_limit_kw=home["export_limit_kw"],
        terminal_price={"b": float(np.median(home["curve"].prices)) * home["batteries"][0].discharge_efficiency},
    )
    found = evaluate(
        tariff,
        house_kw=home["base_load_kw"] + sum(plan.load_kw.values()),
        pv_kw=home["pv_kw"] - plan.curtail_kw,
        battery_kw=plan.battery_kw,
        batteries=tuple(home["batteries"]),
    )
    assert found.violations == []
    assert found.net_cost == pytest.approx(plan.net_cost, abs=1e-9)
    return found.net_cost


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_spent_time_bound_returns_a_feasible_plan_no_cheaper_than_the_optimum_and_says_so(seed: int) -> None:
    """With no time left HiGHS stops at once: the plan is the dive's or HiGHS's incumbent, feasible, flagged."""
    home = _home(seed)
    exact = plan_home(**home, time_limit_s=EXACT_S)
    bounded = plan_home(**home, time_limit_s=0.0)
    assert not exact.time_limited and "time bound" not in exact.detail
    assert bounded.time_limited and "time bound of 0 s reached" in bounded.detail
    assert _cost(home, bounded) >= _cost(home, exact) - 1e-9


def test_a_spent_time_bound_still_plans_a_home_the_dive_cannot_plan() -> None:
    """No runs, so no dive: a fixed-speed heat pump (on/off binaries, 1 h minimum run and off) is planned by the
    least-cost MILP alone. A spent bound must not leave the home without the plan HiGHS finds: that MILP goes on to
    its first plan, feasible and no cheaper than the optimum; a plan not proven says so. (HiGHS settles this small
    home before it first checks the bound; test_highs.py stops larger MILPs at their first plan.)
    """
    n = 48
    rng = np.random.default_rng(7)
    pump = HomeHeatPump(
        name="hp",
        ua_kw_per_k=0.15,
        capacity_kwh_per_k=8.0,
        min_kw=2.0,
        max_kw=2.0,
        initial_temp_c=20.0,
        ambient_c=np.full(n, 3.0),
        cop=np.full(n, 3.0),
        comfort_low_c=np.full(n, 19.5),
        comfort_high_c=np.full(n, 22.0),
        min_run_slots=4,
        min_off_slots=4,
    )
    home = {"curve": make_curve(np.round(rng.uniform(-0.05, 0.40, n), 4)), "heat_pumps": [pump], "base_load_kw": 0.3}
    exact = plan_home(**home, time_limit_s=EXACT_S)
    bounded = plan_home(**home, time_limit_s=0.0)
    assert not exact.time_limited and bounded.net_cost >= exact.net_cost - 1e-9
    assert bounded.time_limited or bounded.net_cost == pytest.approx(exact.net_cost, rel=1e-6)
    assert np.all(bounded.temp_c["hp"][1:] >= 19.5 - 1e-6) and np.all(bounded.temp_c["hp"][1:] <= 22.0 + 1e-6)
    running = bounded.heat_kw["hp"] > 0
    assert np.all(bounded.heat_kw["hp"][running] == pytest.approx(2.0))
