"""What people see of the heat pumps in the whole-home plan: power and temperature now, per slot, and why.

The plan's per-heat-pump arrays are ``HomePlan.heat_kw[name]`` (n,) electrical kW and ``HomePlan.temp_c[name]``
(n + 1,) the store's temperature at each slot boundary; ``name`` is the heat pump's subentry id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..prices.curve import FloatArray
from ..scheduling.heat_explain import heat_reason_text
from ..scheduling.home_heat import floor_and_off, heat_details, heat_reasons
from ..scheduling.home_model import HomePlan
from .heat_config import HeatPumpConfig

EPS_KW = 1e-3  # below this a heat pump counts as off


def heat_kw(plan: HomePlan | None, name: str) -> FloatArray | None:
    """Return the heat pump's planned electrical kW per slot (n,), None when the plan does not hold it."""
    series = plan.heat_kw.get(name) if plan is not None else None
    return None if series is None else np.asarray(series, dtype=np.float64)


def temp_c(plan: HomePlan | None, name: str) -> FloatArray | None:
    """Return the store's planned temperature at each slot boundary (n + 1,), None when not planned."""
    series = plan.temp_c.get(name) if plan is not None else None
    return None if series is None else np.asarray(series, dtype=np.float64)


def reasons(result: Any, name: str) -> list[str]:
    """Return the plan's reason code per slot for the heat pump ("off", "cheap_slot", ...), [] when not planned.

    ``result`` is a HomeResult: its plan, and the heat pumps and import prices the plan was given.
    """
    plan, inputs = getattr(result, "plan", None), getattr(result, "inputs", None)
    pumps = tuple(getattr(inputs, "heat_pumps", ()))
    if plan is None or inputs is None or heat_kw(plan, name) is None or name not in {h.name for h in pumps}:
        return []
    return list(heat_reasons(plan, name, heat_pumps=pumps, import_price=import_price(inputs)))


def import_price(inputs: Any) -> FloatArray:
    """Return the import price per kWh the plan used, per slot of the curve: the energy price plus the network fee.

    ``inputs`` is a HomeResult's inputs (its price curve and grid fees, or None for no fees).
    """
    fees = getattr(inputs, "fees", None)
    prices = np.asarray(inputs.curve.prices, dtype=np.float64)
    return prices + (np.asarray(fees.energy_fee, dtype=np.float64) if fees is not None else 0.0)


def explanation_heat_pumps(result: Any, heat_pumps: Sequence[HeatPumpConfig]) -> list[dict[str, Any]]:
    """Return the plan's heat pumps as ``generate_explanation``'s ``home_plan.heat_pumps`` (``grid/explain_heat.py``).

    ``result`` is a HomeResult; each of ``heat_pumps`` it plans gives its name, planned kW, temperatures, comfort floor
    and temperature when off (``scheduling.home_heat.floor_and_off``) and its minimum run figures.
    """
    plan, inputs = result.plan, result.inputs
    models = {p.name: p for p in inputs.heat_pumps}
    out = []
    for hp in heat_pumps:
        if (model := models.get(hp.subentry_id)) is None or hp.subentry_id not in plan.heat_kw:
            continue
        low, off = floor_and_off(plan, model)
        out.append(
            {
                "name": hp.name,
                "heat_kw": plan.heat_kw[hp.subentry_id].tolist(),
                "temp_c": plan.temp_c[hp.subentry_id].tolist(),
                "low_c": low.tolist(),
                "off_c": off.tolist(),
                "min_run_slots": model.min_run_slots,
                "on_floor_kw": model.on_floor_kw,
                "initial_on_slots": model.initial_on_slots,
            }
        )
    return out


def heat_slots(result: Any, hp: HeatPumpConfig) -> list[Any]:
    """Return the heat pump's plan per slot: ``[{start, kw, temp_c, low_c, high_c, reason}]``, [] when not planned.

    ``result`` is a HomeResult; ``temp_c`` is the temperature at the slot's end, ``low_c``/``high_c`` the slot's
    comfort band.
    """
    plan = getattr(result, "plan", None)
    power, temps = heat_kw(plan, hp.subentry_id), temp_c(plan, hp.subentry_id)
    if plan is None or power is None or temps is None:
        return []
    band = heat_band(getattr(result, "inputs", None), hp.subentry_id)
    why = reasons(result, hp.subentry_id)
    out = []
    for i in range(power.size):
        slot: dict[str, Any] = {
            "start": (plan.start + i * plan.resolution).isoformat(),
            "kw": round(float(power[i]), 3) + 0.0,
            "temp_c": round(float(temps[i + 1]), 2),
        }
        if band is not None:
            slot |= {"low_c": round(float(band[0][i]), 2), "high_c": round(float(band[1][i]), 2)}
        if i < len(why):
            slot["reason"] = why[i]
        out.append(slot)
    return out


def heat_band(inputs: Any, name: str) -> tuple[FloatArray, FloatArray] | None:
    """Return the comfort band (low, high per slot) the plan of ``inputs`` (a HomeInputs) gave the heat pump."""
    hp = next((h for h in getattr(inputs, "heat_pumps", ()) if h.name == name), None)
    return None if hp is None else (hp.comfort_low_c, hp.comfort_high_c)


def heat_payload(result: Any, heat_pumps: Sequence[HeatPumpConfig]) -> list[dict[str, Any]]:
    """Return the heat pumps of a HomeResult for the cards and the service.

    ``[{"heat_pump", "name", "store", "measured_c", "slots": [{start, kw, temp_c, low_c, high_c, reason}]}]``:
    ``measured_c`` is the temperature the plan started from; ``slots`` is empty when the plan does not hold it.
    """
    inputs = getattr(result, "inputs", None)
    out = []
    for hp in heat_pumps:
        model = next((h for h in getattr(inputs, "heat_pumps", ()) if h.name == hp.subentry_id), None)
        out.append(
            {
                "heat_pump": hp.subentry_id,
                "name": hp.name,
                "store": hp.store,
                "measured_c": None if model is None else round(float(model.initial_temp_c), 2),
                "slots": heat_slots(result, hp),
            }
        )
    return out


def explain_heat_pump(result: Any, hp: HeatPumpConfig, language: str = "en") -> list[str]:
    """Why the heat pump runs as planned in each slot of the plan (one sentence per slot, ``language`` en or de).

    ``result`` is a HomeResult; the reasons are the plan's own (``scheduling.home_heat.heat_details``) over the import
    price it used. Empty without a plan or when the plan does not hold the heat pump.
    """
    plan, inputs = getattr(result, "plan", None), getattr(result, "inputs", None)
    pumps = tuple(getattr(inputs, "heat_pumps", ()))
    if plan is None or hp.subentry_id not in plan.heat_kw or hp.subentry_id not in {p.name for p in pumps}:
        return []
    details = heat_details(plan, hp.subentry_id, heat_pumps=pumps, import_price=import_price(inputs))
    return [heat_reason_text(r, currency=plan.currency, language=language) for r in details]
