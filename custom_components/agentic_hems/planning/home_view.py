"""What people see of the whole-home plan: the value now, the per-slot payload and why each battery does what it does.

:func:`home_payload` is the ``home`` field of the schedule websocket and the ``plan_home`` service's answer;
:func:`explain_battery` says per slot, in English or German, why a battery charges, discharges or idles.
"""

from __future__ import annotations

from datetime import datetime
import math
from typing import Any

import numpy as np

from ..prices.curve import FloatArray
from ..scheduling.home_explain import plan_reasons, reason_text
from ..scheduling.home_model import HomePlan, PhaseOver, slot_limits
from .heat_view import explain_heat_pump, explanation_heat_pumps, heat_payload, import_price
from .home_config import BatteryConfig, HomeConfig
from .home_manager import HomePlanManager, HomeResult
from .sg_exec import with_states


def slot_index(plan: HomePlan, now: datetime) -> int | None:
    """Index of the plan's slot containing ``now``, None outside the plan."""
    i = int((now - plan.start) // plan.resolution)
    return i if 0 <= i < plan.import_kw.size else None


def value_now(plan: HomePlan | None, series: FloatArray | None, now: datetime) -> float | None:
    """``series`` (aligned with the plan) at ``now``, rounded to W; None without a plan or outside it."""
    if plan is None or series is None or (i := slot_index(plan, now)) is None:
        return None
    return round(float(series[i]), 3) + 0.0


def soc_pct(plan: HomePlan, bat: BatteryConfig) -> FloatArray | None:
    """Return the battery's planned state of charge in percent at each slot boundary (n + 1,), None when not planned."""
    soc = plan.soc_kwh.get(bat.subentry_id)
    return None if soc is None else soc / bat.capacity_kwh * 100


def home_payload(result: HomeResult | None, config: HomeConfig) -> dict[str, Any] | None:
    """Return the plan for the cards and the service, None before the first plan.

    ``{"slots": [{start, pv_kw, load_kw, battery_kw, soc_pct, import_kw, export_kw, curtail_kw}], "cost",
    "baseline", "saving", "net_cost", "baseline_net_cost", "currency", "horizon_end", "reason", "detail",
    "heat_pumps", "time_limited"}`` (``saving`` is ``baseline_net_cost - net_cost``: the energy stored at the end counts; ``heat_pumps``:
    :func:`.heat_view.heat_payload`): ``load_kw`` is the house's base load plus
    the planned appliances and heat pumps, ``battery_kw`` and ``soc_pct`` (at the slot's start) are over all batteries (+ charging);
    without a plan ``slots`` is empty and ``reason`` says why, and ``phase_over`` (:func:`phase_over_payload`) which
    phase and devices when a phase limit left no plan; ``time_limited``: the best plan found within the time bound.
    """
    if result is None:
        return None
    plan = result.plan
    if plan is None:
        empty: dict[str, Any] = {"slots": [], "cost": None, "baseline": None, "saving": None, "currency": None}
        empty |= {"net_cost": None, "baseline_net_cost": None, "time_limited": None}
        return {
            **empty,
            "horizon_end": None,
            "reason": result.reason,
            "detail": result.detail,
            "heat_pumps": [],
            "grid": None,
            "phase_over": phase_over_payload(result.phase_over),
        }
    n = plan.import_kw.size
    load = plan.base_load_kw + sum([*plan.load_kw.values(), *plan.heat_kw.values()], np.zeros(n))  # heat pumps draw too
    battery = sum(plan.battery_kw.values(), np.zeros(n))
    capacity = sum(b.capacity_kwh for b in config.batteries if b.subentry_id in plan.soc_kwh)
    stored = sum(plan.soc_kwh.values(), np.zeros(n + 1))
    slots = [
        {
            "start": (plan.start + i * plan.resolution).isoformat(),
            "pv_kw": _kw(plan.pv_kw[i]),
            "load_kw": _kw(load[i]),
            "battery_kw": _kw(battery[i]),
            "soc_pct": round(float(stored[i]) / capacity * 100, 1) if capacity else None,
            "import_kw": _kw(plan.import_kw[i]),
            "export_kw": _kw(plan.export_kw[i]),
            "curtail_kw": _kw(plan.curtail_kw[i]),
            **{f"{phase.lower()}_kw": _kw(power[i]) for phase, power in plan.phase_kw.items()},
        }
        for i in range(n)
    ]
    return {
        "slots": slots,
        "cost": round(plan.cost, 4),
        "baseline": round(plan.baseline_cost, 4),
        "saving": round(plan.saving, 4),
        "net_cost": round(plan.net_cost, 4),  # cost minus the value the batteries and heat stores gain
        "baseline_net_cost": round(plan.baseline_net_cost, 4),
        "currency": plan.currency,
        "horizon_end": plan.horizon_end.isoformat(),
        "reason": result.reason,
        "detail": result.detail,
        "time_limited": plan.time_limited,  # the best plan found within the time bound, not a proven optimum
        "heat_pumps": heat_payload(result, config.heat_pumps),  # the heat pumps' power, temperature and band
        "grid": grid_payload(plan, config),
    }


def phase_over_payload(over: PhaseOver | None) -> dict[str, Any] | None:
    """Return where a phase limit leaves no plan, None when none does.

    ``{"phase": "L1".."L3", "start": ISO time of the slot, "limit_kw", "power_kw" (net, negative feeding in),
    "devices": [{"name", "kw"}]}``: the devices on the phase pushing it past the limit, largest first, by name
    ("base" for the base load, "pv" for the PV).
    """
    if over is None:
        return None
    return {
        "phase": over.phase,
        "start": over.start.isoformat(),
        "limit_kw": _kw(over.limit_kw),
        "power_kw": _kw(over.power_kw),
        "devices": [{"name": name, "kw": _kw(kw)} for name, kw in over.devices],
    }


def grid_payload(plan: HomePlan, config: HomeConfig) -> dict[str, Any]:
    """Return what the grid tariff and the connection mean for the plan.

    That is the network fees and the capacity charge in its cost (currency), the month's peak so far it was given and
    the plan's own peak (kW, 15-minute averages), and the per-phase limit (kW, None without one).
    """
    limit = config.phase_current_a * config.nominal_voltage / 1000 if config.phase_current_a is not None else None
    return {
        "fee_cost": round(plan.fee_cost, 4),
        "capacity_cost": round(plan.capacity_cost, 4),
        "peak_so_far_kw": _kw(plan.peak_floor_kw),
        "peak_kw": _kw(plan.peak_kw),
        "phase_limit_kw": None if limit is None else _kw(limit),
    }


def _kw(value: float) -> float:
    return round(float(value), 3) + 0.0


def explain_battery(
    result: HomeResult, bat: BatteryConfig, language: str = "en", export_limit_kw: float = math.inf
) -> list[str]:
    """Why the battery does what it does in each slot of the plan (one sentence per slot, ``language`` en or de).

    The reasons are :func:`~..scheduling.home_explain.battery_reasons` over the plan, its import prices (network fee
    included), its export prices and the fuse it kept in each slot, with the export limit ``export_limit_kw`` (kW,
    math.inf: none); empty without a plan or when the plan has no such battery.
    """
    plan, inputs = result.plan, result.inputs
    if plan is None or inputs is None or bat.subentry_id not in plan.battery_kw:
        return []
    fuse = slot_limits(plan.fuse_kw, plan.import_kw.size)
    reasons = plan_reasons(
        plan,
        bat.battery(0.0),
        import_price(inputs),
        fuse,
        export_price=inputs.export_price,
        export_limit_kw=export_limit_kw,
    )
    return [
        reason_text(r, currency=plan.currency, fuse_kw=float(kw), language=language)
        for r, kw in zip(reasons, fuse, strict=True)
    ]


def home_answer(home: HomePlanManager, language: str, slots: int | None = None) -> dict[str, Any]:
    """Return the whole-home plan as the ``plan_home`` action and the LLM API answer it.

    :func:`home_payload` plus ``batteries: [{battery, name, battery_kw[], soc_pct[], why[]}]`` (``why`` in
    ``language``, en or de), every per-slot list cut to its first ``slots`` when given.
    """
    payload = home_payload(home.result, home.config) or {"slots": [], "reason": "not_planned_yet"}
    plan = home.result.plan if home.result else None
    batteries = []
    for bat in home.config.batteries:
        soc = soc_pct(plan, bat) if plan else None
        batteries.append(
            {
                "battery": bat.subentry_id,
                "name": bat.name,
                "battery_kw": [round(float(v), 3) for v in plan.battery_kw.get(bat.subentry_id, [])][:slots]
                if plan
                else [],
                "soc_pct": [round(float(v), 1) for v in soc][:slots] if soc is not None else [],
                "why": explain_battery(home.result, bat, language, home.config.export_limit_kw)[:slots]
                if home.result
                else [],
            }
        )
    return {**payload, "slots": payload["slots"][:slots], "batteries": batteries}


def explanation_input(home: HomePlanManager) -> dict[str, Any] | None:
    """Return the live whole-home plan as ``generate_explanation``'s ``home_plan`` (``grid/explain_home.py``).

    The plan's start, slots, currency, the fuse (kW; per slot where the plan raised it), import prices (network fee included), PV,
    curtailment, the house (base load, appliances and heat pumps, kW), import, export and its price, each configured
    battery of the plan with its limits, efficiencies, wear cost, kW and SoC (kWh), and each heat pump (:func:`.heat_view.explanation_heat_pumps`). None without a plan or
    with neither a battery nor a heat pump in it.
    """
    plan, inputs = (home.result.plan, home.result.inputs) if home.result else (None, None)
    if plan is None or inputs is None:
        return None
    batteries = [
        {
            "name": bat.name,
            "capacity_kwh": bat.capacity_kwh,
            "soc_min_pct": bat.soc_min_pct,
            "soc_max_pct": bat.soc_max_pct,
            "reserve_pct": bat.reserve_pct,
            "charge_kw": bat.charge_kw,
            "discharge_kw": bat.discharge_kw,
            "charge_efficiency": bat.charge_efficiency,
            "discharge_efficiency": bat.discharge_efficiency,
            "wear_cost": bat.wear_cost,
            "battery_kw": plan.battery_kw[bat.subentry_id].tolist(),
            "soc_kwh": plan.soc_kwh[bat.subentry_id].tolist(),
        }
        for bat in home.config.batteries
        if bat.subentry_id in plan.battery_kw
    ]
    heat_pumps = explanation_heat_pumps(home.result, home.config.heat_pumps)
    if not batteries and not heat_pumps:
        return None
    n = plan.import_kw.size
    return {
        "start": plan.start.isoformat(),
        "slot_minutes": int(plan.resolution.total_seconds() // 60),
        "currency": plan.currency,
        "fuse_kw": np.asarray(plan.fuse_kw).tolist() if np.ndim(plan.fuse_kw) else home.planner.power_limit_kw,
        "import_price": import_price(inputs)[:n].tolist(),
        "pv_kw": plan.pv_kw.tolist(),
        "curtail_kw": plan.curtail_kw.tolist(),
        "house_kw": (plan.base_load_kw + sum((*plan.load_kw.values(), *plan.heat_kw.values()), np.zeros(n))).tolist(),
        "import_kw": plan.import_kw.tolist(),
        "export_price": _export_price(np.asarray(inputs.export_price[:n], dtype=float)),
        "export_kw": plan.export_kw.tolist(),
        **({} if math.isinf(home.config.export_limit_kw) else {"export_limit_kw": home.config.export_limit_kw}),
        "batteries": batteries,
        "heat_pumps": heat_pumps,
    }


def _export_price(prices: FloatArray) -> float | list[float]:
    """Return the export prices per kWh as one number when they are all equal (a fixed feed-in), else per slot."""
    return float(prices[0]) if np.all(prices == prices[0]) else prices.tolist()


def why_now(home: HomePlanManager, name: str, language: str, now: datetime) -> dict[str, Any]:
    """Say why the battery or heat pump named ``name`` (case-insensitive) does what the plan has it do at ``now``.

    Returns ``{"device", "now", "until", "then"}``: the sentence of the slot holding ``now`` (``language`` en or de),
    the start of the first later slot with another sentence (ISO 8601, UTC; None at the plan's end) and that
    sentence (or None); or ``{"error", "device"}``: ``unknown_device`` (no battery or heat pump of that name),
    ``home_plan_not_available`` (no plan holds it, or ``now`` is outside the plan).
    """
    key = name.strip().casefold()
    batteries = [b for b in home.config.batteries if b.name.casefold() == key]
    pumps = [h for h in home.config.heat_pumps if h.name.casefold() == key]
    if not batteries and not pumps:
        return {"error": "unknown_device", "device": name}
    device = (batteries or pumps)[0].name
    result = home.result
    i = slot_index(result.plan, now) if result is not None and result.plan is not None else None
    if result is None or result.plan is None or i is None:
        return {"error": "home_plan_not_available", "device": device}
    why = (
        explain_battery(result, batteries[0], language, home.config.export_limit_kw)
        if batteries
        else explain_heat_pump(result, pumps[0], language)
    )
    if pumps and pumps[0].sg_ready:
        why = with_states(
            home.hass, pumps[0], result, why, language, stored=home.sg_blocks.times.get(pumps[0].subentry_id)
        )
    if not why:
        return {"error": "home_plan_not_available", "device": device}
    j = next((k for k in range(i + 1, len(why)) if why[k] != why[i]), None)
    until = None if j is None else (result.plan.start + j * result.plan.resolution).isoformat()
    return {"device": device, "now": why[i], "until": until, "then": None if j is None else why[j]}
