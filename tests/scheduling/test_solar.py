"""PV forecasts on the slot grid (``scheduling.solar``), against a minute-by-minute oracle and worked examples."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
import math
from zoneinfo import ZoneInfo

from hypothesis import given, settings, strategies as st
import numpy as np
import pytest

from custom_components.agentic_hems.scheduling.solar import (
    combine, from_energy_periods, from_mean_power,
)

BRUSSELS = ZoneInfo("Europe/Brussels")
DAY = datetime(2026, 6, 1, tzinfo=BRUSSELS)  # local midnight, 22:00 UTC the day before


def minute_oracle(starts: list[datetime], kwh: list[float], grid: datetime, slots: int) -> np.ndarray:
    """Mean kW per 15-minute slot, from a per-minute energy array: each period's energy over its minutes, where a
    period ends at the next start but lasts at most the most common gap between starts, and at most an hour."""
    gaps = [int((b - a).total_seconds() // 60) for a, b in zip(starts, starts[1:])]
    period = min(Counter(gaps).most_common(1)[0][0], 60) if gaps else 60
    origin = min(starts[0], grid)
    end = max(starts[-1] + timedelta(minutes=period), grid + timedelta(minutes=15 * slots))
    minutes = np.zeros(int((end - origin).total_seconds() // 60))
    covered = np.zeros_like(minutes, dtype=bool)
    for i, (start, energy) in enumerate(zip(starts, kwh)):
        length = min(gaps[i], period) if i < len(gaps) else period
        first = int((start - origin).total_seconds() // 60)
        minutes[first:first + length] = energy / length
        covered[first:int((starts[i + 1] - origin).total_seconds() // 60) if i < len(gaps) else first + length] = True
    first = int((grid - origin).total_seconds() // 60)
    kw = np.array([minutes[first + 15 * k:first + 15 * k + 15].sum() * 4 for k in range(slots)])
    known = np.array([covered[first + 15 * k:first + 15 * k + 15].all() for k in range(slots)])
    return np.where(known, kw, np.nan)


def test_a_forecast_solar_day_spreads_each_period_over_its_own_minutes() -> None:
    """Forecast.Solar's shape: a sunrise period (05:30 local), then whole hours, nothing at night."""
    wh = {"2026-06-01T05:30:00+02:00": 150, "2026-06-01T06:00:00+02:00": 800, "2026-06-01T07:00:00+02:00": 2000,
          "2026-06-01T08:00:00+02:00": 400}
    forecast = from_energy_periods(wh, DAY, 96)
    assert forecast.start == datetime(2026, 5, 31, 22, tzinfo=UTC) and forecast.p10 is None
    assert np.isnan(forecast.p50[: 22]).all()  # before 05:30: the source says nothing yet
    assert forecast.p50[22:24] == pytest.approx([0.3, 0.3])  # 150 Wh over 30 minutes
    assert forecast.p50[24:28] == pytest.approx([0.8] * 4)
    assert forecast.p50[28:32] == pytest.approx([2.0] * 4)
    assert forecast.p50[32:36] == pytest.approx([0.4] * 4)
    assert np.isnan(forecast.p50[36:]).all()  # after the last period: unknown, never zero
    assert forecast.energy_kwh() == pytest.approx(3.35)


def test_the_night_between_two_days_produces_nothing() -> None:
    wh = {"2026-06-01T19:00:00+02:00": 300, "2026-06-02T06:00:00+02:00": 500}
    forecast = from_energy_periods(wh, DAY, 192)
    evening, morning = 4 * 19, 96 + 4 * 6
    assert forecast.p50[evening:evening + 4] == pytest.approx([0.3] * 4)
    assert forecast.p50[evening + 4:morning] == pytest.approx([0.0] * (morning - evening - 4))
    assert np.isnan(forecast.p50[morning + 4:]).all()


@settings(max_examples=150, deadline=None)
@given(
    offset=st.integers(0, 8 * 60),
    gaps=st.lists(st.sampled_from([15, 30, 60, 60, 60, 37, 600]), min_size=1, max_size=20),
    energy=st.lists(st.floats(0, 5000, allow_nan=False), min_size=21, max_size=21),
    grid_shift=st.integers(-4, 40),
)
def test_energy_periods_agree_with_the_minute_oracle(offset: int, gaps: list[int], energy: list[float],
                                                     grid_shift: int) -> None:
    first = DAY + timedelta(minutes=offset)
    starts = [first]
    for gap in gaps:
        starts.append(starts[-1] + timedelta(minutes=gap))
    wh = {s.isoformat(): e for s, e in zip(starts, energy)}
    grid = DAY + timedelta(minutes=15 * grid_shift)
    forecast = from_energy_periods(wh, grid, 120)
    expected = minute_oracle(starts, [e / 1000 for e in energy[: len(starts)]], grid, 120)
    np.testing.assert_allclose(forecast.p50, expected, rtol=1e-9, atol=1e-9)


def test_solcast_mean_power_with_quantiles() -> None:
    items = [
        {"period_start": "2026-06-01T10:00:00+02:00", "pv_estimate": 2.0, "pv_estimate10": 1.0, "pv_estimate90": 2.5},
        {"period_start": "2026-06-01T10:30:00+02:00", "pv_estimate": 3.0, "pv_estimate10": 2.0, "pv_estimate90": 3.4},
        {"period_start": datetime(2026, 6, 1, 9, 0, tzinfo=UTC), "pv_estimate": 4.0, "pv_estimate10": 3.0,
         "pv_estimate90": 4.4},
    ]
    forecast = from_mean_power(items, DAY + timedelta(hours=10), 8)
    assert forecast.p50[:6] == pytest.approx([2.0, 2.0, 3.0, 3.0, 4.0, 4.0]) and np.isnan(forecast.p50[6:]).all()
    assert forecast.p10 is not None and forecast.p90 is not None
    assert forecast.p10[:6] == pytest.approx([1.0, 1.0, 2.0, 2.0, 3.0, 3.0])
    assert forecast.p90[:6] == pytest.approx([2.5, 2.5, 3.4, 3.4, 4.4, 4.4])
    assert forecast.energy_kwh() == pytest.approx(4.5)
    without = from_mean_power([{k: v for k, v in i.items() if k != "pv_estimate90"} for i in items],
                              DAY + timedelta(hours=10), 8)
    assert without.p10 is None and without.p90 is None and without.p50[:6] == pytest.approx(forecast.p50[:6])


@pytest.mark.parametrize(
    ("bad", "note"),
    [
        (math.inf, "not a finite, non-negative value"),
        (-50.0, "not a finite, non-negative value"),
        ("700", "not a finite, non-negative value"),
        (None, "not a finite, non-negative value"),
    ],
)
def test_a_bad_value_makes_its_period_unknown_and_says_so(bad: object, note: str) -> None:
    wh = {"2026-06-01T10:00:00+02:00": 400, "2026-06-01T11:00:00+02:00": bad, "2026-06-01T12:00:00+02:00": 800}
    forecast = from_energy_periods(wh, DAY + timedelta(hours=10), 12)
    assert forecast.p50[:4] == pytest.approx([0.4] * 4) and forecast.p50[8:] == pytest.approx([0.8] * 4)
    assert np.isnan(forecast.p50[4:8]).all()
    assert forecast.notes == (f"2026-06-01T09:00:00+00:00: {note}",)


def test_conflicting_duplicates_and_unreadable_instants_are_refused() -> None:
    # the same instant written twice (local and UTC) with different values: its period is unknown
    wh = {"2026-06-01T10:00:00+02:00": 400, "2026-06-01T08:00:00+00:00": 500, "2026-06-01T11:00:00+02:00": 800,
          "11:00": 100, "2026-06-01T12:00:00": 5}
    forecast = from_energy_periods(wh, DAY + timedelta(hours=10), 8)
    assert np.isnan(forecast.p50[:4]).all() and forecast.p50[4:8] == pytest.approx([0.8] * 4)
    assert forecast.notes == ("2026-06-01T08:00:00+00:00: two different values", "'11:00': not an instant with an offset",
                              "'2026-06-01T12:00:00': not an instant with an offset")
    same = from_energy_periods({"2026-06-01T10:00:00+02:00": 400, "2026-06-01T08:00:00+00:00": 400},
                               DAY + timedelta(hours=10), 4)
    assert same.p50 == pytest.approx([0.4] * 4) and same.notes == ()


def test_nothing_published_is_all_unknown() -> None:
    for forecast in (from_energy_periods({}, DAY, 4), from_mean_power([], DAY, 4), from_mean_power(["x"], DAY, 4)):  # type: ignore[list-item]
        assert np.isnan(forecast.p50).all() and forecast.energy_kwh() == 0.0


def test_combine_sums_arrays_and_keeps_unknown() -> None:
    east = from_energy_periods({"2026-06-01T08:00:00+02:00": 1000, "2026-06-01T09:00:00+02:00": 500}, DAY, 96)
    west = from_energy_periods({"2026-06-01T07:00:00+02:00": 200, "2026-06-01T08:00:00+02:00": 300,
                                "2026-06-01T09:00:00+02:00": 600}, DAY, 96)
    both = combine([east, west])
    assert np.isnan(both.p50[28:32]).all()  # 07:00-08:00: the east array's forecast has not begun
    assert both.p50[32:40] == pytest.approx([1.3] * 4 + [1.1] * 4)
    assert both.p10 is None
    with pytest.raises(ValueError, match="one grid"):
        combine([east, from_energy_periods({}, DAY, 95)])
    with pytest.raises(ValueError, match="one grid"):
        combine([])
