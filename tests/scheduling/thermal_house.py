"""A simulated heated house for the thermal fit's tests: known UA, C, g, G; a thermostat-driven heat pump."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class House:
    """A history on a regular grid of ``hours``: measured indoor (noise, NaN gaps) and the exact trajectory."""

    indoor_c: np.ndarray  # (n,) measured, °C, NaN in gaps
    true_c: np.ndarray  # (n + 1,) exact indoor temperature at each slot boundary
    outdoor_c: np.ndarray  # (n,)
    electric_kw: np.ndarray  # (n,) heat pump's electrical power
    heat_kw: np.ndarray  # (n,) heat delivered: cop x electric
    solar_kw: np.ndarray  # (n,) PV production
    hours: float


def house(
    seed: int, *, days: float = 7.0, hours: float = 0.25, ua: float = 0.2, c: float = 10.0, g: float = 0.3,
    gains: float = 0.3, noise_c: float = 0.05, gaps: bool = True, pump_kw: float = 1.8,
) -> House:
    """Simulate the house: outdoor around 3 °C with a daily swing and drifting weather, PV with a random daily yield,
    a heat pump switching at 20/21.5 °C (COP 3 + 0.08/K over the outdoor temperature), indoor measured with Gaussian
    noise of ``noise_c``; with ``gaps``, three outages of 2 to 6 hours and 2 % single missing samples."""
    rng = np.random.default_rng(seed)
    n = round(days * 24 / hours)
    t = np.arange(n) * hours
    weather = np.cumsum(rng.normal(0, 0.15 * np.sqrt(hours), n))
    outdoor = 3 + 5 * np.sin(2 * np.pi * (t - 9) / 24) + 3 * np.sin(2 * np.pi * t / 79) + weather
    yield_per_day = rng.uniform(0.2, 1.0, int(days) + 2)[(t // 24).astype(int)]
    solar = np.clip(5 * np.sin(np.pi * ((t % 24) - 7) / 10), 0, None) * yield_per_day
    cop = 3 + 0.08 * outdoor
    temp = np.empty(n + 1)
    temp[0] = 20.5
    electric = np.zeros(n)
    on = False
    for i in range(n):
        on = temp[i] < 20.0 or (on and temp[i] <= 21.5)
        electric[i] = pump_kw if on else 0.0
        temp[i + 1] = temp[i] + hours / c * (cop[i] * electric[i] - ua * (temp[i] - outdoor[i]) + g * solar[i] + gains)
    measured = temp[:n] + rng.normal(0, noise_c, n)
    if gaps:
        for start in rng.choice(n - 40, 3, replace=False):
            measured[start : start + rng.integers(round(2 / hours), round(6 / hours) + 1)] = np.nan
        measured[rng.random(n) < 0.02] = np.nan
    return House(measured, temp, outdoor, electric, cop * electric, solar, hours)
