"""How well the thermal fit recovers a house it did not see: 40 simulated houses with known parameters.

Run: ``.venv/bin/python benchmarks/thermal_fit.py [HOUSES]`` (default 40). Each house (``tests/scheduling/
thermal_house.py``: UA 200 W/K, C 10 kWh/K, solar gain g 0.3, internal gains G 0.3 kW, a thermostat-driven heat pump
with COP 3 + 0.08/K, indoor measured with 0.05 °C noise, three 2-6 h outages and 2 % single missing samples) has
8 days of 15-minute history: :func:`fit_thermal` sees days 1-7, and day 8 is held out; it is simulated over 24 h from
its measured start by the fit and by the true model (:func:`prediction_error`). Prints the first houses one by one,
then the parameter errors (mean, standard deviation, largest) and the held-out prediction error of both models.
"""

from __future__ import annotations

from pathlib import Path
import sys

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "scheduling")]

from thermal_house import house  # noqa: E402

from custom_components.agentic_hems.scheduling.thermal import ThermalModel, fit_thermal, prediction_error  # noqa: E402

TRUE = ThermalModel(ua_kw_per_k=0.2, capacity_kwh_per_k=10.0, solar_gain=0.3, gains_kw=0.3)
FIT_SLOTS, DAY = 7 * 96, 96


def study(seed: int) -> list[float]:
    """Fit house ``seed`` on days 1-7; return UA (W/K), C, g, G, samples, 1-step RMSE and the held-out errors."""
    h = house(seed, days=8)
    k = FIT_SLOTS
    fit = fit_thermal(h.indoor_c[:k], h.outdoor_c[:k], h.heat_kw[:k], hours=0.25, solar_kw=h.solar_kw[:k])
    held = [
        prediction_error(
            model,
            h.indoor_c[k:],
            h.outdoor_c[k:],
            h.heat_kw[k:],
            hours=0.25,
            solar_kw=h.solar_kw[k:],
            horizon_slots=DAY,
        )
        for model in (fit, TRUE)
    ]
    return [fit.ua_kw_per_k * 1000, fit.capacity_kwh_per_k, fit.solar_gain, fit.gains_kw, fit.samples, fit.rmse_c,
            held[0].rmse_c, held[0].max_c, held[1].rmse_c]  # fmt: skip


def main(houses: int) -> None:
    """Print the study over ``houses`` simulated houses."""
    rows = np.array([study(seed) for seed in range(houses)])
    for seed, r in enumerate(rows[:3]):
        print(f"house {seed}: UA {r[0]:.1f} W/K, C {r[1]:.2f} kWh/K, g {r[2]:.3f}, G {r[3]:.3f} kW, {int(r[4])} samples, "
              f"1-step RMSE {r[5]:.3f} °C, held-out day RMSE {r[6]:.3f} °C (max {r[7]:.3f}; true model {r[8]:.3f})")  # fmt: skip
    print("true: UA 200 W/K, C 10 kWh/K, g 0.3, G 0.3 kW")
    for name, col, true in (("UA", 0, 200.0), ("C", 1, 10.0)):
        err = rows[:, col] / true - 1
        print(f"{name}: mean error {err.mean():+.2%}, std {err.std():.2%}, largest {np.abs(err).max():.2%}")
    print(f"g: mean {rows[:, 2].mean():.3f} (std {rows[:, 2].std():.3f}); "
          f"G: mean {rows[:, 3].mean():.3f} kW (std {rows[:, 3].std():.3f})")  # fmt: skip
    print(f"held-out day, 24 h simulation RMSE: fit {rows[:, 6].mean():.3f} °C (worst {rows[:, 6].max():.3f}), "
          f"true model {rows[:, 8].mean():.3f} °C; largest single error of the fit {rows[:, 7].max():.3f} °C")  # fmt: skip


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 40)
