"""Explanations of a whole-home plan's batteries and heat pumps: the ``generate_explanation`` tool given ``home_plan``.

The input (:data:`HOME_PLAN_SCHEMA`, times with their offset; the text shows times in that offset):

- ``start``: the first slot's start (ISO 8601 with an offset); ``slot_minutes`` (default 15);
- ``currency``; ``fuse_kw`` (the main fuse, kW: a number, or per slot (n) where loads the plan cannot move raise it);
- per slot (n each): ``import_price`` (per kWh), ``pv_kw``, ``curtail_kw`` (default zeros), ``house_kw`` (the base
  load plus the planned appliances and heat pumps), ``import_kw``, ``export_kw`` (default zeros), ``export_price``
  (per kWh: a number or per slot; default 0); ``export_limit_kw`` (kW; default none);
- ``batteries``: each ``{name, capacity_kwh, soc_min_pct (0), soc_max_pct (100), reserve_pct (0),
  charge_kw and discharge_kw (kW; default the most the plan charges and discharges), charge_efficiency (0.95),
  discharge_efficiency (0.95), wear_cost (0, per kWh of throughput), battery_kw (n, + charging), soc_kwh (n + 1, at
  each slot boundary)}``;
- ``heat_pumps``: each ``{name, heat_kw (n), temp_c (n + 1), low_c (n), off_c (n), min_run_slots (0), on_floor_kw (0),
  initial_on_slots (0)}`` (:mod:`.explain_heat`); a battery or a heat pump at least.

The reasons are :func:`~..scheduling.home_explain.battery_reasons` (the same as the whole-home plan's own answer).
The text: ``operator``, each battery's slots with one sentence, equal neighbours merged; ``manager``, per battery how
many slots it charges (from PV, from cheap grid power), discharges (at dear prices, for the fuse) and idles;
``auditor``, the value of a kWh left in store at the end with its median price and efficiency, then each slot's
figures and reason.
Nothing is written anywhere.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
import math
from typing import Any

import numpy as np

from ..prices.curve import FloatArray
from ..scheduling.home_explain import EPS_KW, SlotReason, battery_mode, battery_reasons, reason_text
from ..scheduling.home_model import HomeBattery, slot_limits
from ..validation import closed, vol
from .explain_heat import heat_pump_lines, heat_pump_reasons, heat_pump_schema, heat_pump_structured, heat_pump_texts
from .simulate import aware_time

MAX_SLOTS = 1000
_M: dict[str, tuple[str, str]] = {
    "line": ("{name} {span}: {why}", "{name} {span}: {why}"),
    "summary": (
        (
            "{name}: charges in {charge} slots ({pv} from PV surplus, {cheap} from cheap grid power), discharges in "
            "{discharge} ({dear} at dear prices, {fuse} for the fuse), idles in {idle}."
        ),
        (
            "{name}: lädt in {charge} Slots ({pv} aus PV-Überschuss, {cheap} aus günstigem Netzstrom), entlädt in "
            "{discharge} ({dear} zu teuren Preisen, {fuse} für die Hauptsicherung), ruht in {idle}."
        ),
    ),
    "value": (
        (
            "{name}: a kWh left in store at the end is worth {value} {currency}/kWh (median import price {median} x "
            "discharge efficiency {eff}); fuse {fuse} kW."
        ),
        (
            "{name}: eine am Ende gespeicherte kWh ist {value} {currency}/kWh wert (Median-Bezugspreis {median} x "
            "Entladewirkungsgrad {eff}); Hauptsicherung {fuse} kW."
        ),
    ),
    "audit": (
        "{at} {name}: {reason}, {kw} kW, SoC {soc} %, price {price} {currency}/kWh: {why}",
        "{at} {name}: {reason}, {kw} kW, SoC {soc} %, Preis {price} {currency}/kWh: {why}",
    ),
}


def _finite(value: Any) -> float:
    """Return ``value`` as a finite float; vol.Invalid for anything else (None, a list, a string, inf, a bool)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise vol.Invalid("expected a finite number")
    number = float(value)
    if not np.isfinite(number):
        raise vol.Invalid("expected a finite number")
    return number


_SERIES = vol.All([_finite], vol.Length(min=1, max=MAX_SLOTS + 1))
_PCT = vol.All(_finite, vol.Range(min=0, max=100))
_KW = vol.All(_finite, vol.Range(min=0, min_included=False))
_EFFICIENCY = vol.All(_finite, vol.Range(min=0, max=1, min_included=False))
_BATTERY = closed(
    {
        vol.Required("name"): vol.All(str, vol.Length(min=1, max=100)),
        vol.Required("capacity_kwh"): vol.All(_finite, vol.Range(min=0, min_included=False)),
        vol.Optional("soc_min_pct", default=0.0): _PCT,
        vol.Optional("soc_max_pct", default=100.0): _PCT,
        vol.Optional("reserve_pct", default=0.0): _PCT,
        vol.Optional("charge_kw"): _KW,
        vol.Optional("discharge_kw"): _KW,
        vol.Optional("charge_efficiency", default=0.95): _EFFICIENCY,
        vol.Optional("discharge_efficiency", default=0.95): _EFFICIENCY,
        vol.Optional("wear_cost", default=0.0): vol.All(_finite, vol.Range(min=0)),
        vol.Required("battery_kw"): _SERIES,
        vol.Required("soc_kwh"): _SERIES,
    }
)


def _moment(value: Any) -> datetime:
    try:
        return aware_time(value)
    except ValueError as err:
        raise vol.Invalid(f"not an ISO 8601 time with a time zone: {value!r}") from err


def _some_device(home_plan: Any) -> Any:
    """Refuse a plan with neither a battery nor a heat pump to explain."""
    if not home_plan["batteries"] and not home_plan["heat_pumps"]:
        raise vol.Invalid("home_plan needs a battery or a heat pump to explain")
    return home_plan


HOME_PLAN_SCHEMA = vol.All(
    closed(
        {
            vol.Required("start"): _moment,
            vol.Optional("slot_minutes", default=15): vol.All(int, vol.Range(min=1, max=60)),
            vol.Required("currency"): vol.All(str, vol.Length(min=1, max=10)),
            vol.Required("fuse_kw"): vol.Any(_KW, vol.All([_KW], vol.Length(min=1, max=MAX_SLOTS))),
            vol.Required("import_price"): _SERIES,
            vol.Required("pv_kw"): _SERIES,
            vol.Optional("curtail_kw"): _SERIES,
            vol.Required("house_kw"): _SERIES,
            vol.Required("import_kw"): _SERIES,
            vol.Optional("export_kw"): _SERIES,
            vol.Optional("export_limit_kw"): vol.All(_finite, vol.Range(min=0)),
            vol.Optional("export_price", default=0.0): vol.Any(_finite, _SERIES),
            vol.Optional("batteries", default=list): vol.All([_BATTERY], vol.Length(max=20)),
            vol.Optional("heat_pumps", default=list): vol.All([heat_pump_schema(_SERIES)], vol.Length(max=20)),
        }
    ),
    _some_device,
)


def explain_home(home_plan: Mapping[str, Any], audience: str, lang: str) -> dict[str, Any]:
    """Explain a whole-home plan's batteries and heat pumps to ``audience`` (operator, manager, auditor) in ``lang``.

    ``home_plan`` has passed :data:`HOME_PLAN_SCHEMA`; ``lang`` is en or de. Returns ``{"text", "structured"}``;
    ``structured`` is ``{"kind": "home", "batteries": [{"name", "value_per_kwh", "counts": {reason: slots},
    "slots": [{"start", "mode", "reason", "kw", "soc_pct", "price", "value", "cost", "earn", "end", "why"}]}], "heat_pumps": [{"name",
    "counts", "slots": [{"start", "reason", "kw", "temp_c", "low_c", "price", "why"}]}]}`` (``why`` in ``lang``).

    Raises ValueError when the per-slot lists disagree in length (n, and n + 1 for ``soc_kwh`` and ``temp_c``) or
    the slots run past the year 9999.
    """
    n = len(home_plan["import_price"])
    keys = ("pv_kw", "curtail_kw", "house_kw", "import_kw", "export_kw")
    series = {k: np.asarray(home_plan.get(k, [0.0] * n), dtype=float) for k in keys}
    fuse, export = (np.asarray(home_plan[k], dtype=float) for k in ("fuse_kw", "export_price"))
    if any(a.size != n for a in series.values()) or fuse.size not in (1, n) or export.size not in (1, n):
        raise ValueError(f"home_plan: every per-slot list needs {n} values (one per import_price)")
    step = timedelta(minutes=home_plan["slot_minutes"])
    try:
        starts = [home_plan["start"] + i * step for i in range(n + 1)][:n]  # the last slot's end too
    except OverflowError as err:
        raise ValueError("home_plan: its slots run past the last time Python can represent") from err
    batteries = [_battery_reasons(home_plan, raw, series, lang) for raw in home_plan["batteries"]]
    lines = _text(home_plan, starts, step, batteries=batteries, audience=audience, lang=lang)
    heat_pumps = []
    for raw in home_plan["heat_pumps"]:
        reasons = heat_pump_reasons(raw, home_plan["import_price"])
        why = heat_pump_texts(reasons, home_plan["currency"], lang)
        heat_pumps.append(heat_pump_structured(raw["name"], starts, reasons, why))
        lines += heat_pump_lines(
            raw["name"],
            starts,
            reasons,
            why,
            audience=audience,
            lang=lang,
            currency=home_plan["currency"],
            merged=lambda name, at, text: _merged(name, at, step, text, lang),
        )
    structured = {
        "kind": "home",
        "batteries": [
            {
                "name": battery.name,
                "value_per_kwh": round(reasons[0].end, 6),
                "counts": dict(Counter(r.reason for r in reasons)),
                "slots": [
                    {"start": at.isoformat(), "mode": battery_mode(r.kw), **r.as_dict(), "why": text}
                    for at, r, text in zip(starts, reasons, why, strict=True)
                ],
            }
            for battery, reasons, why in batteries
        ],
        "heat_pumps": heat_pumps,
    }
    return {"text": ("\n" if audience != "manager" else " ").join(lines), "structured": structured}


def _battery_reasons(
    home_plan: Mapping[str, Any], raw: Mapping[str, Any], series: Mapping[str, FloatArray], lang: str
) -> tuple[HomeBattery, list[SlotReason], list[str]]:
    """Return one input battery's limits, its reasons per slot and their sentences in ``lang``."""
    n = series["import_kw"].size
    fuse = slot_limits(home_plan["fuse_kw"], n)
    power = np.asarray(raw["battery_kw"], dtype=float)
    battery = _battery(raw, power)
    export = np.asarray(home_plan["export_price"], dtype=float)
    reasons = battery_reasons(
        battery,
        power,
        np.asarray(raw["soc_kwh"], dtype=float),
        import_price=np.asarray(home_plan["import_price"], dtype=float),
        surplus_kw=series["pv_kw"] - series["curtail_kw"] - series["house_kw"],
        import_kw=series["import_kw"],
        fuse_kw=fuse,
        export_price=float(export) if export.ndim == 0 else export,
        export_kw=series["export_kw"],
        curtail_kw=series["curtail_kw"],
        export_limit_kw=home_plan.get("export_limit_kw", math.inf),
    )
    currency = home_plan["currency"]
    return (
        battery,
        reasons,
        [
            reason_text(r, currency=currency, fuse_kw=float(kw), language=lang)
            for r, kw in zip(reasons, fuse, strict=True)
        ],
    )


def _battery(raw: Mapping[str, Any], power: FloatArray) -> HomeBattery:
    """Return the limits of one battery of the input (its initial SoC is not used).

    Without ``charge_kw`` or ``discharge_kw``, the most the plan (``power``, kW, + charging) charges or discharges.
    """
    return HomeBattery(
        name=raw["name"],
        capacity_kwh=raw["capacity_kwh"],
        charge_kw=raw.get("charge_kw") or max(float(np.max(power)), EPS_KW),
        discharge_kw=raw.get("discharge_kw") or max(-float(np.min(power)), EPS_KW),
        initial_soc_pct=raw["soc_min_pct"],
        soc_min_pct=raw["soc_min_pct"],
        soc_max_pct=raw["soc_max_pct"],
        reserve_pct=raw["reserve_pct"],
        charge_efficiency=raw["charge_efficiency"],
        discharge_efficiency=raw["discharge_efficiency"],
        wear_cost=raw["wear_cost"],
    )


def _t(key: str, lang: str, **kw: Any) -> str:
    return _M[key][1 if lang == "de" else 0].format(**kw)


def _text(
    home_plan: Mapping[str, Any],
    starts: Sequence[datetime],
    step: timedelta,
    *,
    batteries: Sequence[tuple[HomeBattery, list[SlotReason], list[str]]],
    audience: str,
    lang: str,
) -> list[str]:
    """Return the text's lines for ``audience`` (see the module docstring)."""
    currency, fuse = home_plan["currency"], float(np.min(home_plan["fuse_kw"]))
    lines = []
    for battery, reasons, why in batteries:
        if audience == "manager":
            counts = Counter(r.reason for r in reasons)
            modes = Counter(battery_mode(r.kw) for r in reasons)
            lines.append(
                _t(
                    "summary",
                    lang,
                    name=battery.name,
                    **{k: counts[k] for k in ("pv", "cheap", "dear", "fuse")},
                    **{k: modes[k] for k in ("charge", "discharge", "idle")},
                )
            )
        elif audience == "auditor":
            median = float(np.median(home_plan["import_price"]))
            lines.append(
                _t(
                    "value",
                    lang,
                    name=battery.name,
                    value=f"{reasons[0].end:.4f}",
                    currency=currency,
                    median=f"{median:.4f}",
                    eff=f"{battery.discharge_efficiency:g}",
                    fuse=f"{fuse:g}",
                )
            )
            lines += [
                _t(
                    "audit",
                    lang,
                    at=at.strftime("%H:%M"),
                    name=battery.name,
                    reason=r.reason,
                    kw=f"{r.kw:.3f}",
                    soc=f"{r.soc_pct:.1f}",
                    price=f"{r.price:.4f}",
                    currency=currency,
                    why=text,
                )
                for at, r, text in zip(starts, reasons, why, strict=True)
            ]
        else:
            lines += _merged(battery.name, starts, step, why, lang)
    return lines


def _merged(name: str, starts: Sequence[datetime], step: timedelta, why: Sequence[str], lang: str) -> list[str]:
    """Return one line per run of neighbouring slots with the same sentence: "name HH:MM–HH:MM: sentence"."""
    lines, first = [], 0
    for i in range(1, len(why) + 1):
        if i == len(why) or why[i] != why[first]:
            span = f"{starts[first].strftime('%H:%M')}–{(starts[i - 1] + step).strftime('%H:%M')}"
            lines.append(_t("line", lang, name=name, span=span, why=why[first]))
            first = i
    return lines
