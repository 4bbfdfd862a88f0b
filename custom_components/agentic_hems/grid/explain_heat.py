"""Explanations of a whole-home plan's heat pumps: the ``heat_pumps`` of ``generate_explanation``'s ``home_plan``.

Each heat pump of the input (:data:`HEAT_PUMP_SCHEMA`) gives, per slot (n each), its planned electrical power
``heat_kw``, the comfort floor at the slot's end ``low_c`` and the temperature the store would end the slot at had it
been off in it ``off_c``; ``temp_c`` (n + 1) at each slot boundary; and what its minimum run time needs
(``min_run_slots``, ``on_floor_kw``, ``initial_on_slots``). The reasons are
:func:`~..scheduling.heat_explain.heat_slot_reasons` on those numbers and the plan's import price (the same as the
home plan's own heat pump reasons). The text: ``operator``, each heat pump's slots with one sentence, equal
neighbours merged; ``manager``, per heat pump how many slots it runs and why; ``auditor``, each slot's figures and
reason. Nothing is written anywhere.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from ..scheduling.heat_explain import HeatReason, HeatRun, heat_reason_text, heat_slot_reasons
from ..validation import Closed, closed, vol

_M: dict[str, tuple[str, str]] = {
    "summary": (
        (
            "{name}: runs in {on} slots ({cheap_slot} at the cheapest price to come, {preheat_before_peak} "
            "pre-heating before dearer slots, {comfort_floor} for the comfort floor, {min_run} for its minimum run "
            "time), off in {off}."
        ),
        (
            "{name}: läuft in {on} Slots ({cheap_slot} zum günstigsten kommenden Preis, {preheat_before_peak} zum "
            "Vorheizen vor teureren Slots, {comfort_floor} für die Komfortgrenze, {min_run} für die Mindestlaufzeit), "
            "aus in {off}."
        ),
    ),
    "audit": (
        (
            "{at} {name}: {reason}, {kw} kW, {temp} °C at the end (floor {low} °C, {off} °C if off), price {price} "
            "{currency}/kWh: {why}"
        ),
        (
            "{at} {name}: {reason}, {kw} kW, {temp} °C am Ende (Grenze {low} °C, {off} °C wenn aus), Preis {price} "
            "{currency}/kWh: {why}"
        ),
    ),
}


def heat_pump_schema(series: Any) -> Closed:
    """Return the schema of one heat pump of ``home_plan``, its per-slot lists checked by ``series``."""
    slots = vol.All(int, vol.Range(min=0, max=10_000))
    return closed(
        {
            vol.Required("name"): vol.All(str, vol.Length(min=1, max=100)),
            vol.Required("heat_kw"): series,
            vol.Required("temp_c"): series,
            vol.Required("low_c"): series,
            vol.Required("off_c"): series,
            vol.Optional("min_run_slots", default=0): slots,
            vol.Optional("on_floor_kw", default=0.0): vol.All(vol.Coerce(float), vol.Range(min=0, max=1000)),
            vol.Optional("initial_on_slots", default=0): slots,
        }
    )


def heat_pump_reasons(raw: Mapping[str, Any], price: Sequence[float]) -> list[HeatReason]:
    """Return one input heat pump's reasons per slot; ValueError when its lists do not fit the plan's n slots."""
    n = len(price)
    if not len(raw["heat_kw"]) == len(raw["low_c"]) == len(raw["off_c"]) == n or len(raw["temp_c"]) != n + 1:
        raise ValueError(f"heat pump {raw['name']!r}: per-slot lists need {n} values (temp_c {n + 1})")
    run = HeatRun(raw["min_run_slots"], raw["on_floor_kw"], raw["initial_on_slots"])
    return heat_slot_reasons(raw["heat_kw"], raw["temp_c"], low=raw["low_c"], off=raw["off_c"], price=price, run=run)


def heat_pump_structured(
    name: str, starts: Sequence[datetime], reasons: Sequence[HeatReason], why: Sequence[str]
) -> dict[str, Any]:
    """Return one heat pump's structured explanation.

    ``{"name", "counts": {reason: slots}, "slots": [{"start", "reason", "kw", "temp_c", "low_c", "price", "why"}]}``.
    """
    return {
        "name": name,
        "counts": dict(Counter(r.reason for r in reasons)),
        "slots": [
            {"start": at.isoformat(), **r.as_dict(), "why": text}
            for at, r, text in zip(starts, reasons, why, strict=True)
        ],
    }


def heat_pump_lines(
    name: str,
    starts: Sequence[datetime],
    reasons: Sequence[HeatReason],
    why: Sequence[str],
    *,
    audience: str,
    lang: str,
    currency: str,
    merged: Callable[[str, Sequence[datetime], Sequence[str]], list[str]],
) -> list[str]:
    """Return one heat pump's text lines for ``audience`` (``merged`` writes the operator's merged lines)."""
    i = 1 if lang == "de" else 0
    if audience == "manager":
        counts = Counter(r.reason for r in reasons)
        on = len(reasons) - counts["off"]
        keys = ("cheap_slot", "preheat_before_peak", "comfort_floor", "min_run", "off")
        return [_M["summary"][i].format(name=name, on=on, **{k: counts[k] for k in keys})]
    if audience == "auditor":
        return [
            _M["audit"][i].format(
                at=at.strftime("%H:%M"),
                name=name,
                reason=r.reason,
                kw=f"{r.kw:.3f}",
                temp=f"{r.temp_c:.2f}",
                low=f"{r.low_c:.2f}",
                off=f"{r.off_c:.2f}",
                price=f"{r.price:.4f}",
                currency=currency,
                why=text,
            )
            for at, r, text in zip(starts, reasons, why, strict=True)
        ]
    return merged(name, starts, why)


def heat_pump_texts(reasons: Sequence[HeatReason], currency: str, lang: str) -> list[str]:
    """Return each slot's sentence in ``lang``."""
    return [heat_reason_text(r, currency=currency, language=lang) for r in reasons]
