"""Quantile forecasts of a household time series from the recorder's history, with a backtest (``run_forecast``).

The series is a load (kW), a PV output (kW) or a price (EUR/kWh) as the recorder stores it: a state holds its value
until the next state, so :func:`resample` takes the time-weighted mean of the held value over each step. A state whose
value is not finite (``unavailable``) opens a gap that lasts until the next finite state; gaps are left out of the
means, and a step with no finite time in it is NaN.

:func:`forecast` resamples the last ``history_days`` days before ``now`` and has two methods:

* the model, ``profile``: for each UTC time-of-day step, the empirical quantiles (``numpy.quantile``, linear) of the
  values at that time of day over the history days;
* the baseline, ``persistence``: the last finite history step held flat, spread by the empirical quantiles of the
  ``k``-step-ahead changes ``x[t + k] - x[t]`` in the history, one distribution per lead ``k``. A lead with fewer than
  ``MIN_CHANGES`` changes in the history (a history shorter than the lead) takes the distribution of the longest lead
  that has enough; with no such lead at all the spread is zero.

The backtest holds out the last ``min(horizon, 24 h)`` of the history, fits both methods on the history before it and
scores both with the mean pinball loss (:func:`pinball_loss`) on the held-out steps that have data. The model is
returned only when its score is strictly lower than the baseline's, and only when the history before the holdout has at
least ``MIN_MODEL_DAYS`` observations of every time-of-day step (two full days); otherwise the baseline is returned.
The returned method is then fitted again on the whole history. Quantiles are sorted per step, so they never cross.

Conventions: the step in progress at ``now`` is the last history step (its observed part plus the last value held to
its end, which is what persistence assumes); the forecast starts at the next step. Samples after ``now`` are ignored.
Time of day is UTC, so a daylight-saving change shifts a local-time profile by one hour for the days after it.
Everything is deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

type Vector = NDArray[np.float64]

MAX_HORIZON_H = 48
MIN_MODEL_DAYS = 2  # observations of every time-of-day step the profile needs before the holdout
MIN_CHANGES = 2  # changes a lead needs for its own persistence spread
PROFILE_VERSION = "profile-1"
PERSISTENCE_VERSION = "persistence-1"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_DAY_MIN = 24 * 60


class ForecastError(ValueError):
    """A forecast request that cannot be served.

    ``key`` is a short machine key (``no_history``, ``horizon_too_long``, ``bad_quantiles``) and the message says why.
    """

    def __init__(self, key: str, message: str) -> None:
        """Hold the machine ``key``; ``message`` says why."""
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class Forecast:
    """A quantile forecast (the ``run_forecast`` tool).

    ``starts``: the UTC start of each forecast step (``step_min`` minutes long), the first one the step after the step
    in progress at ``now``. ``series``: quantile -> one value per step (the series' unit), quantiles ascending and
    non-crossing. ``model_version``: ``profile-1`` or ``persistence-1``; ``baseline`` is True when the persistence
    baseline is returned. ``backtest_error``: mean pinball loss of the returned method on the held-out window (None
    when no backtest was possible); ``model_backtest_error`` / ``baseline_backtest_error`` the two scores (None when not
    computed). ``history_steps``: resampled history steps with data.
    """

    starts: list[datetime]
    series: dict[float, list[float]]
    model_version: str
    baseline: bool
    backtest_error: float | None
    model_backtest_error: float | None
    baseline_backtest_error: float | None
    history_steps: int
    step_min: int


def _require_aware(moment: datetime, name: str) -> None:
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"{name} must be timezone-aware: {moment!r}")


def _step_index(moment: datetime, step: timedelta) -> int:
    """Whole steps from the Unix epoch to ``moment``, floored (exact integer arithmetic)."""
    return (moment - _EPOCH) // step


def _check_step(step_min: int) -> None:
    if isinstance(step_min, bool) or not isinstance(step_min, int) or step_min <= 0 or _DAY_MIN % step_min:
        raise ValueError(f"step_min must be a positive whole number of minutes dividing a day, got {step_min!r}")


def resample(
    times: Sequence[datetime], values: Sequence[float], start: datetime, end: datetime, step_min: int
) -> Vector:
    """Time-weighted mean per step of a step-wise held series (the ``run_forecast`` tool).

    ``times`` (timezone-aware, any order; for equal times the later entry wins) and ``values`` (same length, the
    series' unit) are recorder states, each held until the next one. Returns shape ``((end - start) / step_min,)``:
    step ``i`` is the mean over ``[start + i * step, start + (i + 1) * step)`` of the held value, over the part of the
    step where the value is defined and finite. Steps before the first sample, or wholly inside a gap (a non-finite
    value held), are NaN. The last sample before ``start`` carries into the window.

    Raises ValueError on naive datetimes, mismatched lengths, ``end <= start`` or a span that is not a whole number
    of steps.
    """
    if len(times) != len(values):
        raise ValueError(f"times and values differ in length: {len(times)} != {len(values)}")
    _require_aware(start, "start")
    _require_aware(end, "end")
    if step_min <= 0:
        raise ValueError(f"step_min must be positive, got {step_min!r}")
    step = timedelta(minutes=step_min)
    span = end - start
    if span <= timedelta(0) or span % step:
        raise ValueError(f"[start, end) must be a positive whole number of {step_min}-minute steps")
    n = span // step
    for moment in times:
        _require_aware(moment, "times")
    step_s = step.total_seconds()
    raw_offsets = np.array([(moment - start).total_seconds() for moment in times], dtype=np.float64)
    order = np.argsort(raw_offsets, kind="stable")
    offsets = raw_offsets[order]
    held = np.asarray(values, dtype=np.float64).reshape(-1)[order]

    window_s = n * step_s
    inner = offsets[(offsets > 0.0) & (offsets < window_s)]
    breaks = np.unique(np.concatenate([np.arange(n + 1, dtype=np.float64) * step_s, inner]))
    seg_start, seg_width = breaks[:-1], np.diff(breaks)
    which = np.searchsorted(offsets, seg_start, side="right") - 1
    seg_value = np.where(which >= 0, held[np.maximum(which, 0)] if len(held) else np.nan, np.nan)
    seg_step = np.minimum((seg_start // step_s).astype(np.int64), n - 1)
    ok = np.isfinite(seg_value)
    total = np.bincount(seg_step[ok], weights=seg_width[ok] * seg_value[ok], minlength=n)
    covered = np.bincount(seg_step[ok], weights=seg_width[ok], minlength=n)
    out = np.full(n, np.nan)
    np.divide(total, covered, out=out, where=covered > 0)
    return out


def pinball_loss(actual: ArrayLike, predicted: dict[float, ArrayLike]) -> float:
    """Mean pinball (quantile) loss over quantiles and steps (the ``run_forecast`` tool).

    ``actual``: shape ``(T,)``; ``predicted``: quantile ``q`` in (0, 1) -> shape ``(T,)``. The loss of one prediction
    ``p`` for ``y`` is ``q * (y - p)`` when ``y >= p`` and ``(1 - q) * (p - y)`` otherwise, in the series' unit. NaN in,
    NaN out: leave missing steps out first. Raises ValueError on no quantiles, no steps, a quantile outside (0, 1) or
    mismatched shapes.
    """
    y = np.asarray(actual, dtype=np.float64).reshape(-1)
    if not predicted:
        raise ValueError("pinball_loss needs at least one quantile")
    if y.size == 0:
        raise ValueError("pinball_loss needs at least one step")
    losses = []
    for q, pred in predicted.items():
        if not 0.0 < q < 1.0:
            raise ValueError(f"quantile {q!r} is not in (0, 1)")
        p = np.asarray(pred, dtype=np.float64).reshape(-1)
        if p.shape != y.shape:
            raise ValueError(f"quantile {q}: {p.shape[0]} predictions for {y.shape[0]} actual values")
        diff = y - p
        losses.append(np.mean(np.maximum(q * diff, (q - 1.0) * diff)))
    return float(np.mean(losses))


def _profile(history: Vector, slot0: int, horizon: int, qs: Vector, per_day: int) -> Vector:
    """Profile quantiles, shape ``(len(qs), horizon)``.

    ``history[0]`` is time-of-day slot ``slot0`` and the forecast starts right after the history. A slot with no data is
    NaN (callers check eligibility first).
    """
    slots = (slot0 + np.arange(history.size)) % per_day
    finite = np.isfinite(history)
    table = np.full((qs.size, per_day), np.nan)
    for slot in range(per_day):
        seen = history[(slots == slot) & finite]
        if seen.size:
            table[:, slot] = np.quantile(seen, qs, method="linear")
    return table[:, (slot0 + history.size + np.arange(horizon)) % per_day]


def _profile_ready(history: Vector, slot0: int, per_day: int) -> bool:
    """Every time-of-day slot has at least ``MIN_MODEL_DAYS`` finite observations."""
    slots = ((slot0 + np.arange(history.size)) % per_day)[np.isfinite(history)]
    return bool(np.bincount(slots, minlength=per_day).min() >= MIN_MODEL_DAYS)


def _persistence(history: Vector, horizon: int, qs: Vector) -> Vector:
    """Return persistence quantiles, shape ``(len(qs), horizon)``.

    Each is the last finite value plus the empirical quantiles of the changes at each lead (leads counted from that
    value's step; the forecast starts right after the history).
    """
    finite = np.flatnonzero(np.isfinite(history))
    last = int(finite[-1])
    level = float(history[last])
    first_lead = history.size - last
    spreads: dict[int, Vector] = {}
    fallback: Vector | None = None
    for lead in range(1, first_lead + horizon):
        changes = history[lead:] - history[:-lead] if lead < history.size else np.empty(0)
        changes = changes[np.isfinite(changes)]
        if changes.size >= MIN_CHANGES:
            fallback = np.asarray(np.quantile(changes, qs, method="linear"), dtype=np.float64)
        if lead >= first_lead:
            spreads[lead] = fallback if fallback is not None else np.zeros(qs.size)
    return np.stack([level + spreads[first_lead + j] for j in range(horizon)], axis=1)


def _score(actual: Vector, predicted: Vector, qs: Vector) -> float | None:
    seen = np.isfinite(actual)
    if not seen.any():
        return None
    return pinball_loss(actual[seen], {float(q): predicted[i, seen] for i, q in enumerate(qs)})


def _validate(horizon_h: float, quantiles: Sequence[float]) -> Vector:
    if not (isinstance(horizon_h, int | float) and math.isfinite(horizon_h) and 0 < horizon_h <= MAX_HORIZON_H):
        raise ForecastError("horizon_too_long", f"horizon_h must be in (0, {MAX_HORIZON_H}] hours, got {horizon_h!r}")
    qs = [float(q) for q in quantiles]
    if not qs:
        raise ForecastError("bad_quantiles", "at least one quantile is needed")
    if any(not 0.0 < q < 1.0 for q in qs):
        raise ForecastError("bad_quantiles", f"quantiles must be strictly between 0 and 1, got {qs}")
    if len(set(qs)) != len(qs):
        raise ForecastError("bad_quantiles", f"quantiles must not repeat, got {qs}")
    return np.array(sorted(qs), dtype=np.float64)


def forecast(
    times: Sequence[datetime],
    values: Sequence[float],
    *,
    now: datetime,
    horizon_h: float,
    quantiles: Sequence[float],
    step_min: int = 60,
    history_days: int = 14,
) -> Forecast:
    """Forecast quantiles of a recorder series for ``horizon_h`` hours after ``now``.

    ``times``/``values``: the recorder's states (timezone-aware datetimes; kW or EUR/kWh), held until the next state;
    samples after ``now`` are ignored. ``quantiles``: each in (0, 1), no repeats; returned ascending. The forecast has
    ``ceil(horizon_h * 60 / step_min)`` steps of ``step_min`` minutes (a divisor of a day) starting at the step after
    ``now`` floored to the step; see the module docstring for the methods and the backtest.

    Raises ForecastError ``horizon_too_long`` (horizon not in (0, MAX_HORIZON_H]), ``bad_quantiles`` (empty, outside
    (0, 1) or repeated) or ``no_history`` (no finite sample at or before ``now`` that reaches the window), in that
    order; ValueError on naive datetimes, a bad ``step_min`` or ``history_days`` < 1.
    """
    qs = _validate(horizon_h, quantiles)
    _check_series(times, values, now=now, step_min=step_min, history_days=history_days)
    kept = [(moment, float(value)) for moment, value in zip(times, values, strict=True) if moment <= now]
    if not any(math.isfinite(value) for _, value in kept):
        raise ForecastError("no_history", "no recorded value at or before now")
    step = timedelta(minutes=step_min)
    per_day = _DAY_MIN // step_min
    horizon = math.ceil(round(horizon_h * 60 / step_min, 9))
    first = _EPOCH + (_step_index(now, step) + 1) * step
    start = first - timedelta(days=history_days)
    history = resample([m for m, _ in kept], [v for _, v in kept], start, first, step_min)
    if not np.isfinite(history).any():
        raise ForecastError("no_history", f"no recorded value in the last {history_days} days before now")
    slot0 = _step_index(start, step) % per_day

    model_error, baseline_error = _backtest(history, qs, horizon=horizon, slot0=slot0, per_day=per_day)
    use_model = model_error is not None and baseline_error is not None and model_error < baseline_error
    if use_model:
        table = _profile(history, slot0, horizon, qs, per_day)
    else:
        table = _persistence(history, horizon, qs)
    table = np.sort(table, axis=0)
    return Forecast(
        starts=[first + j * step for j in range(horizon)],
        series={float(q): [float(v) for v in table[i]] for i, q in enumerate(qs)},
        model_version=PROFILE_VERSION if use_model else PERSISTENCE_VERSION,
        baseline=not use_model,
        backtest_error=model_error if use_model else baseline_error,
        model_backtest_error=model_error,
        baseline_backtest_error=baseline_error,
        history_steps=int(np.isfinite(history).sum()),
        step_min=step_min,
    )


def _check_series(
    times: Sequence[datetime], values: Sequence[float], *, now: datetime, step_min: int, history_days: int
) -> None:
    """Raise ValueError on naive datetimes, a bad ``step_min``, ``history_days`` < 1 or series of unequal length."""
    _require_aware(now, "now")
    _check_step(step_min)
    if isinstance(history_days, bool) or not isinstance(history_days, int) or history_days < 1:
        raise ValueError(f"history_days must be a whole number of days >= 1, got {history_days!r}")
    if len(times) != len(values):
        raise ValueError(f"times and values differ in length: {len(times)} != {len(values)}")
    for moment in times:
        _require_aware(moment, "times")


def _backtest(
    history: Vector, qs: Vector, *, horizon: int, slot0: int, per_day: int
) -> tuple[float | None, float | None]:
    """Return the profile model's and the persistence baseline's error on the last ``min(horizon, a day)`` steps.

    Each is None when it cannot be scored (the model also when its training part is not ready).
    """
    holdout = min(horizon, per_day)
    cut = history.size - holdout
    train, test = history[:cut], history[cut:]
    model_error = baseline_error = None
    if np.isfinite(train).any():
        baseline_error = _score(test, _persistence(train, holdout, qs), qs)
        if baseline_error is not None and _profile_ready(train, slot0, per_day):
            model_error = _score(test, _profile(train, slot0, holdout, qs, per_day), qs)
    return model_error, baseline_error
