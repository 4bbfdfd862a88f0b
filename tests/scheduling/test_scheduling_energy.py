"""plan_energy against an independent LP (scipy.optimize.linprog), and its boundary rules."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from custom_components.agentic_hems.prices.curve import PriceCurve, floor_slot
from custom_components.agentic_hems.scheduling import Plan, Reason, plan_energy
from custom_components.agentic_hems.scheduling.ties import TIE_ABS, TIE_REL

from .conftest import BRUSSELS, SLOT, T0, any_price, curves, local_day_curve, make_curve, noisy, windows
from .oracles import lp_energy, usable


def _assert_unplanned(plan: Plan, reason: Reason) -> None:
    assert not plan.feasible and plan.reason is reason
    assert plan.start is None and plan.end is None and plan.cost is None
    assert not plan.power_kw.any() and plan.detail


@settings(derandomize=True, max_examples=200, deadline=None)
@given(data=st.data())
def test_optimal_against_linprog(data: st.DataObject) -> None:
    curve = data.draw(curves(price=data.draw(st.sampled_from([any_price, st.integers(-8, 24).map(lambda k: k / 32)]))))
    earliest, deadline = data.draw(windows(curve))
    power = data.draw(st.floats(1.0, 22.0))
    energy = data.draw(st.floats(0.1, 60.0))
    plan = plan_energy(curve, max_power_kw=power, energy_kwh=energy, earliest_start=earliest, deadline=deadline)
    expected = lp_energy(curve, max_power_kw=power, energy_kwh=energy, earliest=earliest, deadline=deadline)
    assert plan.power_kw.shape == (len(curve),) and plan.method == "greedy_sorted"
    if expected is None:
        assert not plan.feasible and plan.reason in (Reason.WINDOW_TOO_SHORT, Reason.NO_PRICES)
        return
    assert plan.feasible
    window = [p for i, p in enumerate(curve.prices) if usable(curve, i, earliest, deadline)]
    tolerance = TIE_REL * max(abs(p) for p in window) * energy + TIE_ABS  # near-ties go to the earliest slot
    assert plan.cost == pytest.approx(expected, rel=1e-7, abs=1e-6 + tolerance)
    assert plan.energy_kwh == pytest.approx(energy, rel=1e-9)
    assert np.all(plan.power_kw <= power) and np.all(plan.power_kw >= 0)
    used = np.flatnonzero(plan.power_kw)
    assert all(usable(curve, int(i), earliest, deadline) for i in used)  # never NaN, never outside the window
    partial = [i for i in used if plan.power_kw[i] < power]
    assert len(partial) <= 1
    if partial:  # the partial slot is (up to the tie tolerance) the dearest chosen one
        assert curve.prices[partial[0]] >= np.max(curve.prices[used]) - tolerance / energy
    complete = (
        all(
            not np.isnan(curve.prices[i])
            for i in range(len(curve))
            if curve.slot_start(i) >= earliest and curve.slot_start(i) + SLOT <= deadline
        )
        and floor_slot(deadline) <= curve.end
    )
    assert plan.reason is (Reason.OPTIMAL if complete else Reason.PARTIAL_PRICES)


@settings(derandomize=True, max_examples=200, deadline=None)
@given(data=st.data())
def test_ties_go_to_the_earliest_slots_whatever_the_float_noise(data: st.DataObject) -> None:
    """Prices from a few levels, some reached by another float sum: the slots are those of filling by (exact price,
    index), the earliest slot first among equal prices."""
    exact = data.draw(curves(price=st.sampled_from([0.3, 0.3, 0.3, 0.7])))
    curve = exact.replace(prices=noisy(exact.prices, data))
    earliest, deadline = data.draw(windows(curve))
    power, energy = data.draw(st.sampled_from([4.0, 11.0])), data.draw(st.sampled_from([0.5, 1.7, 4.0, 9.9]))
    plan = plan_energy(curve, max_power_kw=power, energy_kwh=energy, earliest_start=earliest, deadline=deadline)
    slots = [i for i in range(len(curve)) if usable(curve, i, earliest, deadline)]
    slots.sort(key=lambda i: (exact.prices[i], i))
    expected, left = np.zeros(len(curve)), energy
    for i in slots:
        expected[i] = min(power, left / 0.25)
        left -= expected[i] * 0.25
        if left <= 1e-9:
            break
    if left > 1e-9:
        assert not plan.feasible
        return
    np.testing.assert_allclose(plan.power_kw, expected, atol=1e-9)


def test_cheapest_slots_with_a_partial_last_slot() -> None:
    prices = [0.30, 0.10, 0.25, 0.05, 0.20, 0.08, 0.40, 0.15]
    curve = make_curve(prices)
    # 7 kWh at 11 kW = 2.75 kWh per slot: two full slots (0.05, 0.08) and 1.5 kWh (6 kW) at 0.10.
    plan = plan_energy(curve, max_power_kw=11.0, energy_kwh=7.0, earliest_start=T0, deadline=T0 + 8 * SLOT)
    expected = np.array([0, 6.0, 0, 11.0, 0, 11.0, 0, 0])
    np.testing.assert_allclose(plan.power_kw, expected, rtol=1e-12)
    assert plan.cost == pytest.approx(2.75 * 0.05 + 2.75 * 0.08 + 1.5 * 0.10)
    assert plan.start == T0 + SLOT and plan.end == T0 + 6 * SLOT
    assert plan.energy_kwh == pytest.approx(7.0)
    # Baseline: full power from the first slot: 2.75 at 0.30, 2.75 at 0.10, 1.5 at 0.25.
    assert plan.baseline_cost == pytest.approx(2.75 * 0.30 + 2.75 * 0.10 + 1.5 * 0.25)


def test_whole_slots_despite_float_noise() -> None:
    curve = make_curve(np.full(8, 0.2))
    plan = plan_energy(curve, max_power_kw=1.2, energy_kwh=0.3, earliest_start=T0, deadline=T0 + 8 * SLOT)
    assert np.count_nonzero(plan.power_kw) == 1 and plan.power_kw[0] == 1.2
    plan = plan_energy(curve, max_power_kw=0.4, energy_kwh=0.3, earliest_start=T0, deadline=T0 + 3 * SLOT)
    assert plan.feasible and np.count_nonzero(plan.power_kw) == 3  # exactly the window's capacity


def test_an_energy_just_over_whole_slots_takes_the_next_slot_not_a_crash() -> None:
    """0.8750000008750001 kWh at 3.5 kW (0.875 kWh a slot): 1e-9 relative over one slot, which the fill does not
    count as exact. The slot count used to say one and the baseline's fill then found no room (an AssertionError);
    now both say two, and the plan is feasible with all the energy. In a one-slot window it is too short."""
    curve = make_curve(np.full(8, 0.2))
    energy = 0.8750000008750001
    plan = plan_energy(curve, max_power_kw=3.5, energy_kwh=energy, earliest_start=T0, deadline=T0 + 8 * SLOT)
    assert plan.feasible and plan.reason is Reason.OPTIMAL and plan.energy_kwh == pytest.approx(energy, rel=1e-12)
    assert np.count_nonzero(plan.power_kw) == 2 and plan.baseline_cost == pytest.approx(0.2 * energy, rel=1e-12)
    short = plan_energy(curve, max_power_kw=3.5, energy_kwh=energy, earliest_start=T0, deadline=T0 + SLOT)
    _assert_unplanned(short, Reason.WINDOW_TOO_SHORT)
    assert "needs 2" in short.detail


def test_ties_go_to_the_earliest_slots() -> None:
    curve = make_curve([0.3, 0.1, 0.2, 0.1, 0.1, 0.3])
    plan = plan_energy(curve, max_power_kw=4.0, energy_kwh=1.5, earliest_start=T0, deadline=T0 + 6 * SLOT)
    np.testing.assert_allclose(plan.power_kw, [0, 4.0, 0, 2.0, 0, 0])
    flat = make_curve(np.full(96, 0.1))
    plan = plan_energy(flat, max_power_kw=11.0, energy_kwh=30.0, earliest_start=T0 + 8 * SLOT, deadline=T0 + 96 * SLOT)
    assert plan.start == T0 + 8 * SLOT
    assert np.flatnonzero(plan.power_kw).tolist() == list(range(8, 19))


def test_negative_prices() -> None:
    curve = make_curve([0.1, -0.05, 0.02, -0.1, 0.3])
    plan = plan_energy(curve, max_power_kw=4.0, energy_kwh=2.0, earliest_start=T0, deadline=T0 + 5 * SLOT)
    np.testing.assert_allclose(plan.power_kw, [0, 4.0, 0, 4.0, 0])
    assert plan.cost == pytest.approx(-0.15)
    assert plan.energy_kwh == pytest.approx(2.0)  # exactly the energy asked, not more


def test_nan_tail_hole_and_unknown_window() -> None:
    prices = np.full(96, np.nan)
    prices[:40] = 0.2
    prices[10] = np.nan
    prices[11] = 0.01
    curve = make_curve(prices)
    plan = plan_energy(curve, max_power_kw=8.0, energy_kwh=4.0, earliest_start=T0, deadline=T0 + timedelta(days=1))
    assert plan.feasible and plan.reason is Reason.PARTIAL_PRICES
    assert "prices known until 2026-01-05T10:00Z" in plan.detail
    assert plan.power_kw[11] == 8.0 and plan.power_kw[10] == 0.0 and not plan.power_kw[40:].any()
    short = plan_energy(curve, max_power_kw=8.0, energy_kwh=100.0, earliest_start=T0, deadline=T0 + timedelta(days=1))
    _assert_unplanned(short, Reason.WINDOW_TOO_SHORT)
    unknown = plan_energy(
        curve,
        max_power_kw=8.0,
        energy_kwh=4.0,
        earliest_start=T0 + timedelta(hours=12),
        deadline=T0 + timedelta(hours=20),
    )
    _assert_unplanned(unknown, Reason.NO_PRICES)


def test_window_too_short() -> None:
    curve = make_curve(np.full(16, 0.2))
    _assert_unplanned(  # no array of 1e15 slots is ever built
        plan_energy(curve, max_power_kw=1.0, energy_kwh=1e15, earliest_start=T0, deadline=T0 + 16 * SLOT),
        Reason.WINDOW_TOO_SHORT,
    )
    plan = plan_energy(curve, max_power_kw=11.0, energy_kwh=20.0, earliest_start=T0, deadline=T0 + timedelta(hours=1))
    _assert_unplanned(plan, Reason.WINDOW_TOO_SHORT)
    assert "needs 8" in plan.detail


def test_autumn_dst_day_and_midnight_crossing() -> None:
    curve = local_day_curve(date(2025, 10, 26), lambda i: 0.02 if 12 <= i < 16 else 0.30)
    plan = plan_energy(
        curve,
        max_power_kw=11.0,
        energy_kwh=11.0,
        earliest_start=datetime(2025, 10, 25, 22, tzinfo=BRUSSELS),  # yesterday evening: clipped to the curve
        deadline=datetime(2025, 10, 27, 7, tzinfo=BRUSSELS),  # tomorrow morning: past the curve (partial)
    )
    assert plan.start == datetime(2025, 10, 26, 1, tzinfo=UTC) and plan.end == datetime(2025, 10, 26, 2, tzinfo=UTC)
    assert plan.reason is Reason.PARTIAL_PRICES


def test_spring_dst_day(spring_day: PriceCurve) -> None:
    plan = plan_energy(
        spring_day, max_power_kw=1.0, energy_kwh=23.0, earliest_start=spring_day.start, deadline=spring_day.end
    )
    assert plan.feasible and np.all(plan.power_kw == 1.0)
    _assert_unplanned(
        plan_energy(
            spring_day, max_power_kw=1.0, energy_kwh=23.5, earliest_start=spring_day.start, deadline=spring_day.end
        ),
        Reason.WINDOW_TOO_SHORT,
    )


def test_baseline_none_when_charging_from_the_start_meets_an_unknown_price() -> None:
    curve = make_curve([0.2, 0.2, np.nan, 0.1, 0.1])
    plan = plan_energy(curve, max_power_kw=2.0, energy_kwh=1.2, earliest_start=T0, deadline=T0 + 5 * SLOT)
    assert plan.feasible and plan.baseline_cost is None


@pytest.mark.parametrize(
    ("power", "energy"), [(0.0, 5.0), (-3.0, 5.0), (11.0, 0.0), (11.0, -1.0), (float("nan"), 5.0), (11.0, float("inf"))]
)
def test_malformed_arguments_raise(power: float, energy: float) -> None:
    with pytest.raises(ValueError):
        plan_energy(
            make_curve(np.full(8, 0.2)),
            max_power_kw=power,
            energy_kwh=energy,
            earliest_start=T0,
            deadline=T0 + 8 * SLOT,
        )


def test_naive_datetime_raises() -> None:
    with pytest.raises(ValueError, match="naive"):
        plan_energy(
            make_curve(np.full(8, 0.2)),
            max_power_kw=1.0,
            energy_kwh=1.0,
            earliest_start=T0,
            deadline=datetime(2026, 1, 6),
        )


def test_deterministic() -> None:
    curve = make_curve(np.round(np.random.default_rng(3).normal(0.2, 0.1, 192), 2))  # many exact ties
    kwargs = {
        "max_power_kw": 7.4,
        "energy_kwh": 33.3,
        "earliest_start": T0 + timedelta(hours=17),
        "deadline": T0 + timedelta(hours=31),
    }
    assert np.array_equal(plan_energy(curve, **kwargs).power_kw, plan_energy(curve, **kwargs).power_kw)
