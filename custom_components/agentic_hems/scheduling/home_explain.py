"""What a home battery does in each slot of a whole-home plan, and why (pure: no Home Assistant).

:func:`battery_mode` names a slot's planned power (charge, discharge, idle): the mode a select-driven battery is set
to, the mode the automation triggers and conditions follow.

:func:`battery_reasons` says per slot why the battery does it, as a reason code with the figures behind it, and
:func:`reason_text` words it in English or German. The value of a stored kWh is the plan's terminal value: the
horizon's median import price times the discharge efficiency.

- ``pv``: charging from a PV surplus (the surplus after curtailment, house and loads covers the charge power);
- ``cheap``: charging from the grid at a price below the value of a stored kWh;
- ``fuse``: discharging while the import is at the fuse (the slot's own: a fuse may be raised per slot);
- ``dear``: discharging at a price above that value;
- ``floor``: idle at the reserve floor (max of the lowest SoC and the reserve; within 0.1 %);
- ``full``: idle at the highest SoC (within 0.1 %);
- ``spread``: idle, the price lies where neither charging nor discharging pays once losses and wear are counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np

from ..prices.curve import FloatArray
from .home_model import TOL_KW, HomeBattery, HomePlan, Limit, slot_limits

CHARGE: Final = "charge"
DISCHARGE: Final = "discharge"
IDLE: Final = "idle"
MODES: Final = (CHARGE, DISCHARGE, IDLE)
MODE_THRESHOLD_KW: Final = 0.05  # below this much planned power (either way) a battery idles
EPS_KW: Final = 1e-3  # below this a battery counts as idle when its reasons are given
SOC_MARGIN_PCT: Final = 0.1
REASONS: Final = ("pv", "cheap", "dear", "fuse", "floor", "full", "spread")
TEXTS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "pv": "stores {kw} kW of PV surplus",
        "cheap": "charges from the grid at {price}: below the {value} a stored kWh is worth later",
        "dear": "discharges at {price}: above the {value} a stored kWh is worth later",
        "fuse": "discharges to keep the import under the {fuse} kW fuse",
        "floor": "idles: at its reserve floor ({pct} %)",
        "full": "idles: full ({pct} %)",
        "spread": "idles: at {price} neither charging nor discharging pays once losses and wear are counted (a stored "
        "kWh is worth {value})",
    },
    "de": {
        "pv": "speichert {kw} kW PV-Überschuss",
        "cheap": "lädt aus dem Netz zu {price}: unter den {value}, die eine gespeicherte kWh später wert ist",
        "dear": "entlädt zu {price}: über den {value}, die eine gespeicherte kWh später wert ist",
        "fuse": "entlädt, damit der Bezug unter der Hauptsicherung von {fuse} kW bleibt",
        "floor": "ruht: an der Reserve ({pct} %)",
        "full": "ruht: voll ({pct} %)",
        "spread": "ruht: bei {price} lohnt weder Laden noch Entladen, wenn Verluste und Verschleiß zählen (eine "
        "gespeicherte kWh ist {value} wert)",
    },
}


def battery_mode(kw: float) -> str:
    """Return the mode of a planned battery power in kW (+ charging): charge, discharge or idle.

    ``charge`` above ``MODE_THRESHOLD_KW``, ``discharge`` below ``-MODE_THRESHOLD_KW``, else ``idle``.
    """
    if kw > MODE_THRESHOLD_KW:
        return CHARGE
    if kw < -MODE_THRESHOLD_KW:
        return DISCHARGE
    return IDLE


@dataclass(frozen=True, kw_only=True)
class SlotReason:
    """Why a battery does what it does in one slot.

    Attributes:
        reason: one of ``REASONS``.
        kw: the planned power (+ charging), kW.
        soc_pct: the state of charge at the slot's start, percent of the capacity.
        price: the slot's import price per kWh.
        value: the value of a stored kWh (the median import price times the discharge efficiency).

    """

    reason: str
    kw: float
    soc_pct: float
    price: float
    value: float

    def as_dict(self) -> dict[str, float | str]:
        """JSON-safe form (floats rounded: kW to W, percent to 0.1, money to 1e-6)."""
        return {
            "reason": self.reason,
            "kw": round(self.kw, 3) + 0.0,
            "soc_pct": round(self.soc_pct, 1) + 0.0,
            "price": round(self.price, 6) + 0.0,
            "value": round(self.value, 6) + 0.0,
        }


def battery_reasons(
    battery: HomeBattery,
    battery_kw: FloatArray,
    soc_kwh: FloatArray,
    *,
    import_price: FloatArray,
    surplus_kw: FloatArray,
    import_kw: FloatArray,
    fuse_kw: Limit,
) -> list[SlotReason]:
    """Return per slot why ``battery`` does what the plan gives it (see the module docstring).

    ``battery_kw``, ``import_price`` (per kWh), ``surplus_kw`` (PV after curtailment minus house and loads) and
    ``import_kw`` are (n,); ``soc_kwh`` is (n,) or (n + 1,) at the slots' starts; ``fuse_kw`` is a number or (n,)
    one per slot, kW. Raises ValueError when the lengths disagree or ``import_price`` is empty.
    """
    n = battery_kw.size
    if n == 0 or any(a.size != n for a in (import_price, surplus_kw, import_kw)) or soc_kwh.size not in (n, n + 1):
        raise ValueError(f"battery_reasons: arrays of {n} slots expected (soc_kwh {n} or {n + 1})")
    value = float(np.median(import_price)) * battery.discharge_efficiency
    floor = max(battery.soc_min_pct, battery.reserve_pct)
    fuse = slot_limits(fuse_kw, n)
    out = []
    for i in range(n):
        kw, pct = float(battery_kw[i]), float(soc_kwh[i]) / battery.capacity_kwh * 100
        if kw > EPS_KW:
            reason = "pv" if surplus_kw[i] >= kw - EPS_KW else "cheap"
        elif kw < -EPS_KW:
            reason = "fuse" if import_kw[i] >= fuse[i] - TOL_KW else "dear"
        elif pct <= floor + SOC_MARGIN_PCT:
            reason = "floor"
        elif pct >= battery.soc_max_pct - SOC_MARGIN_PCT:
            reason = "full"
        else:
            reason = "spread"
        out.append(SlotReason(reason=reason, kw=kw, soc_pct=pct, price=float(import_price[i]), value=value))
    return out


def plan_reasons(plan: HomePlan, battery: HomeBattery, import_price: FloatArray, fuse_kw: Limit) -> list[SlotReason]:
    """Return :func:`battery_reasons` for a battery of ``plan`` (its ``name`` is the plan's key).

    ``import_price`` holds at least the plan's n slots; ``fuse_kw`` is a number or (n,) per slot, kW (the plan's own
    is ``plan.fuse_kw``). Raises KeyError when the plan has no such battery.
    """
    n = plan.import_kw.size
    surplus = plan.pv_kw - plan.curtail_kw - plan.base_load_kw - sum(plan.load_kw.values(), np.zeros(n))
    return battery_reasons(
        battery,
        plan.battery_kw[battery.name],
        plan.soc_kwh[battery.name],
        import_price=np.asarray(import_price[:n], dtype=float),
        surplus_kw=surplus,
        import_kw=plan.import_kw,
        fuse_kw=fuse_kw,
    )


def reason_text(reason: SlotReason, *, currency: str, fuse_kw: float, language: str = "en") -> str:
    """Return one slot's reason as a sentence in ``language`` (en or de; anything else: en); ``fuse_kw``: the slot's."""
    texts = TEXTS.get(language, TEXTS["en"])
    return texts[reason.reason].format(
        kw=f"{reason.kw:.2f}",
        fuse=f"{fuse_kw:g}",
        pct=f"{reason.soc_pct:.0f}",
        price=f"{reason.price:.3f} {currency}/kWh",
        value=f"{reason.value:.3f} {currency}/kWh",
    )
