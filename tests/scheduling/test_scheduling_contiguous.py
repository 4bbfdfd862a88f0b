"""plan_contiguous against brute force, and its boundary rules."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from custom_components.agentic_hems.prices.curve import PriceCurve, floor_slot
from custom_components.agentic_hems.scheduling import Plan, Reason, plan_contiguous
from custom_components.agentic_hems.scheduling.ties import TIE_ABS, TIE_REL

from .conftest import BRUSSELS, SLOT, T0, any_price, curves, local_day_curve, make_curve, noisy, windows
from .oracles import brute_contiguous, run_slots, usable


def _check_shape(plan: Plan, curve: PriceCurve) -> None:
    assert plan.power_kw.shape == (len(curve),)
    assert plan.curve_start == curve.start and plan.resolution == curve.resolution
    assert plan.method == "window_sums"
    assert plan.currency == curve.currency


def _assert_unplanned(plan: Plan, reason: Reason) -> None:
    assert not plan.feasible
    assert plan.reason is reason
    assert plan.start is None and plan.end is None and plan.cost is None
    assert not plan.power_kw.any()
    assert plan.energy_kwh == 0.0
    assert plan.detail


@settings(derandomize=True, max_examples=300, deadline=None)
@given(data=st.data())
def test_optimal_against_brute_force(data: st.DataObject) -> None:
    curve = data.draw(curves())
    earliest, deadline = data.draw(windows(curve))
    duration = data.draw(st.integers(1, 240))
    power = data.draw(st.sampled_from([0.5, 1.0, 2.0, 2.5, 3.0]))
    plan = plan_contiguous(curve, power_kw=power, duration_min=duration, earliest_start=earliest, deadline=deadline)
    expected = brute_contiguous(curve, power_kw=power, duration_min=duration, earliest=earliest, deadline=deadline)
    _check_shape(plan, curve)
    if expected is None:
        assert not plan.feasible
        assert plan.reason in (Reason.WINDOW_TOO_SHORT, Reason.NO_PRICES)
        return
    cost, start = expected
    slots = run_slots(duration)
    assert plan.feasible
    assert plan.cost == cost  # dyadic prices: exact
    assert plan.start == curve.slot_start(start)  # exact ties resolve to the earliest start
    assert plan.end == curve.slot_start(start + slots)
    expected_power = np.zeros(len(curve))
    expected_power[start : start + slots] = power
    assert np.array_equal(plan.power_kw, expected_power)
    assert plan.energy_kwh == power * slots * 0.25
    window_known = all(
        not np.isnan(curve.prices[i])
        for i in range(len(curve))
        if curve.slot_start(i) >= earliest and curve.slot_start(i) + SLOT <= deadline
    )
    if window_known and floor_slot(deadline) <= curve.end:
        assert plan.reason is Reason.OPTIMAL
    else:
        assert plan.reason is Reason.PARTIAL_PRICES
        assert "no price" in plan.detail


@settings(derandomize=True, max_examples=100, deadline=None)
@given(data=st.data())
def test_optimal_cost_with_arbitrary_float_prices(data: st.DataObject) -> None:
    curve = data.draw(curves(price=any_price, nan=False))
    earliest, deadline = data.draw(windows(curve))
    duration = data.draw(st.integers(1, 180))
    plan = plan_contiguous(curve, power_kw=2.2, duration_min=duration, earliest_start=earliest, deadline=deadline)
    expected = brute_contiguous(curve, power_kw=2.2, duration_min=duration, earliest=earliest, deadline=deadline)
    assert (expected is None) == (not plan.feasible)
    if expected is not None:  # optimal up to the tie tolerance, which sends near-ties to the earliest start
        energy = 2.2 * 0.25 * run_slots(duration)
        window = [p for i, p in enumerate(curve.prices) if usable(curve, i, earliest, deadline)]
        tolerance = TIE_REL * max(abs(p) for p in window) * energy + TIE_ABS
        assert expected[0] - 1e-12 <= plan.cost <= expected[0] + tolerance + 1e-12
        assert plan.start <= curve.slot_start(expected[1])


@settings(derandomize=True, max_examples=200, deadline=None)
@given(data=st.data())
def test_ties_go_to_the_earliest_start_whatever_the_float_noise(data: st.DataObject) -> None:
    """Dyadic prices, some reached by another float sum: the run starts where brute force on exact prices says."""
    exact = data.draw(curves(nan=False, price=st.sampled_from([0.3, 0.3, 0.3, 0.7])))
    curve = exact.replace(prices=noisy(exact.prices, data))
    earliest, deadline = data.draw(windows(curve))
    duration = data.draw(st.integers(1, 180))
    plan = plan_contiguous(curve, power_kw=2.2, duration_min=duration, earliest_start=earliest, deadline=deadline)
    expected = brute_contiguous(exact, power_kw=2.2, duration_min=duration, earliest=earliest, deadline=deadline)
    assert (expected is None) == (not plan.feasible)
    if expected is not None:
        assert plan.start == curve.slot_start(expected[1])


def test_cheapest_window_and_baseline() -> None:
    prices = [0.30, 0.28, 0.25, 0.10, 0.05, 0.12, 0.40, 0.35]
    curve = make_curve(prices)
    plan = plan_contiguous(curve, power_kw=2.0, duration_min=30, earliest_start=T0, deadline=T0 + 8 * SLOT)
    assert plan.feasible and plan.reason is Reason.OPTIMAL and plan.detail == ""
    assert plan.start == T0 + 3 * SLOT and plan.end == T0 + 5 * SLOT
    assert plan.cost == pytest.approx((0.10 + 0.05) * 2.0 * 0.25)
    assert plan.baseline_cost == pytest.approx((0.30 + 0.28) * 2.0 * 0.25)
    assert plan.savings == pytest.approx((0.58 - 0.15) * 0.5)
    assert plan.energy_kwh == pytest.approx(1.0)
    assert plan.is_running(T0 + 3 * SLOT) and not plan.is_running(T0 + 5 * SLOT)


def test_ties_go_to_the_earliest_start() -> None:
    curve = make_curve([0.2, 0.1, 0.1, 0.2, 0.1, 0.1, 0.2])
    plan = plan_contiguous(curve, power_kw=1.0, duration_min=30, earliest_start=T0, deadline=T0 + 7 * SLOT)
    assert plan.start == T0 + SLOT
    flat = make_curve(np.full(96, 0.1))
    plan = plan_contiguous(flat, power_kw=1.0, duration_min=120, earliest_start=T0 + 10 * SLOT, deadline=T0 + 96 * SLOT)
    assert plan.start == T0 + 10 * SLOT


def test_negative_prices_are_sought() -> None:
    curve = make_curve([0.1, 0.05, -0.02, -0.04, 0.0, 0.2])
    plan = plan_contiguous(curve, power_kw=3.0, duration_min=30, earliest_start=T0, deadline=T0 + 6 * SLOT)
    assert plan.start == T0 + 2 * SLOT
    assert plan.cost == pytest.approx(-0.06 * 3.0 * 0.25)
    assert plan.savings is not None and plan.savings > 0


def test_rounding_of_earliest_start_deadline_and_duration() -> None:
    curve = make_curve(np.linspace(0.5, 0.1, 16))  # cheaper the later
    # earliest 00:07 -> 00:15; deadline 03:52 -> 03:45; 50 minutes -> 4 slots (1 h).
    plan = plan_contiguous(
        curve,
        power_kw=1.0,
        duration_min=50,
        earliest_start=T0 + timedelta(minutes=7),
        deadline=T0 + timedelta(hours=3, minutes=52),
    )
    assert plan.end == T0 + timedelta(hours=3, minutes=45)
    assert plan.start == T0 + timedelta(hours=2, minutes=45)
    assert plan.energy_kwh == pytest.approx(1.0)
    first = plan_contiguous(
        make_curve(np.linspace(0.1, 0.5, 16)),  # cheaper the earlier
        power_kw=1.0,
        duration_min=45,
        earliest_start=T0 + timedelta(minutes=7),
        deadline=T0 + timedelta(hours=4),
    )
    assert first.start == T0 + SLOT and first.end == T0 + 4 * SLOT  # 45 minutes stay 3 slots


def test_any_timezone_gives_the_same_plan() -> None:
    curve = make_curve(np.sin(np.arange(96) / 7.0))
    earliest, deadline = T0 + timedelta(hours=3, minutes=5), T0 + timedelta(hours=20, minutes=40)
    plans = [
        plan_contiguous(
            curve,
            power_kw=2.0,
            duration_min=95,
            earliest_start=earliest.astimezone(zone),
            deadline=deadline.astimezone(zone),
        )
        for zone in (UTC, BRUSSELS, ZoneInfo("America/New_York"), ZoneInfo("Asia/Kolkata"))
    ]
    for plan in plans[1:]:
        assert np.array_equal(plan.power_kw, plans[0].power_kw)
        assert plan.start == plans[0].start


def test_spring_dst_day_has_92_slots(spring_day: PriceCurve) -> None:
    assert len(spring_day) == 92
    start, end = spring_day.start, spring_day.end
    whole = plan_contiguous(spring_day, power_kw=1.0, duration_min=23 * 60, earliest_start=start, deadline=end)
    assert whole.feasible and whole.start == start and whole.end == end
    too_long = plan_contiguous(spring_day, power_kw=1.0, duration_min=24 * 60, earliest_start=start, deadline=end)
    _assert_unplanned(too_long, Reason.WINDOW_TOO_SHORT)
    assert "92 slots" in too_long.detail


def test_autumn_dst_day_uses_the_repeated_hour() -> None:
    # 2025-10-26 Brussels: 02:00-03:00 happens twice; the second one is 01:00-02:00 UTC (slots 12..15 of the day).
    curve = local_day_curve(date(2025, 10, 26), lambda i: 0.05 if 12 <= i < 16 else 0.30)
    assert len(curve) == 100
    local_midnight = datetime(2025, 10, 26, tzinfo=BRUSSELS)
    plan = plan_contiguous(
        curve, power_kw=2.0, duration_min=60, earliest_start=local_midnight, deadline=local_midnight + timedelta(days=1)
    )
    assert plan.start == datetime(2025, 10, 26, 1, 0, tzinfo=UTC)
    assert plan.start.astimezone(BRUSSELS).strftime("%H:%M %Z") == "02:00 CET"
    whole = plan_contiguous(curve, power_kw=1.0, duration_min=25 * 60, earliest_start=curve.start, deadline=curve.end)
    assert whole.feasible and whole.energy_kwh == pytest.approx(25.0)


def test_deadline_across_midnight_into_tomorrow() -> None:
    # Two local days; the cheap block is at 03:00-04:00 local tomorrow.
    start = datetime(2026, 1, 5, tzinfo=BRUSSELS)
    cheap = datetime(2026, 1, 6, 3, tzinfo=BRUSSELS)
    prices = [
        0.05 if start + i * SLOT >= cheap and start + i * SLOT < cheap + timedelta(hours=1) else 0.25
        for i in range(192)
    ]
    curve = make_curve(prices, start.astimezone(UTC))
    plan = plan_contiguous(
        curve,
        power_kw=1.5,
        duration_min=60,
        earliest_start=datetime(2026, 1, 5, 22, tzinfo=BRUSSELS),
        deadline=datetime(2026, 1, 6, 6, 30, tzinfo=BRUSSELS),
    )
    assert plan.start == cheap.astimezone(UTC)
    assert plan.baseline_cost == pytest.approx(0.25 * 1.5)  # starting at 22:00


def test_nan_tail_plans_on_known_prices() -> None:
    prices = np.full(96, np.nan)
    prices[:64] = np.linspace(0.3, 0.1, 64)  # known until 16:00 UTC, cheapest just before
    curve = make_curve(prices)
    plan = plan_contiguous(curve, power_kw=2.0, duration_min=60, earliest_start=T0, deadline=T0 + timedelta(hours=30))
    assert plan.feasible and plan.reason is Reason.PARTIAL_PRICES
    assert plan.end == T0 + timedelta(hours=16)
    assert "prices known until 2026-01-05T16:00Z" in plan.detail
    assert not np.any(plan.power_kw[64:])


def test_deadline_beyond_curve_end_is_partial() -> None:
    curve = make_curve(np.full(8, 0.2))
    plan = plan_contiguous(curve, power_kw=1.0, duration_min=30, earliest_start=T0, deadline=T0 + timedelta(hours=5))
    assert plan.feasible and plan.reason is Reason.PARTIAL_PRICES
    assert plan.start == T0
    assert "12 of 20 slots" in plan.detail


def test_known_part_too_short_or_unknown_window() -> None:
    prices = np.full(16, np.nan)
    prices[:4] = 0.2
    curve = make_curve(prices)
    short = plan_contiguous(curve, power_kw=1.0, duration_min=90, earliest_start=T0, deadline=T0 + 16 * SLOT)
    _assert_unplanned(short, Reason.WINDOW_TOO_SHORT)
    assert "prices known until 2026-01-05T01:00Z" in short.detail
    nothing = plan_contiguous(
        curve, power_kw=1.0, duration_min=30, earliest_start=T0 + 5 * SLOT, deadline=T0 + 16 * SLOT
    )
    _assert_unplanned(nothing, Reason.NO_PRICES)
    after = plan_contiguous(
        curve, power_kw=1.0, duration_min=30, earliest_start=T0 + timedelta(days=2), deadline=T0 + timedelta(days=3)
    )
    _assert_unplanned(after, Reason.NO_PRICES)


def test_a_run_never_spans_a_nan_hole() -> None:
    prices = np.array([0.5, 0.5, 0.01, np.nan, 0.01, 0.5, 0.2, 0.2, 0.3])
    curve = make_curve(prices)
    plan = plan_contiguous(curve, power_kw=1.0, duration_min=30, earliest_start=T0, deadline=T0 + 9 * SLOT)
    assert plan.start == T0 + 6 * SLOT  # 0.2 + 0.2 beats 0.5 + 0.01 and 0.01 + 0.5; 0.01 + NaN + 0.01 is no run
    assert plan.reason is Reason.PARTIAL_PRICES and "1 of 9 slots" in plan.detail


def test_window_starting_before_the_curve_is_clipped() -> None:
    curve = make_curve([0.1, 0.2, 0.3, 0.4])
    plan = plan_contiguous(
        curve, power_kw=1.0, duration_min=30, earliest_start=T0 - timedelta(hours=5), deadline=T0 + 4 * SLOT
    )
    assert plan.start == T0 and plan.reason is Reason.OPTIMAL
    assert plan.baseline_cost == pytest.approx(plan.cost)


def test_window_too_short_and_inverted_window() -> None:
    curve = make_curve(np.full(16, 0.2))
    _assert_unplanned(
        plan_contiguous(curve, power_kw=1.0, duration_min=1e15, earliest_start=T0, deadline=T0 + 16 * SLOT),
        Reason.WINDOW_TOO_SHORT,
    )
    _assert_unplanned(
        plan_contiguous(curve, power_kw=1.0, duration_min=120, earliest_start=T0, deadline=T0 + timedelta(minutes=110)),
        Reason.WINDOW_TOO_SHORT,
    )
    _assert_unplanned(
        plan_contiguous(curve, power_kw=1.0, duration_min=15, earliest_start=T0 + SLOT * 4, deadline=T0 + SLOT),
        Reason.WINDOW_TOO_SHORT,
    )
    # 00:05 to 00:25 holds no whole slot.
    _assert_unplanned(
        plan_contiguous(
            curve,
            power_kw=1.0,
            duration_min=5,
            earliest_start=T0 + timedelta(minutes=5),
            deadline=T0 + timedelta(minutes=25),
        ),
        Reason.WINDOW_TOO_SHORT,
    )


def test_baseline_none_when_the_first_run_touches_an_unknown_price() -> None:
    curve = make_curve([0.2, np.nan, 0.1, 0.1, 0.3])
    plan = plan_contiguous(curve, power_kw=1.0, duration_min=30, earliest_start=T0, deadline=T0 + 5 * SLOT)
    assert plan.feasible and plan.baseline_cost is None and plan.savings is None


@pytest.mark.parametrize(
    ("power", "duration"),
    [
        (0.0, 60),
        (-1.0, 60),
        (float("nan"), 60),
        (float("inf"), 60),
        (1.0, 0),
        (1.0, -15),
        (1.0, float("nan")),
    ],
)
def test_malformed_arguments_raise(power: float, duration: float) -> None:
    curve = make_curve(np.full(8, 0.2))
    with pytest.raises(ValueError):
        plan_contiguous(curve, power_kw=power, duration_min=duration, earliest_start=T0, deadline=T0 + 8 * SLOT)


def test_non_numbers_raise_type_error() -> None:
    curve = make_curve(np.full(8, 0.2))
    with pytest.raises(TypeError):
        plan_contiguous(curve, power_kw=True, duration_min=60, earliest_start=T0, deadline=T0 + 8 * SLOT)
    with pytest.raises(TypeError):
        plan_contiguous(curve, power_kw=1.0, duration_min="60", earliest_start=T0, deadline=T0 + 8 * SLOT)  # type: ignore[arg-type]


def test_naive_datetimes_raise() -> None:
    curve = make_curve(np.full(8, 0.2))
    with pytest.raises(ValueError, match="naive"):
        plan_contiguous(
            curve, power_kw=1.0, duration_min=30, earliest_start=datetime(2026, 1, 5), deadline=T0 + 8 * SLOT
        )
    with pytest.raises(ValueError, match="naive"):
        plan_contiguous(curve, power_kw=1.0, duration_min=30, earliest_start=T0, deadline=datetime(2026, 1, 6))


def test_deterministic_and_serialisable() -> None:
    curve = make_curve(np.round(np.random.default_rng(7).normal(0.2, 0.1, 192), 4))
    kwargs = {
        "power_kw": 2.0,
        "duration_min": 135,
        "earliest_start": T0 + timedelta(hours=5),
        "deadline": T0 + timedelta(hours=40),
    }
    first, second = (
        plan_contiguous(curve, **kwargs, name="dishwasher"),
        plan_contiguous(curve, **kwargs, name="dishwasher"),
    )
    assert np.array_equal(first.power_kw, second.power_kw)
    assert first.as_dict() == second.as_dict()
    again = Plan.from_dict(first.as_dict())
    assert again.start == first.start and again.name == "dishwasher" and again.reason is first.reason
