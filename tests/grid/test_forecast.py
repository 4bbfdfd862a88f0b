"""forecast: pinball loss and resampling against hand-computed values and brute-force oracles; the profile model and
the persistence baseline against independently written fits; model selection by backtest; validation keys."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
import math

import numpy as np
import pytest

from custom_components.agentic_hems.grid.forecast import (
    MAX_HORIZON_H,
    ForecastError,
    forecast,
    pinball_loss,
    resample,
)

T0 = datetime(2024, 3, 1, tzinfo=UTC)  # a UTC midnight
HOUR = timedelta(hours=1)
Q3 = [0.1, 0.5, 0.9]
PROFILE = np.array(
    [0.3, 0.3, 0.3, 0.3, 0.3, 0.35, 0.8, 1.5, 1.2, 0.6, 0.5, 0.45,
     0.55, 0.5, 0.45, 0.5, 0.7, 1.0, 2.0, 2.5, 2.2, 1.5, 0.9, 0.5]
)  # kW per UTC hour


def hourly(values: np.ndarray, start: datetime = T0) -> list[datetime]:
    return [start + i * HOUR for i in range(len(values))]


def daily_load(days: int, noise: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.tile(PROFILE, days) + rng.normal(0.0, noise, 24 * days)


def pinball_oracle(actual: np.ndarray, predicted: dict[float, np.ndarray]) -> float:
    """The definition, one loop over quantiles and steps."""
    total, count = 0.0, 0
    for q, pred in predicted.items():
        for y, p in zip(actual, pred, strict=True):
            total += q * (y - p) if y >= p else (1 - q) * (p - y)
            count += 1
    return total / count


def persistence_oracle(x: np.ndarray, horizon: int, qs: list[float]) -> np.ndarray:
    """Last value plus the empirical quantiles of the lead-k changes (full, gap-free history, k < len(x))."""
    return np.array([[x[-1] + np.quantile(x[k:] - x[:-k], q) for k in range(1, horizon + 1)] for q in qs])


def profile_oracle(x: np.ndarray, horizon: int, qs: list[float]) -> np.ndarray:
    """Whole UTC days starting at midnight: column h of the days x hours table, quantile over days."""
    table = x.reshape(-1, 24)
    return np.array([[np.quantile(table[:, h % 24], q) for h in range(horizon)] for q in qs])


# pinball_loss


def test_pinball_by_hand() -> None:
    # q 0.5: |1-0|/2, |2-4|/2 -> 0.75; q 0.9: 0.9*1, 0.1*2 -> 0.55; mean 0.65
    assert pinball_loss([1.0, 2.0], {0.5: [0.0, 4.0], 0.9: [0.0, 4.0]}) == pytest.approx(0.65, abs=1e-15)
    assert pinball_loss([3.0], {0.25: [3.0]}) == 0.0


def test_pinball_against_definition() -> None:
    rng = np.random.default_rng(11)
    actual = rng.normal(0, 1, 50)
    predicted = {q: rng.normal(0, 1, 50) for q in (0.05, 0.3, 0.5, 0.77, 0.95)}
    assert pinball_loss(actual, predicted) == pytest.approx(pinball_oracle(actual, predicted), rel=1e-13)


def test_pinball_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        pinball_loss([1.0], {})
    with pytest.raises(ValueError):
        pinball_loss([], {0.5: []})
    with pytest.raises(ValueError):
        pinball_loss([1.0, 2.0], {0.5: [1.0]})
    with pytest.raises(ValueError):
        pinball_loss([1.0], {1.0: [1.0]})


# resample


def test_resample_by_hand() -> None:
    at = [T0 + timedelta(minutes=m) for m in (30, 75, 120, 150)]
    out = resample(at, [2.0, 4.0, math.nan, 1.0], T0, T0 + 3 * HOUR, 60)
    # step 0: only [00:30, 01:00) is defined -> 2; step 1: 15 min of 2, 45 min of 4 -> 3.5;
    # step 2: [02:00, 02:30) unavailable, then 1 -> 1
    np.testing.assert_allclose(out, [2.0, 3.5, 1.0], rtol=0, atol=1e-15)


def test_resample_holds_across_boundaries_and_window_start() -> None:
    # 5 from the day before, held through step 0 and 40 min of step 1, then 2: (40*5 + 20*2)/60 = 4
    at = [T0 - timedelta(hours=1), T0 + timedelta(minutes=100)]
    np.testing.assert_allclose(resample(at, [5.0, 2.0], T0, T0 + 3 * HOUR, 60), [5.0, 4.0, 2.0], atol=1e-15)
    # steps before the first sample are NaN; unsorted input; for equal times the later entry wins
    at = [T0 + 3 * HOUR, T0 + 2 * HOUR, T0 + 2 * HOUR]
    out = resample(at, [9.0, 1.0, 7.0], T0, T0 + 4 * HOUR, 60)
    assert np.isnan(out[:2]).all()
    np.testing.assert_allclose(out[2:], [7.0, 9.0])
    # the window's time zone does not matter; 15-minute steps
    cet = timezone(timedelta(hours=1))
    out = resample([T0], [3.0], T0.astimezone(cet), (T0 + HOUR).astimezone(cet), 15)
    np.testing.assert_allclose(out, [3.0] * 4)


def test_resample_against_minute_grid() -> None:
    """Random states on whole minutes (with gaps) against the held value read off minute by minute."""
    rng = np.random.default_rng(5)
    minutes = np.sort(rng.choice(np.arange(-30, 600), size=80, replace=False))
    vals = rng.normal(1.0, 0.5, minutes.size)
    vals[rng.random(minutes.size) < 0.1] = np.nan
    at = [T0 + timedelta(minutes=int(m)) for m in minutes]
    out = resample(at, list(vals), T0, T0 + 10 * HOUR, 30)
    expected = []
    for step in range(20):
        seen = []
        for minute in range(30 * step, 30 * step + 30):
            before = np.flatnonzero(minutes <= minute)
            if before.size and np.isfinite(vals[before[-1]]):
                seen.append(vals[before[-1]])
        expected.append(np.mean(seen) if seen else np.nan)
    np.testing.assert_allclose(out, expected, rtol=1e-12, equal_nan=True)


def test_resample_rejects_bad_input() -> None:
    naive = datetime(2024, 3, 1)
    with pytest.raises(ValueError):
        resample([naive], [1.0], T0, T0 + HOUR, 60)
    with pytest.raises(ValueError):
        resample([T0], [1.0], naive, T0 + HOUR, 60)
    with pytest.raises(ValueError):
        resample([T0], [1.0], T0, T0 + timedelta(minutes=90), 60)
    with pytest.raises(ValueError):
        resample([T0], [1.0, 2.0], T0, T0 + HOUR, 60)


# forecast: the profile model


def test_daily_profile_model_wins() -> None:
    load = daily_load(14, 0.02, seed=1)
    now = T0 + timedelta(days=14) - HOUR  # the last sample; the forecast starts at the next midnight
    f = forecast(hourly(load), list(load), now=now, horizon_h=24, quantiles=Q3)
    assert f.baseline is False and f.model_version == "profile-1"
    assert f.starts == [T0 + timedelta(days=14) + h * HOUR for h in range(24)]
    assert f.history_steps == 14 * 24 and f.step_min == 60
    # the returned profile is the quantile over the 14 days of each hour, and its median is the true profile
    np.testing.assert_allclose(np.array([f.series[q] for q in Q3]), profile_oracle(load, 24, Q3), rtol=1e-12)
    assert np.max(np.abs(np.array(f.series[0.5]) - PROFILE)) < 0.03
    # backtest: both methods fitted on the first 13 days, scored on the 14th
    train, test = load[:-24], load[-24:]
    model = profile_oracle(train, 24, Q3)
    base = persistence_oracle(train, 24, Q3)
    assert f.model_backtest_error == pytest.approx(pinball_oracle(test, dict(zip(Q3, model, strict=True))), rel=1e-12)
    assert f.baseline_backtest_error == pytest.approx(pinball_oracle(test, dict(zip(Q3, base, strict=True))), rel=1e-12)
    assert f.backtest_error == f.model_backtest_error
    assert f.model_backtest_error < 0.02 < 0.1 < f.baseline_backtest_error


def test_profile_needs_two_full_days_before_the_holdout() -> None:
    load = daily_load(3, 0.02, seed=2)
    now = T0 + timedelta(days=3) - HOUR
    f = forecast(hourly(load), list(load), now=now, horizon_h=24, quantiles=Q3)  # 2 days before a 24 h holdout
    assert f.model_backtest_error is not None and f.baseline is False
    late = load[6:]  # from 06:00 on: 1.75 days before the holdout
    f = forecast(hourly(late, T0 + 6 * HOUR), list(late), now=now, horizon_h=24, quantiles=Q3)
    assert f.baseline is True and f.model_backtest_error is None and f.baseline_backtest_error is not None
    assert f.history_steps == 66


# forecast: the persistence baseline


def test_random_walk_persistence_wins() -> None:
    walk = np.cumsum(np.random.default_rng(3).normal(0.0, 0.3, 14 * 24)) + 5.0
    now = T0 + timedelta(days=14) - HOUR
    f = forecast(hourly(walk), list(walk), now=now, horizon_h=6, quantiles=Q3)
    assert f.baseline is True and f.model_version == "persistence-1"
    assert f.model_backtest_error is not None and f.baseline_backtest_error is not None
    assert f.baseline_backtest_error < f.model_backtest_error
    assert f.backtest_error == f.baseline_backtest_error
    np.testing.assert_allclose(np.array([f.series[q] for q in Q3]), persistence_oracle(walk, 6, Q3), rtol=1e-12)
    # the holdout is the horizon (6 h): persistence from the value 6 h before the end, scored on the last 6 h
    train, test = walk[:-6], walk[-6:]
    base = persistence_oracle(train, 6, Q3)
    assert f.baseline_backtest_error == pytest.approx(pinball_oracle(test, dict(zip(Q3, base, strict=True))), rel=1e-12)


def test_one_day_of_history_gives_the_baseline() -> None:
    load = daily_load(1, 0.02, seed=4)
    now = T0 + 23 * HOUR
    f = forecast(hourly(load), list(load), now=now, horizon_h=6, quantiles=Q3)
    assert f.baseline is True and f.model_backtest_error is None
    assert f.baseline_backtest_error is not None and f.backtest_error == f.baseline_backtest_error
    assert f.history_steps == 24
    np.testing.assert_allclose(np.array([f.series[q] for q in Q3]), persistence_oracle(load, 6, Q3), rtol=1e-12)


def test_a_single_value_gives_a_flat_forecast_without_backtest() -> None:
    now = T0 + timedelta(hours=12)
    f = forecast([now], [0.42], now=now, horizon_h=3, quantiles=Q3)
    assert f.baseline is True and f.backtest_error is None
    assert f.model_backtest_error is None and f.baseline_backtest_error is None
    assert f.history_steps == 1
    assert f.series == {q: [0.42] * 3 for q in Q3}
    assert f.starts == [now + HOUR, now + 2 * HOUR, now + 3 * HOUR]


# forecast: conventions


def test_steps_start_after_the_step_in_progress_and_are_utc() -> None:
    cet = timezone(timedelta(hours=2))
    now = (T0 + timedelta(hours=10, minutes=20)).astimezone(cet)
    f = forecast([T0], [1.0], now=now, horizon_h=2.5, quantiles=[0.5])
    assert f.starts == [T0 + timedelta(hours=h) for h in (11, 12, 13)]
    assert all(s.utcoffset() == timedelta(0) for s in f.starts)
    f = forecast([T0], [1.0], now=now, horizon_h=1, quantiles=[0.5], step_min=15)
    assert f.starts == [T0 + timedelta(hours=10, minutes=m) for m in (30, 45, 60, 75)]
    assert len(forecast([T0], [1.0], now=now, horizon_h=MAX_HORIZON_H, quantiles=[0.5]).starts) == 48


def test_quantiles_sorted_non_crossing_and_deterministic() -> None:
    rng = np.random.default_rng(9)
    price = 0.25 + 0.05 * np.sin(np.arange(14 * 24) * 2 * np.pi / 24) + rng.standard_t(2, 14 * 24) * 0.05
    now = T0 + timedelta(days=14, minutes=-30)
    qs = [0.9, 0.02, 0.5, 0.25, 0.98]
    f = forecast(hourly(price), list(price), now=now, horizon_h=48, quantiles=qs)
    assert list(f.series) == sorted(qs)
    table = np.array(list(f.series.values()))
    assert table.shape == (5, 48) and np.all(np.diff(table, axis=0) >= 0)
    assert forecast(hourly(price), list(price), now=now, horizon_h=48, quantiles=qs) == f
    walk = np.cumsum(rng.normal(0, 1, 200))
    g = forecast(hourly(walk), list(walk), now=T0 + 199 * HOUR, horizon_h=48, quantiles=qs)
    assert np.all(np.diff(np.array(list(g.series.values())), axis=0) >= 0)


def test_samples_after_now_are_ignored() -> None:
    load = daily_load(5, 0.05, seed=6)
    now = T0 + timedelta(days=4, hours=7)
    upto = int((now - T0) / HOUR) + 1
    whole = forecast(hourly(load), list(load), now=now, horizon_h=12, quantiles=Q3)
    cut = forecast(hourly(load[:upto]), list(load[:upto]), now=now, horizon_h=12, quantiles=Q3)
    assert whole == cut


# forecast: validation


@pytest.mark.parametrize("horizon", [0, -1, MAX_HORIZON_H + 0.01, math.nan, math.inf])
def test_horizon_out_of_range(horizon: float) -> None:
    with pytest.raises(ForecastError) as err:
        forecast([T0], [1.0], now=T0, horizon_h=horizon, quantiles=Q3)
    assert err.value.key == "horizon_too_long"


@pytest.mark.parametrize("quantiles", [[], [0.0], [1.0], [0.5, 1.2], [0.1, 0.5, 0.1], [-0.1]])
def test_bad_quantiles(quantiles: list[float]) -> None:
    with pytest.raises(ForecastError) as err:
        forecast([T0], [1.0], now=T0, horizon_h=1, quantiles=quantiles)
    assert err.value.key == "bad_quantiles"


def test_no_history() -> None:
    for times, values in (([], []), ([T0 + HOUR], [1.0]), ([T0 - HOUR, T0], [math.nan, math.nan])):
        with pytest.raises(ForecastError) as err:
            forecast(times, values, now=T0, horizon_h=1, quantiles=Q3)
        assert err.value.key == "no_history"
    with pytest.raises(ForecastError) as err:  # the last state is unavailable since before the window
        forecast([T0, T0 + HOUR], [1.0, math.nan], now=T0 + timedelta(days=20), horizon_h=1, quantiles=Q3)
    assert err.value.key == "no_history"


def test_validation_order_and_naive_datetimes() -> None:
    with pytest.raises(ForecastError) as err:  # horizon before quantiles before history
        forecast([], [], now=T0, horizon_h=49, quantiles=[])
    assert err.value.key == "horizon_too_long"
    with pytest.raises(ForecastError) as err:
        forecast([], [], now=T0, horizon_h=1, quantiles=[])
    assert err.value.key == "bad_quantiles"
    naive = datetime(2024, 3, 1)
    for times, now in (([T0], naive), ([naive], T0)):
        with pytest.raises(ValueError) as plain:
            forecast(times, [1.0], now=now, horizon_h=1, quantiles=Q3)
        assert not isinstance(plain.value, ForecastError)
    with pytest.raises(ValueError):
        forecast([T0], [1.0], now=T0, horizon_h=1, quantiles=Q3, step_min=7)
