"""EMHASS 0.18.7 on a :class:`home_inputs.Home`: its day-ahead optimisation, configured like the home.

Only for ``.venv-bench`` (see ``setup_emhass.sh``). EMHASS works in W and Wh; its battery must end at ``soc_final``
(set to the initial SoC, its usual configuration), its deferrable loads are the appliances (semi-continuous, one
constant block) and the EV (continuous up to 11 kW, 3 hours' worth of energy).

A heat pump maps onto EMHASS's ``def_load_config`` entry ``{"thermal_config": {...}}`` of a deferrable load (read in
``Optimization._add_thermal_load_constraints``). Per 15-minute step Δt = h hours, with P in W, EMHASS models

    T[t+1] = T[t] + P[t] * heating_rate * Δt / nominal_power - cooling_constant * Δt * (T[t] - T_out[t])

and ours (:class:`~custom_components.agentic_hems.scheduling.home_model.HomeHeatPump`, P in kW) is

    T[t+1] = T[t] + h / C * (cop[t] P[t] - UA (T[t] - ambient[t]) + gains[t]),

so the same house is, term by term:

    nominal_power_of_deferrable_loads   max_kw * 1000 (W)
    heating_rate                        cop * max_kw / C (K/h at nominal power); EMHASS has one number, so the
                                        COP must be constant (its per-step COPs exist only for thermal_battery,
                                        whose heating demand does not depend on the store's temperature)
    cooling_constant                    UA / C (1/h)
    outdoor_temperature_forecast        ambient + gains / UA (°C; the gains folded into the outdoor temperature)
    start_temperature                   initial_temp_c
    min_temperatures, max_temperatures  comfort_low_c, comfort_high_c per step (EMHASS skips index 0, the start)
    sense, thermal_inertia              "heat", 0 (no lag)
    minimum_power_of_deferrable_loads   min_kw * 1000 (EMHASS: P >= min * on and P <= max * on, our off-or-in-range)
    def_minimum_on_time / _off_time     min_run_slots / min_off_slots (steps); def_current_on/off_timesteps the
                                        initial_on/off_slots
    operating_hours_of_each_deferrable_load  0 (no energy target: the comfort band alone makes it run)

EMHASS has no temperature after the last step (its T has n entries, ours n + 1 with the comfort band also at the
end), so its heat pump never runs in the last step, and it has no ``desired_temperatures`` penalty here (hard band
only, as ours).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
import json
import logging
import pathlib
import time
from typing import Any

from home_inputs import Home
import numpy as np
import pandas as pd

from custom_components.agentic_hems.scheduling.home_model import HomeHeatPump

_LOGGER = logging.getLogger("emhass-bench")
_LOGGER.setLevel(logging.ERROR)


def _paths() -> dict[str, pathlib.Path]:
    import emhass  # noqa: PLC0415

    root = pathlib.Path(emhass.__file__).parent
    return {
        "root_path": root,
        "data_path": pathlib.Path("/tmp/emhass-bench"),
        "associations_path": root / "data" / "associations.csv",
        "defaults_path": root / "data" / "config_defaults.json",
    }


def _window(home: Home, spec: Any) -> tuple[int, int]:
    """EMHASS start and end timesteps of a load's window (end exclusive)."""
    first = int((spec.earliest_start - home.curve.start) / home.curve.resolution)
    stop = int((spec.deadline - home.curve.start) / home.curve.resolution)
    return max(first, 0), min(stop, len(home.curve))


def _deferrable(home: Home) -> dict[str, list[Any]]:
    """EMHASS's per-deferrable-load lists: the appliances, the EV and (when the home has one) the heat pump."""
    windows = [_window(home, spec) for spec in home.loads]
    lists: dict[str, list[Any]] = {
        "nominal_power_of_deferrable_loads": [spec.power_kw * 1000 for spec in home.loads],
        "minimum_power_of_deferrable_loads": [0.0] * len(home.loads),
        "operating_hours_of_each_deferrable_load": [
            (spec.duration_min / 60) if spec.contiguous else spec.energy_kwh / spec.power_kw for spec in home.loads
        ],
        "start_timesteps_of_each_deferrable_load": [w[0] for w in windows],
        "end_timesteps_of_each_deferrable_load": [w[1] for w in windows],
        "treat_deferrable_load_as_semi_cont": [spec.contiguous for spec in home.loads],
        "set_deferrable_load_single_constant": [spec.contiguous for spec in home.loads],
        "def_load_config": [{} for _ in home.loads],
    }
    pump = home.heat_pump
    if pump is not None:
        for key, value in (
            ("nominal_power_of_deferrable_loads", pump.max_kw * 1000),
            ("minimum_power_of_deferrable_loads", pump.min_kw * 1000),
            ("operating_hours_of_each_deferrable_load", 0.0),
            ("start_timesteps_of_each_deferrable_load", 0),
            ("end_timesteps_of_each_deferrable_load", len(home.curve)),
            ("treat_deferrable_load_as_semi_cont", False),
            ("set_deferrable_load_single_constant", False),
            ("def_load_config", {"thermal_config": thermal_config(pump)}),
        ):
            lists[key].append(value)
    count = len(lists["def_load_config"])
    on_off = [] if pump is None else [pump]
    lists |= {
        "set_deferrable_startup_penalty": [0.0] * count,
        "deferrable_load_max_cost": [0.0] * count,
        "set_deferrable_max_startups": [0] * count,
        "def_minimum_on_time": [0] * len(home.loads) + [p.min_run_slots for p in on_off],
        "def_minimum_off_time": [0] * len(home.loads) + [p.min_off_slots for p in on_off],
        "cost_forecast_per_deferrable_load": [None] * count,
        "is_electric_load": [True] * count,
    }
    return lists


def thermal_config(pump: HomeHeatPump) -> dict[str, Any]:
    """The ``thermal_config`` of a heat pump with a constant COP and no gains (mapping in the module docstring)."""
    cop = float(pump.cop[0])
    if not np.all(pump.cop == cop) or pump.gains_kw is not None:
        raise ValueError("EMHASS's thermal_config takes one COP and no gains")
    return {
        "heating_rate": cop * pump.max_kw / pump.capacity_kwh_per_k,
        "cooling_constant": pump.ua_kw_per_k / pump.capacity_kwh_per_k,
        "start_temperature": pump.initial_temp_c,
        "min_temperatures": pump.comfort_low_c.tolist(),
        "max_temperatures": pump.comfort_high_c.tolist(),
        "sense": "heat",
    }


def _config(home: Home, gap: float) -> dict[str, Any]:
    paths = _paths()
    config = json.loads(paths["defaults_path"].read_text())
    bat = home.battery
    lists = _deferrable(home)
    config.update(lists)
    config.update(
        {
            "optimization_time_step": 15,
            "costfun": "profit",
            "lp_solver_mip_rel_gap": gap,
            "lp_solver_timeout": 60,
            "number_of_deferrable_loads": len(lists["def_load_config"]),
            "maximum_power_from_grid": home.fuse_kw * 1000,
            "maximum_power_to_grid": home.export_limit_kw * 1000,
            "compute_curtailment": True,
            "set_use_battery": True,
            "set_nocharge_from_grid": False,
            "set_nodischarge_to_grid": False,
            "battery_nominal_energy_capacity": bat.capacity_kwh * 1000,
            "battery_charge_power_max": bat.charge_kw * 1000,
            "battery_discharge_power_max": bat.discharge_kw * 1000,
            "battery_charge_efficiency": bat.charge_efficiency,
            "battery_discharge_efficiency": bat.discharge_efficiency,
            "battery_minimum_state_of_charge": bat.floor_kwh / bat.capacity_kwh,
            "battery_maximum_state_of_charge": bat.ceiling_kwh / bat.capacity_kwh,
            "battery_target_state_of_charge": bat.initial_soc_pct / 100,
            "weight_battery_charge": bat.wear_cost,
            "weight_battery_discharge": bat.wear_cost,
            "inverter_is_hybrid": False,
        }
    )
    if home.fees is not None:
        config["capacity_cost_per_kw"] = home.fees.capacity_price
    return config


def emhass_plan(
    home: Home, *, gap: float = 0.01
) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, tuple[float, float]]:
    """Run EMHASS's day-ahead optimisation on ``home``.

    Returns:
        (per load and heat pump kW, battery kW positive charging, curtailment kW, (wall, CPU) seconds spent building
        and solving the problem: ``Optimization(...)`` plus ``perform_dayahead_forecast_optim``).

    """
    from emhass import utils  # noqa: PLC0415
    from emhass.optimization import Optimization  # noqa: PLC0415

    paths = _paths()
    paths["data_path"].mkdir(exist_ok=True)
    params = asyncio.run(utils.build_params(paths, {}, _config(home, gap), _LOGGER))
    retrieve, optim, plant = utils.get_yaml_parse(params, _LOGGER)
    n = len(home.curve)
    index = pd.date_range(home.curve.start, periods=n, freq=timedelta(minutes=15))
    frame = pd.DataFrame({"unit_load_cost": home.curve.prices, "unit_prod_price": home.export_price}, index=index)
    peak = {}
    if home.heat_pump is not None:
        frame["outdoor_temperature_forecast"] = home.heat_pump.ambient_c
    if home.fees is not None:
        peak = {"current_period_peak": max(home.fees.peak_floor_kw) * 1000}
    started, cpu = time.perf_counter(), time.process_time()
    opt = Optimization(
        retrieve,
        optim,
        plant,
        "unit_load_cost",
        "unit_prod_price",
        "profit",
        paths,
        _LOGGER,
        opt_time_delta=n // 4,
        num_timesteps=n,
    )
    soc = home.battery.initial_soc_pct / 100
    result = opt.perform_dayahead_forecast_optim(
        frame,
        pd.Series(home.pv_kw * 1000, index=index),
        pd.Series(home.base_kw * 1000, index=index),
        soc_init=soc,
        soc_final=soc,
        **peak,
    )
    seconds = (time.perf_counter() - started, time.process_time() - cpu)
    names = [spec.name for spec in home.loads] + ([home.heat_pump.name] if home.heat_pump is not None else [])
    loads = {name: result[f"P_deferrable{k}"].to_numpy() / 1000 for k, name in enumerate(names)}
    curtail = result["P_PV_curtailment"].to_numpy() / 1000 if "P_PV_curtailment" in result else np.zeros(n)
    return loads, -result["P_batt"].to_numpy() / 1000, curtail, seconds
