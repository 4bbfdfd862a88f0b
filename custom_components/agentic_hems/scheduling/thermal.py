"""A heated house as a first-order thermal model: its fit from history, its prediction error, heat pump COP curves.

The model, per slot t of ``h`` hours:

    T[t+1] = T[t] + h / C * (Q[t] - UA * (T[t] - T_out[t]) + g * S[t] + G)

with T the indoor temperature (°C), T_out the outdoor temperature (°C), Q the heat the heat pump delivers (kW of
heat: COP x electrical kW), S an optional solar input (kW of PV production, or an irradiance proxy) with gain g
(kW of heat per unit of S), G the constant internal gains (people, appliances; kW), UA the heat loss coefficient
(kW/K) and C the heat capacity (kWh/K). It is the model of :class:`~.home_model.HomeHeatPump` with
``gains_kw = G + g * S``.

**Fit** (:func:`fit_thermal`): the one-step difference is linear in 1/C, UA/C, g/C and G/C,

    (T[t+1] - T[t]) / h = Q[t] / C - UA / C * (T[t] - T_out[t]) + g / C * S[t] + G / C,

solved as a linear least-squares problem over every sample t whose T[t-1], T[t], T[t+1], T_out[t], Q[t] (and S[t])
are all known: gaps (NaN) only remove the samples they touch, a pair of slots is never bridged over a gap. The
measured T[t] is in both the difference and the regressor, so its measurement noise would bias ordinary least
squares (UA/C too high by about noise² / (h x variance of T - T_out): some 5 % at 0.05 °C on a 15-minute grid).
The fit therefore uses T[t-1] - T_out[t] as the instrument for T[t] - T_out[t] (instrumental variables; the same
normal equations with the instrument in place of the regressor on the left), which the noise of T[t] does not reach.
A solar input that never varies, or gets a negative gain, is left out (g = 0).

**Prediction error** (:func:`prediction_error`): the model simulated from a measured start over windows of
``horizon_slots``, with the measured inputs, against the measured indoor temperature.

**COP** (:func:`cop_from_points`, :func:`cop_carnot`): the heat pump's coefficient of performance per outdoor
temperature, from rated points or from a fraction of the Carnot COP, clamped to [``COP_MIN``, ``COP_MAX``].
Nothing here imports Home Assistant.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from ..prices.curve import FloatArray

COP_MIN = 1.0  # below this a heat pump would heat worse than a resistor: never planned
COP_MAX = 8.0  # above this no rated heat pump delivers, whatever the small lift suggests
KELVIN = 273.15
MIN_FIT_HOURS = 24.0  # history (usable samples x slot length) a fit needs at least
MIN_FIT_SAMPLES = 24
MIN_HEAT_SPREAD_KW = 0.1  # the heat must change by this much over the samples (the heat pump ran and stopped)
MIN_TEMP_SPREAD_K = 1.0  # indoor minus outdoor temperature must change by this much over the samples


class ThermalDataError(ValueError):
    """The history cannot give a thermal model. ``translation_key`` names the message, ``placeholders`` fill it."""

    translation_key: ClassVar[str]

    def __init__(self, message: str, **placeholders: str) -> None:
        """Keep the English ``message`` (for logs) and the message's placeholders."""
        super().__init__(message)
        self.placeholders = placeholders


class ThermalTooLittleData(ThermalDataError):
    """Fewer usable samples than a fit needs (placeholders ``samples``, ``needed``)."""

    translation_key = "thermal_too_little_data"


class ThermalNoHeating(ThermalDataError):
    """The heat never changed over the samples: the heat capacity cannot be told apart from the internal gains."""

    translation_key = "thermal_no_heating"


class ThermalFlatTemperatures(ThermalDataError):
    """Indoor minus outdoor temperature hardly changed (placeholder ``spread``, K): the heat loss cannot be fitted."""

    translation_key = "thermal_flat_temperatures"


class ThermalNonPhysical(ThermalDataError):
    """The least-squares answer has UA <= 0 or C <= 0 (placeholders ``ua`` in W/K, ``capacity`` in kWh/K)."""

    translation_key = "thermal_non_physical"


@dataclass(frozen=True, kw_only=True)
class ThermalModel:
    """The model's parameters (see the module docstring).

    Attributes:
        ua_kw_per_k: heat loss coefficient UA, kW/K (forms show W/K), > 0.
        capacity_kwh_per_k: heat capacity C, kWh/K, > 0.
        solar_gain: g, kW of heat per unit of the solar input, >= 0 (0 without one).
        gains_kw: G, constant internal gains, kW, finite (may be negative: unmodelled losses).

    Raises:
        ValueError: a parameter outside its range or not finite.

    """

    ua_kw_per_k: float
    capacity_kwh_per_k: float
    solar_gain: float = 0.0
    gains_kw: float = 0.0

    def __post_init__(self) -> None:
        """Raise ValueError for a parameter outside its range."""
        values = (self.ua_kw_per_k, self.capacity_kwh_per_k, self.solar_gain, self.gains_kw)
        if not all(math.isfinite(v) for v in values):
            raise ValueError(f"thermal model parameters must be finite: {values}")
        if self.ua_kw_per_k <= 0 or self.capacity_kwh_per_k <= 0 or self.solar_gain < 0:
            raise ValueError(f"thermal model needs UA > 0, C > 0 and g >= 0: {values}")

    @property
    def time_constant_h(self) -> float:
        """C / UA, hours: how long the house takes to lose 63 % of its lead over the outdoor temperature."""
        return self.capacity_kwh_per_k / self.ua_kw_per_k

    def gains(self, solar_kw: ArrayLike) -> FloatArray:
        """G + g * S per slot, kW (the ``gains_kw`` of a HomeHeatPump); an unknown (NaN) solar input counts as 0."""
        return self.gains_kw + self.solar_gain * np.nan_to_num(np.asarray(solar_kw, dtype=np.float64))

    def simulate(
        self,
        start_c: float,
        outdoor_c: ArrayLike,
        heat_kw: ArrayLike,
        *,
        hours: float,
        solar_kw: ArrayLike | None = None,
    ) -> FloatArray:
        """Indoor temperature at each slot boundary from ``start_c``, °C, shape (n + 1,) for n slots of ``hours``.

        ``outdoor_c`` (°C), ``heat_kw`` (kW of heat) and ``solar_kw`` have shape (n,); a NaN input makes every later
        temperature NaN. Raises ValueError for mismatched shapes or ``hours`` <= 0.
        """
        outdoor, heat, solar = _inputs(outdoor_c, heat_kw, solar_kw, hours)
        drive = heat + self.solar_gain * solar + self.gains_kw
        temp = np.empty(len(outdoor) + 1)
        temp[0] = start_c
        step = hours / self.capacity_kwh_per_k
        for t in range(len(outdoor)):
            temp[t + 1] = temp[t] + step * (drive[t] - self.ua_kw_per_k * (temp[t] - outdoor[t]))
        return temp


@dataclass(frozen=True, kw_only=True)
class PredictionError:
    """Multi-step prediction error of a model against measured indoor temperatures.

    Attributes:
        rmse_c: root mean square of predicted minus measured, °C.
        max_c: largest absolute difference, °C.
        points: predicted temperatures compared (measured ones that exist).
        windows: simulations run (each from a measured start).
        horizon_slots: longest simulation, slots.

    """

    rmse_c: float
    max_c: float
    points: int
    windows: int
    horizon_slots: int


@dataclass(frozen=True, kw_only=True)
class ThermalFit(ThermalModel):
    """A model fitted by :func:`fit_thermal`, with how well it fits.

    Attributes:
        rmse_c: one-step prediction error over the samples fitted (measured start, one slot ahead), °C.
        samples: samples fitted.
        hours: slot length of the history, hours.
        prediction: the fit's own history simulated over windows of a day (:func:`prediction_error`).

    """

    rmse_c: float
    samples: int
    hours: float
    prediction: PredictionError


def _checked(name: str, values: ArrayLike, n: int | None = None) -> FloatArray:
    """``values`` as a 1-D float array of length ``n``, NaN allowed; raise ValueError otherwise."""
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 or (n is not None and len(array) != n):
        raise ValueError(f"{name} must be one-dimensional with {n} values, got shape {array.shape}")
    if np.isinf(array).any():
        raise ValueError(f"{name} must be finite or NaN (unknown), not infinite")
    return array


def _inputs(
    outdoor_c: ArrayLike, heat_kw: ArrayLike, solar_kw: ArrayLike | None, hours: float
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Outdoor, heat and solar (zeros without) as checked arrays of one length; ValueError for bad ``hours``."""
    if not (math.isfinite(hours) and hours > 0):
        raise ValueError(f"hours must be finite and > 0, got {hours!r}")
    outdoor = _checked("outdoor_c", outdoor_c)
    heat = _checked("heat_kw", heat_kw, len(outdoor))
    solar = np.zeros(len(outdoor)) if solar_kw is None else _checked("solar_kw", solar_kw, len(outdoor))
    return outdoor, heat, solar


def _history(
    indoor_c: ArrayLike, outdoor_c: ArrayLike, heat_kw: ArrayLike, solar_kw: ArrayLike | None, hours: float
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Indoor, outdoor, heat and solar of one history, checked (see :func:`fit_thermal`)."""
    outdoor, heat, solar = _inputs(outdoor_c, heat_kw, solar_kw, hours)
    return _checked("indoor_c", indoor_c, len(outdoor)), outdoor, heat, solar


def _solve(x: FloatArray, z: FloatArray, y: FloatArray) -> FloatArray:
    """Instrumental-variable coefficients: solve Z' X c = Z' y (least squares, for a nearly singular Z' X)."""
    scale = np.maximum(np.abs(x).max(axis=0), 1e-12)
    coef = np.linalg.lstsq(z.T @ (x / scale), z.T @ y, rcond=None)[0]
    return np.asarray(coef / scale, dtype=np.float64)


def _check_excitation(heat: FloatArray, lead: FloatArray, samples: int, hours: float) -> None:
    """Raise the ThermalDataError that says why the samples cannot give a fit, if any."""
    needed = max(MIN_FIT_SAMPLES, math.ceil(MIN_FIT_HOURS / hours))
    if samples < needed:
        raise ThermalTooLittleData(
            f"{samples} usable samples (consecutive slots with indoor, outdoor and heat known), {needed} needed",
            samples=str(samples),
            needed=str(needed),
        )
    if np.ptp(heat) < MIN_HEAT_SPREAD_KW:
        raise ThermalNoHeating(f"the heat never changed (between {heat.min():.3g} and {heat.max():.3g} kW)")
    if (spread := float(np.ptp(lead))) < MIN_TEMP_SPREAD_K:
        raise ThermalFlatTemperatures(
            f"indoor minus outdoor temperature changed by only {spread:.2f} K", spread=f"{spread:.1f}"
        )


def fit_thermal(
    indoor_c: ArrayLike, outdoor_c: ArrayLike, heat_kw: ArrayLike, *, hours: float, solar_kw: ArrayLike | None = None
) -> ThermalFit:
    """Fit UA, C, g and G to a history on a regular grid of ``hours`` (see the module docstring).

    Args:
        indoor_c: (n,) measured indoor temperature per slot, °C; NaN where unknown.
        outdoor_c: (n,) outdoor temperature, °C; NaN where unknown.
        heat_kw: (n,) heat delivered by the heat pump over the slot, kW of heat; NaN where unknown.
        hours: slot length, hours, > 0.
        solar_kw: (n,) solar input (PV kW or an irradiance proxy), NaN where unknown; None to fit without.

    Returns:
        The fit, with its one-step RMSE and its prediction error over day-long windows of its own history.

    Raises:
        ValueError: arrays of other shapes, an infinite value, ``hours`` <= 0.
        ThermalTooLittleData: fewer than max(24, 24 h / hours) usable samples.
        ThermalNoHeating: the heat changed by less than 0.1 kW over the samples.
        ThermalFlatTemperatures: indoor minus outdoor changed by less than 1 K.
        ThermalNonPhysical: the fit gives UA <= 0 or C <= 0.

    """
    indoor, outdoor, heat, solar = _history(indoor_c, outdoor_c, heat_kw, solar_kw, hours)
    t = np.arange(1, len(indoor) - 1)
    known = np.isfinite(indoor[t - 1]) & np.isfinite(indoor[t]) & np.isfinite(indoor[t + 1])
    t = t[known & np.isfinite(outdoor[t]) & np.isfinite(heat[t]) & np.isfinite(solar[t])]
    lead = indoor[t] - outdoor[t]
    _check_excitation(heat[t], lead, len(t), hours)
    y = (indoor[t + 1] - indoor[t]) / hours
    x = np.column_stack([heat[t], -lead, np.ones(len(t)), solar[t]])
    z = np.column_stack([heat[t], -(indoor[t - 1] - outdoor[t]), np.ones(len(t)), solar[t]])
    columns = 4 if solar_kw is not None and np.ptp(solar[t]) > 0 else 3
    coef = _solve(x[:, :columns], z[:, :columns], y)
    if columns == 4 and coef[3] < 0:
        columns, coef = 3, _solve(x[:, :3], z[:, :3], y)
    inverse_c, loss = float(coef[0]), float(coef[1])
    if inverse_c <= 0 or loss <= 0:
        ua, capacity = (loss / inverse_c, 1 / inverse_c) if inverse_c else (math.nan, math.nan)
        raise ThermalNonPhysical(
            f"the history gives UA = {ua:.3g} kW/K and C = {capacity:.3g} kWh/K",
            ua=f"{ua * 1000:.0f}",
            capacity=f"{capacity:.1f}",
        )
    model = ThermalModel(
        ua_kw_per_k=loss / inverse_c,
        capacity_kwh_per_k=1 / inverse_c,
        gains_kw=float(coef[2]) / inverse_c,
        solar_gain=float(coef[3]) / inverse_c if columns == 4 else 0.0,
    )
    residual = hours * (y - x[:, :columns] @ coef[:columns])
    horizon = max(1, round(24 / hours))
    return ThermalFit(
        **vars(model),
        rmse_c=float(np.sqrt(np.mean(residual**2))),
        samples=len(t),
        hours=hours,
        prediction=prediction_error(model, indoor, outdoor, heat, hours=hours, solar_kw=solar, horizon_slots=horizon),
    )


def prediction_error(
    model: ThermalModel,
    indoor_c: ArrayLike,
    outdoor_c: ArrayLike,
    heat_kw: ArrayLike,
    *,
    hours: float,
    solar_kw: ArrayLike | None = None,
    horizon_slots: int,
) -> PredictionError:
    """Simulate ``model`` over a history from measured starts and compare with the measured indoor temperature.

    Windows follow each other: one starts at the first slot with a measured indoor temperature and known inputs,
    runs ``horizon_slots`` slots (less where an input becomes unknown or the history ends), and the next starts
    where it ended (or at the next such slot). Each window's simulated temperatures are compared with the measured
    ones where they exist. Arrays as in :func:`fit_thermal`.

    Raises:
        ValueError: bad arrays or ``hours``, ``horizon_slots`` < 1, or no measured temperature to compare with.

    """
    indoor, outdoor, heat, solar = _history(indoor_c, outdoor_c, heat_kw, solar_kw, hours)
    if isinstance(horizon_slots, bool) or not isinstance(horizon_slots, int) or horizon_slots < 1:
        raise ValueError(f"horizon_slots must be a whole number >= 1, got {horizon_slots!r}")
    usable = np.isfinite(outdoor) & np.isfinite(heat) & np.isfinite(solar)
    errors: list[FloatArray] = []
    i, n = 0, len(indoor)
    while i < n - 1:
        if not (usable[i] and np.isfinite(indoor[i])):
            i += 1
            continue
        run = int(np.argmin(usable[i:])) if not usable[i:].all() else n - i
        steps = min(horizon_slots, n - 1 - i, run)
        stop = i + steps
        simulated = model.simulate(indoor[i], outdoor[i:stop], heat[i:stop], hours=hours, solar_kw=solar[i:stop])
        measured = indoor[i + 1 : stop + 1]
        errors.append((simulated[1:] - measured)[np.isfinite(measured)])
        i = stop
    found = np.concatenate(errors) if errors else np.empty(0)
    if not found.size:
        raise ValueError("no measured indoor temperature to compare a prediction with")
    return PredictionError(
        rmse_c=float(np.sqrt(np.mean(found**2))),
        max_c=float(np.abs(found).max()),
        points=int(found.size),
        windows=sum(1 for e in errors if e.size),
        horizon_slots=horizon_slots,
    )


def _rated(points: Sequence[tuple[float, float]]) -> tuple[FloatArray, FloatArray]:
    """Return the rated points sorted by outdoor temperature; raise ValueError (see :func:`cop_from_points`)."""
    pairs = sorted((float(temp), float(cop)) for temp, cop in points)
    if len(pairs) < 2:
        raise ValueError(f"a COP curve needs at least two rated points, got {len(pairs)}")
    temps, cops = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    if not (np.isfinite(temps).all() and np.isfinite(cops).all()):
        raise ValueError(f"rated points must be finite: {pairs}")
    if (np.diff(temps) == 0).any():
        raise ValueError(f"two rated points at the same outdoor temperature: {pairs}")
    if cops.min() < COP_MIN or cops.max() > COP_MAX or (np.diff(cops) < 0).any():
        raise ValueError(f"rated COPs must lie in [{COP_MIN}, {COP_MAX}] and not fall as it gets warmer: {pairs}")
    return temps, cops


def cop_from_points(points: Sequence[tuple[float, float]], outdoor_c: ArrayLike) -> FloatArray:
    """COP per outdoor temperature from rated points ``(outdoor °C, COP)`` at one flow temperature.

    Linear between the points; beyond the outermost points the outermost segment's line continues (linear
    extrapolation); the result is clamped to [``COP_MIN``, ``COP_MAX``]. E.g. the points (-7, 2.7), (2, 3.6),
    (7, 4.5) (A-7/W35, A2/W35, A7/W35) give 3.15 at -2.5 °C and 1.9 at -15 °C.

    Args:
        points: two or more (outdoor_c, cop) pairs, any order.
        outdoor_c: outdoor temperature(s), °C; NaN gives NaN.

    Returns:
        COP, the shape of ``outdoor_c``.

    Raises:
        ValueError: fewer than two points, a non-finite value, two points at one temperature, a COP outside
            [COP_MIN, COP_MAX], or a COP that falls as the outdoor temperature rises.
        TypeError: a point that is not a pair of numbers.

    """
    temps, cops = _rated(points)
    outdoor = np.asarray(outdoor_c, dtype=np.float64)
    below = cops[0] + (cops[1] - cops[0]) / (temps[1] - temps[0]) * (outdoor - temps[0])
    above = cops[-1] + (cops[-1] - cops[-2]) / (temps[-1] - temps[-2]) * (outdoor - temps[-1])
    inside = np.interp(outdoor, temps, cops)
    cop = np.where(outdoor < temps[0], below, np.where(outdoor > temps[-1], above, inside))
    return np.asarray(np.clip(cop, COP_MIN, COP_MAX), dtype=np.float64)


def cop_carnot(outdoor_c: ArrayLike, *, flow_c: float, fraction: float) -> FloatArray:
    """COP per outdoor temperature as a fraction of the Carnot COP: fraction x (flow + 273.15) / (flow - outdoor).

    Clamped to [``COP_MIN``, ``COP_MAX``]; an outdoor temperature at or above the flow temperature (no lift) gives
    ``COP_MAX``. E.g. flow 35 °C, fraction 0.5, outdoor 5 °C: 0.5 x 308.15 / 30 = 5.136.

    Args:
        outdoor_c: outdoor temperature(s), °C; NaN gives NaN.
        flow_c: flow (supply) temperature of the heating, °C, finite and above -273.15.
        fraction: share of the Carnot COP the heat pump reaches, in (0, 1] (typically 0.4-0.55).

    Returns:
        COP, the shape of ``outdoor_c``.

    Raises:
        ValueError: ``flow_c`` or ``fraction`` out of range.

    """
    if not (math.isfinite(flow_c) and flow_c > -KELVIN):
        raise ValueError(f"flow_c must be a finite temperature in °C, got {flow_c!r}")
    if not (math.isfinite(fraction) and 0 < fraction <= 1):
        raise ValueError(f"fraction must lie in (0, 1], got {fraction!r}")
    outdoor = np.asarray(outdoor_c, dtype=np.float64)
    lift = flow_c - outdoor
    carnot = np.divide(fraction * (flow_c + KELVIN), lift, out=np.full(outdoor.shape, np.inf), where=lift > 0)
    return np.asarray(np.clip(np.where(np.isnan(outdoor), np.nan, carnot), COP_MIN, COP_MAX), dtype=np.float64)
