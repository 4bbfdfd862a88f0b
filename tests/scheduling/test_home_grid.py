"""Grid fees, the capacity charge and phase limits in the whole-home MILP, against a hand-written LP and by hand."""

from __future__ import annotations

import math
from datetime import timedelta

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from custom_components.agentic_hems.prices.curve import PriceCurve
from custom_components.agentic_hems.scheduling.home import plan_home
from custom_components.agentic_hems.scheduling.home_evaluate import Tariff, evaluate
from custom_components.agentic_hems.scheduling.home_model import (
    TOL_KW,
    GridFees,
    HomeHeatPump,
    HomePlanError,
    Infeasibility,
    PhaseLimits,
)
from custom_components.agentic_hems.scheduling.plan import LoadSpec

from .conftest import SLOT, T0, make_curve

H = 0.25


def ev(n: int, energy: float, power: float = 11.0) -> LoadSpec:
    """An EV charging ``energy`` kWh at up to ``power`` kW anywhere in the n slots."""
    return LoadSpec(
        "ev", power_kw=power, energy_kwh=energy, contiguous=False, earliest_start=T0, deadline=T0 + SLOT * n
    )


def lp_capacity(prices, fee, base, month, floors, *, energy: float, power: float, price: float) -> float:
    """Least cost of the EV as an LP: x (n) kW, one excess e_m per month with e_m >= base + x_t - floor_m."""
    n, months = len(prices), len(floors)
    c = np.concatenate([H * (np.asarray(prices) + fee), np.full(months, price)])
    a_ub = np.zeros((n, n + months))
    a_ub[np.arange(n), np.arange(n)] = 1.0
    a_ub[np.arange(n), n + np.asarray(month)] = -1.0
    b_ub = np.asarray(floors)[month] - base
    a_eq = np.concatenate([np.full(n, H), np.zeros(months)])[None, :]
    bounds = [(0, power)] * n + [(0, None)] * months
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=[energy], bounds=bounds, method="highs")
    assert res.status == 0
    return float(res.fun) + H * float((np.asarray(prices) + fee) @ base)


dyadic = st.integers(0, 40).map(lambda k: k / 64)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), n=st.integers(4, 12))
def test_fees_and_capacity_charge_match_a_hand_written_lp(data, n):
    prices = np.array(data.draw(st.lists(dyadic, min_size=n, max_size=n)))
    fee = np.array(data.draw(st.lists(dyadic, min_size=n, max_size=n)))
    base = np.array(data.draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)), dtype=float)
    split = data.draw(st.integers(1, n))
    month = np.array([0] * split + [1] * (n - split))
    floors = (float(data.draw(st.integers(0, 6))), float(data.draw(st.integers(0, 6))))
    price = data.draw(st.sampled_from([0.0, 0.5, 8.0]))
    energy = data.draw(st.integers(1, n)) * 1.0  # at most n kWh: 5 kW fits 1.25 kWh per slot
    fees = GridFees(energy_fee=fee, capacity_price=price, month=month, peak_floor_kw=floors)
    plan = plan_home(make_curve(prices), [ev(n, energy, 5.0)], base_load_kw=base, fees=fees)
    expected = lp_capacity(prices, fee, base, month, floors, energy=energy, power=5.0, price=price)
    # HiGHS meets each slot's flows and each month's excess only to its feasibility tolerance (below TOL_KW kW), and
    # each costs its price: the energy price and fee per kWh, the capacity price per kW of excess.
    tolerance = TOL_KW * (H * float(np.sum(prices + fee)) + 2 * price) + 1e-9
    assert plan.cost == pytest.approx(expected, abs=tolerance)
    assert plan.fee_cost == pytest.approx(H * float(fee @ plan.import_kw), abs=1e-9)
    charge = sum(
        price * max(float(np.max(plan.import_kw[month == m])) - floors[m], 0.0) for m in (0, 1) if (month == m).any()
    )
    assert plan.capacity_cost == pytest.approx(charge, abs=1e-9)
    assert plan.peak_kw == pytest.approx(float(np.max(plan.import_kw)), abs=1e-12)
    assert plan.peak_floor_kw == floors[0]


def test_a_capacity_charge_flattens_the_ev_charging():
    n = 32  # 8 hours, flat prices: without the charge the tie puts the EV first, at 11 kW
    curve = make_curve([0.3] * n)
    plain = plan_home(curve, [ev(n, 10.0)], base_load_kw=0.5)
    assert plain.peak_kw == pytest.approx(11.5)
    fees = GridFees(energy_fee=np.zeros(n), capacity_price=10.0)
    flat = plan_home(curve, [ev(n, 10.0)], base_load_kw=0.5, fees=fees)
    np.testing.assert_allclose(flat.load_kw["ev"], 10.0 / 8, atol=1e-6)
    assert flat.peak_kw == pytest.approx(1.75, abs=1e-6)
    assert flat.capacity_cost == pytest.approx(17.5, abs=1e-6)
    assert flat.cost == pytest.approx(H * 0.3 * (0.5 * n + 40.0) + 17.5, abs=1e-6)
    assert flat.baseline_cost == pytest.approx(H * 0.3 * (0.5 * n + 40.0) + 10.0 * 11.5, abs=1e-6)
    floored = plan_home(curve, [ev(n, 10.0)], base_load_kw=0.5, fees=replace_floor(fees, 5.0))
    assert floored.capacity_cost == pytest.approx(0.0, abs=1e-5) and floored.peak_kw <= 5.0 + 1e-6


def replace_floor(fees: GridFees, floor: float) -> GridFees:
    """The same fees with the month's peak so far at ``floor`` kW."""
    return GridFees(energy_fee=fees.energy_fee, capacity_price=fees.capacity_price, peak_floor_kw=(floor,))


def test_the_energy_fee_moves_an_appliance_and_is_reported():
    dw = LoadSpec("dw", power_kw=2.0, duration_min=15, earliest_start=T0, deadline=T0 + SLOT * 8)
    fee = np.array([0.3] * 4 + [0.05] * 4)
    plan = plan_home(make_curve([0.2] * 8), [dw], fees=GridFees(energy_fee=fee))
    assert plan.starts["dw"] == T0 + SLOT * 4
    assert plan.fee_cost == pytest.approx(H * 2.0 * 0.05) and plan.cost == pytest.approx(H * 2.0 * 0.25)


def test_an_unknown_price_still_ends_the_horizon_and_the_fee_must_be_known_on_it():
    fees = GridFees(energy_fee=np.full(4, 0.1))
    plan = plan_home(make_curve([0.2, 0.2, math.nan, 0.2]), base_load_kw=1.0, fees=fees)
    assert plan.import_kw.size == 2 and plan.cost == pytest.approx(H * 0.3 * 2)
    with pytest.raises(ValueError):
        plan_home(make_curve([0.2] * 4), fees=GridFees(energy_fee=np.array([0.1, math.nan, 0.1, 0.1])))
    with pytest.raises(ValueError):
        plan_home(make_curve([0.2] * 4), fees=GridFees(energy_fee=np.full(3, 0.1)))
    with pytest.raises(ValueError):
        GridFees(energy_fee=np.zeros(4), month=np.array([0, 0, 1, 1]), peak_floor_kw=(0.0,))


def test_capacity_uses_the_quarter_hour_average_of_shorter_slots():
    """5-minute slots: 3 kW in one slot averages 1 kW over its quarter, so the cheap slot takes all of it."""
    curve = PriceCurve(start=T0, resolution=timedelta(minutes=5), prices=np.array([0.1, 0.5, 0.5] * 2), source="t")
    car = LoadSpec(
        "ev", power_kw=3.0, energy_kwh=0.25, contiguous=False, earliest_start=T0, deadline=T0 + timedelta(minutes=15)
    )
    plan = plan_home(curve, [car], fees=GridFees(energy_fee=np.zeros(6), capacity_price=1.0))
    np.testing.assert_allclose(plan.load_kw["ev"], [3.0, 0, 0, 0, 0, 0], atol=1e-7)
    assert plan.peak_kw == pytest.approx(1.0) and plan.capacity_cost == pytest.approx(1.0)


def test_a_phase_limit_moves_a_single_phase_appliance():
    """The base load sits on L1; the appliance on L1 cannot join it in the cheap slots."""
    dw = LoadSpec("dw", power_kw=1.0, duration_min=30, earliest_start=T0, deadline=T0 + SLOT * 4)
    curve, base = make_curve([0.1, 0.1, 0.3, 0.3]), np.array([2.5, 2.5, 0.0, 0.0])
    assert plan_home(curve, [dw], base_load_kw=base).starts["dw"] == T0
    on_l1 = PhaseLimits(limit_kw=3.0, assignment={"base": "L1", "dw": "L1"})
    plan = plan_home(curve, [dw], base_load_kw=base, phases=on_l1)
    assert plan.starts["dw"] == T0 + SLOT * 2
    np.testing.assert_allclose(plan.phase_kw["L1"], [2.5, 2.5, 1.0, 1.0], atol=1e-9)
    np.testing.assert_allclose(plan.phase_kw["L2"], 0.0, atol=1e-9)
    on_l2 = PhaseLimits(limit_kw=3.0, assignment={"base": "L1", "dw": "L2"})
    assert plan_home(curve, [dw], base_load_kw=base, phases=on_l2).starts["dw"] == T0


def test_three_phase_devices_split_and_pv_counts_negative():
    """Surplus PV on L2 above the limit is curtailed; the unassigned base load splits in thirds."""
    phases = PhaseLimits(limit_kw=3.0, assignment={"pv": "L2"})
    plan = plan_home(make_curve([0.2] * 2), base_load_kw=1.5, pv_kw=5.0, export_price=0.1, phases=phases)
    np.testing.assert_allclose(plan.phase_kw["L2"], -3.0, atol=1e-7)
    np.testing.assert_allclose(plan.phase_kw["L1"], 0.5, atol=1e-9)
    np.testing.assert_allclose(plan.curtail_kw, 1.5, atol=1e-7)


def test_phase_conflicts_are_named():
    dw = LoadSpec("dw", power_kw=4.0, duration_min=15, earliest_start=T0, deadline=T0 + SLOT * 4)
    with pytest.raises(HomePlanError) as err:
        plan_home(make_curve([0.2] * 4), [dw], phases=PhaseLimits(limit_kw=3.0, assignment={"dw": "L3"}))
    assert err.value.constraints == (Infeasibility.PHASE,)
    with pytest.raises(ValueError):
        plan_home(make_curve([0.2] * 4), [dw], phases=PhaseLimits(limit_kw=3.0, assignment={"dishwasher": "L3"}))
    with pytest.raises(ValueError):
        PhaseLimits(limit_kw=3.0, assignment={"dw": "L4"})


def test_evaluate_prices_fees_capacity_per_month_and_flags_phases():
    hours = 5 / 60
    fees = GridFees(
        energy_fee=np.full(6, 0.1), capacity_price=10.0, month=np.array([0, 0, 0, 1, 1, 1]), peak_floor_kw=(1.0, 4.0)
    )
    tariff = Tariff(
        import_price=np.full(6, 0.3),
        export_price=np.zeros(6),
        hours=hours,
        fuse_kw=math.inf,
        export_limit_kw=math.inf,
        terminal_price={},
        fees=fees,
        quarter=np.array([0, 0, 0, 1, 1, 1]),
        phases=PhaseLimits(limit_kw=1.5),
    )
    house = np.array([6.0, 0, 0, 3, 3, 3])
    result = evaluate(tariff, house_kw=house, pv_kw=np.zeros(6), battery_kw={}, batteries=())
    # quarter averages 2 and 3 kW; month 0 pays 10 x (2 - 1), month 1 stays under its 4 kW floor
    assert result.capacity_cost == pytest.approx(10.0) and result.peak_kw == pytest.approx(3.0)
    assert result.fee_cost == pytest.approx(hours * 0.1 * 15)
    assert result.cost == pytest.approx(hours * 0.3 * 15 + 10.0)
    np.testing.assert_allclose(result.phase_kw["L3"], house / 3)
    assert any("phase" in v for v in result.violations)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), n=st.integers(4, 10))
def test_properties_of_a_home_with_heat_pump_fees_and_phases(data, n):
    """The plan's grid flows, phases, temperatures and cost, recomputed by hand from its own arrays."""
    prices = np.array(data.draw(st.lists(dyadic, min_size=n, max_size=n)))
    fee = np.array(data.draw(st.lists(dyadic, min_size=n, max_size=n)))
    pv = np.array(data.draw(st.lists(st.integers(0, 6), min_size=n, max_size=n)), dtype=float)
    hp = HomeHeatPump(
        name="hp",
        ua_kw_per_k=0.2,
        capacity_kwh_per_k=4.0,
        min_kw=0.0,
        max_kw=3.0,
        initial_temp_c=20.0,
        ambient_c=np.full(n, 0.0),
        cop=np.full(n, 3.0),
        comfort_low_c=np.full(n, 19.0),
        comfort_high_c=np.full(n, 22.0),
    )
    fees = GridFees(energy_fee=fee, capacity_price=data.draw(st.sampled_from([0.0, 2.0])), peak_floor_kw=(1.0,))
    phases = PhaseLimits(limit_kw=6.0, assignment={"hp": "L1", "base": "L2", "pv": "L3"})
    plan = plan_home(
        make_curve(prices), [ev(n, 2.0, 7.0)], heat_pumps=[hp], base_load_kw=0.4, pv_kw=pv, fees=fees, phases=phases
    )
    heat, load = plan.heat_kw["hp"], plan.load_kw["ev"]
    produced = pv - plan.curtail_kw
    np.testing.assert_allclose(plan.import_kw - plan.export_kw, 0.4 + heat + load - produced, atol=1e-6)
    np.testing.assert_allclose(plan.phase_kw["L1"], heat + load / 3, atol=1e-9)
    np.testing.assert_allclose(plan.phase_kw["L3"], load / 3 - produced, atol=1e-9)
    assert all(np.all(np.abs(v) <= 6.0 + 1e-6) for v in plan.phase_kw.values())
    temp = plan.temp_c["hp"]
    assert np.all(temp[1:] >= 19.0 - 1e-6) and np.all(temp[1:] <= 22.0 + 1e-6)
    np.testing.assert_allclose(temp[1:], temp[:-1] + H / 4.0 * (3.0 * heat - 0.2 * temp[:-1]), atol=1e-9)
    capacity = fees.capacity_price * max(float(np.max(plan.import_kw)) - 1.0, 0.0)
    energy = H * (float((prices + fee) @ plan.import_kw))
    assert plan.cost == pytest.approx(energy + capacity, abs=1e-9)
    value = float(np.median(prices + fee)) / 3.0 * 4.0 * (temp[-1] - 20.0)
    assert plan.net_cost == pytest.approx(plan.cost - value, abs=1e-9)
