"""One regression per class of input that made a plan stand on a price the source never published.

Each test first asserts what a reader or planner must do in terms both the old and the new code offer (NaN where a
price is unknown, the exception raised, the plan's reason), then the note that says why. Module imports are the
names the code had before the trust model, so that every test here also runs, and fails, on that code.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
import math
from typing import Any
from zoneinfo import ZoneInfo

from a44 import period, publication, time_series
import numpy as np
import pytest

from custom_components.agentic_hems.prices import PriceSourceError, curve_from_attributes, parse_day_ahead
from custom_components.agentic_hems.scheduling import LoadSpec, Reason, plan_energy, plan_joint

ISO = "%Y-%m-%dT%H:%MZ"
DAY1 = datetime(2024, 10, 7, 22, tzinfo=UTC)  # the delivery day 2024-10-08 (CEST)
DAY2 = DAY1 + timedelta(days=1)
STOCKHOLM = ZoneInfo("Europe/Stockholm")
T0 = datetime(2025, 1, 14, tzinfo=STOCKHOLM)  # local midnight, 2025-01-13T23:00Z
T1 = T0 + timedelta(days=1)
HOUR = timedelta(hours=1)


def day(start: datetime, points: list[Any] | dict[int, Any]) -> str:
    """An hourly <Period> over the 24-hour delivery day from ``start``."""
    return period(start.strftime(ISO), (start + timedelta(days=1)).strftime(ISO), points, "PT60M")


def raw(start: datetime, values: list[Any]) -> list[dict[str, Any]]:
    return [{"start": start + i * HOUR, "end": start + (i + 1) * HOUR, "value": v} for i, v in enumerate(values)]


def timed(start: datetime, values: list[Any]) -> list[dict[str, Any]]:
    return [{"time": (start + i * HOUR).isoformat(), "price": v} for i, v in enumerate(values)]


# --- zeros that mean "not published" ----------------------------------------------------------------------------


def test_a_day_of_zeros_is_never_an_optimal_free_day_for_the_ev() -> None:
    """ENTSO-E fetched before publication, tomorrow all 0.0: an EV plan placed there is not called optimal."""
    curve = parse_day_ahead(publication(time_series(day(DAY1, [80.0] * 24), day(DAY2, [0.0] * 24))))
    plan = plan_energy(curve, max_power_kw=11.0, energy_kwh=20.0, earliest_start=DAY1, deadline=DAY2 + 24 * HOUR)
    assert plan.power_kw[96:].any() and plan.cost == 0.0  # the zeros are used, but...
    assert plan.reason != Reason.OPTIMAL  # ...not silently
    assert plan.reason == "doubtful_prices"
    assert "every price is exactly 0" in plan.detail


# --- short or stale plain lists stretched over a day -------------------------------------------------------------


def test_a_short_plain_tomorrow_is_not_stretched_over_the_day() -> None:
    """Four tomorrow values (the auction still running) are not spread over the day, six hours each."""
    attributes = {"today": [1.0] * 24, "tomorrow": [2.0, 3.0, 4.0, 5.0]}
    curve = curve_from_attributes(attributes, unit="EUR/kWh", day_start=T0)
    assert curve.prices[:96] == pytest.approx([1.0] * 96)
    assert np.isnan(curve.prices[96:]).all()
    assert curve.note_at(96).issue == "not_whole_day" and "4 prices" in curve.note_at(96).detail


def test_a_stale_tomorrow_copy_marked_invalid_by_its_source_is_unknown() -> None:
    """HACS Nord Pool keeps today's list in ``tomorrow`` with ``tomorrow_valid: false``: not 96 known slots."""
    today = [float(i) for i in range(96)]
    attributes = {"today": today, "tomorrow": list(today), "tomorrow_valid": False}
    curve = curve_from_attributes(attributes, unit="EUR/kWh", day_start=T0)
    assert curve.prices[:96] == pytest.approx(today)
    assert np.isnan(curve.prices[96:]).all()
    assert curve.note_at(100).issue == "source_invalid" and "tomorrow_valid: False" in curve.note_at(100).detail


# --- one bad value discards a good day ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape",
    [
        lambda bad: {"today": [1.0] * 24, "tomorrow": [2.0] * 23 + [bad]},
        lambda bad: {"raw_today": raw(T0, [1.0] * 24), "raw_tomorrow": raw(T1, [2.0] * 23 + [bad])},
        lambda bad: {"prices_today": timed(T0, [1.0] * 24), "prices_tomorrow": timed(T1, [bad] + [2.0] * 23)},
        lambda bad: {"prices": timed(T0, [1.0] * 24 + [2.0] * 12 + [bad] + [2.0] * 11)},
    ],
    ids=["plain", "raw", "timed", "combined"],
)
@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan, "inf", "NaN", "cheap"])
def test_one_bad_tomorrow_value_keeps_todays_prices(shape: Any, bad: object) -> None:
    curve = curve_from_attributes(shape(bad), unit="EUR/kWh", day_start=T0)
    assert curve.prices[:96] == pytest.approx([1.0] * 96)
    assert np.isnan(curve.prices[96:192]).all()
    note = curve.note_at(150)
    assert note.issue == "bad_value" and "2025-01-15" in note.detail


# --- points outside their period ---------------------------------------------------------------------------------


def test_points_beyond_their_period_create_no_prices_for_the_next_day() -> None:
    """Positions 25 and 26 of a 24-hour Period belong to no period: that day is refused, the next keeps its own."""
    document = publication(time_series(day(DAY1, [50.0] * 24 + [1.0, 2.0])), time_series(day(DAY2, [40.0] * 24)))
    curve = parse_day_ahead(document)
    assert np.isnan(curve.prices[:96]).all()
    assert curve.prices[96:] == pytest.approx([0.04] * 96)
    assert curve.note_at(0).issue == "outside_period"
    assert "position 25 (2024-10-08T22:00Z) lies beyond the period's 24 positions" in curve.note_at(0).detail


# --- conflicts mixed silently ------------------------------------------------------------------------------------


def test_two_day_ahead_series_with_different_prices_are_not_merged_hour_by_hour() -> None:
    other = [50.0] * 24
    other[7] = 55.0
    document = publication(
        time_series(day(DAY1, [50.0] * 24)), time_series(day(DAY1, other)), time_series(day(DAY2, [1.0] * 24))
    )
    curve = parse_day_ahead(document)
    assert np.isnan(curve.prices[:96]).all()
    assert curve.prices[96:] == pytest.approx([0.001] * 96)
    assert curve.note_at(0).issue == "conflict" and "two prices for 2024-10-08T05:00Z" in curve.note_at(0).detail


def test_the_same_instant_twice_is_refused_with_the_instant_named() -> None:
    """A 25-hour day written with local times built without ``fold``: 02:00 twice, one instant, two prices."""
    start = datetime(2025, 10, 26, tzinfo=STOCKHOLM)
    hours = [0, 1, 2, 2, *range(3, 24)]
    items = [
        {"start": start.replace(hour=h), "end": start.replace(hour=h) + HOUR, "value": float(k)}
        for k, h in enumerate(hours)
    ]
    with pytest.raises(PriceSourceError, match=r"two prices for 2025-10-26T00:00Z: 2 and 3 per kWh"):
        curve_from_attributes({"raw_today": items}, unit="EUR/kWh", day_start=start)


@pytest.mark.parametrize("key", ["raw", "prices"])
def test_a_tomorrow_list_dated_today_does_not_override_today(key: str) -> None:
    if key == "raw":
        attributes = {"raw_today": raw(T0, [1.0] * 24), "raw_tomorrow": raw(T0, [9.0] * 24)}
    else:
        attributes = {"prices_today": timed(T0, [1.0] * 24), "prices_tomorrow": timed(T0, [9.0] * 24)}
    curve = curve_from_attributes(attributes, unit="EUR/kWh", day_start=T0)
    assert curve.prices[:96] == pytest.approx([1.0] * 96)
    assert len(curve) == 192 and np.isnan(curve.prices[96:]).all()
    assert curve.note_at(96).issue == "wrong_day"
    assert curve.note_at(96).detail == f"{key}_tomorrow (2025-01-15): holds an item at 2025-01-13T23:00Z"


# --- non-finite values -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["INF", "-INF", "NaN"])
def test_non_finite_entsoe_prices_are_refused_and_the_joint_planner_plans_around_them(bad: str) -> None:
    document = publication(time_series(day(DAY1, [80.0] * 24), day(DAY2, [40.0] * 10 + [bad] + [40.0] * 13)))
    curve = parse_day_ahead(document)
    assert np.isfinite(curve.prices[:96]).all() and np.isnan(curve.prices[96:]).all()
    window = {"earliest_start": DAY1, "deadline": DAY2 + 24 * HOUR}
    loads = [
        LoadSpec("dw", power_kw=2.0, duration_min=120, **window),
        LoadSpec("ev", power_kw=11.0, energy_kwh=20.0, contiguous=False, **window),
    ]
    for plan in plan_joint(curve, loads, power_limit_kw=12.0):
        assert plan.feasible and math.isfinite(plan.cost) and not plan.power_kw[96:].any()
        assert plan.reason == Reason.PARTIAL_PRICES and "not a finite price" in plan.detail
