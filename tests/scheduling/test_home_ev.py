"""The whole-home plan's semi-continuous EV (a charger with a minimum current) against a brute-force oracle."""

from __future__ import annotations

import itertools
import math

from hypothesis import HealthCheck, given, settings, strategies as st
import numpy as np
import pytest
from scipy.optimize import linprog

from custom_components.agentic_hems.scheduling import LoadSpec
from custom_components.agentic_hems.scheduling.home import plan_home
from custom_components.agentic_hems.scheduling.home_model import HomePlanError

from .conftest import EXACT_S, SLOT, T0, make_curve

H = 0.25


def brute_force(prices, export, base, pv, *, least, most, energy, fuse) -> float:
    """Least cost over every on/off set of slots, each an LP in the EV's kW, import, export and curtailment.

    On a set S the EV draws m..P kW in S and nothing elsewhere, delivering E..E + h m kWh; math.inf when no set
    has a plan.
    """
    n = len(prices)
    best = math.inf
    for on in itertools.product((0, 1), repeat=n):
        if not any(on):
            continue
        # columns: ev (n), import (n), export (n), curtailment (n)
        cost = np.concatenate([np.zeros(n), H * np.asarray(prices), -H * np.asarray(export), np.zeros(n)])
        eye = np.eye(n)
        balance = np.hstack([-eye, eye, -eye, -eye])  # imp - exp - ev - cur = base - pv
        bounds = [(least * s, most * s) for s in on] + [(0, fuse)] * n + [(0, None)] * n + [(0, p) for p in pv]
        energy_row = np.concatenate([np.full(n, H), np.zeros(3 * n)])
        found = linprog(
            cost,
            A_ub=np.vstack([energy_row, -energy_row]),
            b_ub=[energy + H * least, -energy],
            A_eq=balance,
            b_eq=np.asarray(base) - np.asarray(pv),
            bounds=bounds,
            method="highs",
        )
        if found.status == 0:
            best = min(best, float(found.fun))
    return best


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_semi_continuous_ev_matches_brute_force(data):
    """Cost, per-slot range and energy of the plan equal the cheapest of all on/off sets (n <= 5 slots)."""
    n = data.draw(st.integers(2, 5))
    prices = data.draw(st.lists(st.sampled_from([-0.05, 0.1, 0.2, 0.3, 0.45]), min_size=n, max_size=n))
    export = [min(p, 0.08) for p in prices]
    pv = data.draw(st.lists(st.sampled_from([0.0, 2.0, 5.0]), min_size=n, max_size=n))
    base = data.draw(st.lists(st.sampled_from([0.3, 1.0]), min_size=n, max_size=n))
    least, most = data.draw(st.sampled_from([(1.38, 3.68), (4.14, 11.0), (4.14, 7.0)]))
    energy = data.draw(st.sampled_from([0.5, 1.2, 2.0, 3.1]))
    fuse = 12.0
    ev = LoadSpec(
        "ev",
        power_kw=most,
        min_power_kw=least,
        energy_kwh=energy,
        contiguous=False,
        earliest_start=T0,
        deadline=T0 + SLOT * n,
    )
    oracle = brute_force(prices, export, base, pv, least=least, most=most, energy=energy, fuse=fuse)
    if not math.isfinite(oracle):  # the window cannot hold the energy at full power
        with pytest.raises(HomePlanError):
            plan_home(make_curve(prices), [ev], base_load_kw=base, pv_kw=pv, export_price=export, fuse_kw=fuse)
        return
    curve = make_curve(prices)
    plan = plan_home(curve, [ev], base_load_kw=base, pv_kw=pv, export_price=export, fuse_kw=fuse, time_limit_s=EXACT_S)
    assert plan.cost == pytest.approx(oracle, abs=1e-6)
    power = plan.load_kw["ev"]
    on = power > 1e-6
    # HiGHS meets the bounds to its feasibility tolerance, and the fuse trim takes what it left above the fuse
    assert np.all(power[on] >= least - 1e-5) and np.all(power <= most + 1e-6)
    assert energy - 1e-6 <= H * power.sum() <= energy + H * least + 1e-6


def test_small_remainder_takes_one_slot_at_the_minimum():
    """0.5 kWh at a 4.14 kW minimum: one slot at 4.14 kW (1.035 kWh), in the cheapest slot; never 2 kW."""
    ev = LoadSpec(
        "ev",
        power_kw=11.0,
        min_power_kw=4.14,
        energy_kwh=0.5,
        contiguous=False,
        earliest_start=T0,
        deadline=T0 + SLOT * 3,
    )
    plan = plan_home(make_curve([0.3, 0.1, 0.2]), [ev])
    np.testing.assert_allclose(plan.load_kw["ev"], [0.0, 4.14, 0.0], atol=1e-6)
    without = LoadSpec("ev", power_kw=11.0, energy_kwh=0.5, contiguous=False, earliest_start=T0, deadline=T0 + SLOT * 3)
    np.testing.assert_allclose(
        plan_home(make_curve([0.3, 0.1, 0.2]), [without]).load_kw["ev"], [0.0, 2.0, 0.0], atol=1e-6
    )


def test_pv_surplus_is_followed_between_minimum_and_maximum():
    """The minimum, not the PV surplus, sets the second slot.

    2.5 kWh (10 kW x slot) with PV surplus 6, 2, 0, 0 kW at a dear import: the second slot draws the minimum 4.14 kW (the 2 kW surplus plus the least import), the first the rest (5.86 kW, within its surplus); the plain
    split 8 + 2 kW would need 2 kW, below the minimum.
    """
    ev = LoadSpec(
        "ev",
        power_kw=11.0,
        min_power_kw=4.14,
        energy_kwh=2.5,
        contiguous=False,
        earliest_start=T0,
        deadline=T0 + SLOT * 4,
    )
    plan = plan_home(make_curve([0.4] * 4), [ev], pv_kw=[6.5, 2.5, 0.0, 0.0], base_load_kw=0.5, export_price=0.05)
    power = plan.load_kw["ev"]
    np.testing.assert_allclose(power, [5.86, 4.14, 0.0, 0.0], atol=1e-6)
    assert plan.baseline_cost > plan.cost


def test_minimum_outside_the_range_is_refused():
    """A minimum above the maximum power is a malformed load."""
    ev = LoadSpec(
        "ev",
        power_kw=3.0,
        min_power_kw=4.0,
        energy_kwh=1.0,
        contiguous=False,
        earliest_start=T0,
        deadline=T0 + SLOT * 4,
    )
    with pytest.raises(ValueError, match="min_power_kw"):
        plan_home(make_curve([0.2] * 4), [ev])
