"""What a home battery does in each slot of a whole-home plan, and why (pure: no Home Assistant).

:func:`battery_mode` names a slot's planned power (charge, discharge, idle): the mode a select-driven battery is set
to, the mode the automation triggers and conditions follow.

:func:`battery_reasons` says per slot why the battery does it, as a reason code with the figures behind it, and
:func:`reason_text` words it in English or German. The figures are the plan's own, per kWh in store, with the
battery's efficiencies eta_c, eta_d and its wear cost w per kWh of throughput, as the optimizer counts them:

- ``cost``: what a kWh put in store now costs from the grid, (p_t + w) / eta_c (p_t: the import price, fees included);
- ``earn``: what a kWh taken from store now saves, eta_d (p_t - w);
- ``end``: what a kWh left in store at the end is worth (the plan's terminal value: the median import price x eta_d);
- ``value``: what a kWh in store after this slot is worth later in this plan: the most any later discharge of the
  plan earns with it, at least ``end``.

A comparison word in a sentence is chosen from the figures it shows (rounded as shown), so it always holds:

- ``pv``: charging from a PV surplus (the surplus after curtailment, house and loads covers the charge power);
- ``cheap``: charging from the grid with ``cost`` below ``value``;
- ``fuse_ahead``: charging from the grid with ``cost`` not below ``value``, ahead of a later discharge at the fuse;
- ``loss``: charging from the grid with ``cost`` not below ``value`` otherwise (a tie between equal costs or another
  of the plan's limits: phases, heat pumps; the sentence says that it saves nothing);
- ``fuse``: discharging while the import is at the fuse (the slot's own: a fuse may be raised per slot);
- ``dear``: discharging with ``earn`` above ``end``;
- ``spend``: discharging with ``earn`` not above ``end`` (a tie or another limit; saves nothing);
- ``floor``: idle at the reserve floor (max of the lowest SoC and the reserve; within 0.1 %);
- ``full``: idle at the highest SoC (within 0.1 %);
- ``spread``: idle, with ``cost`` not below ``value`` and ``earn`` not above it: neither pays;
- ``elsewhere``: idle otherwise: the plan charges or discharges in other slots, or a limit binds.
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
REASONS: Final = ("pv", "cheap", "fuse_ahead", "loss", "dear", "fuse", "spend", "floor", "full", "spread", "elsewhere")
MONEY_DIGITS: Final = 3  # prices and values are shown, and compared, with this many decimals
TEXTS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "pv": "stores {kw} kW of PV surplus",
        "cheap": "charges from the grid at {price}, {cost} per stored kWh after losses and wear: below the {value} a "
        "stored kWh is worth later",
        "fuse_ahead": "charges from the grid at {price}, {cost} per stored kWh after losses and wear: not below the "
        "{value} a stored kWh is worth later, but it is discharged later when the import would pass the fuse",
        "loss": "charges from the grid at {price}, {cost} per stored kWh after losses and wear: not below the {value} a "
        "stored kWh is worth later, so it saves nothing (a tie between equal costs, or another limit of the plan)",
        "fuse": "discharges to keep the import under the {fuse} kW fuse",
        "dear": "discharges at {price}, {earn} per stored kWh after losses and wear: above the {end} a kWh left in "
        "store is worth at the end",
        "spend": "discharges at {price}, {earn} per stored kWh after losses and wear: not above the {end} a kWh left "
        "in store is worth at the end, so it saves nothing (a tie between equal costs, or another limit of the plan)",
        "floor": "idles: at its reserve floor ({pct} %)",
        "full": "idles: full ({pct} %)",
        "spread": "idles: at {price} neither charging ({cost} per stored kWh) nor discharging ({earn}) beats the "
        "{value} a stored kWh is worth later, once losses and wear are counted",
        "elsewhere": "idles at {price}: the plan charges or discharges it in other slots, or one of its limits binds "
        "(a stored kWh is worth {value} later)",
    },
    "de": {
        "pv": "speichert {kw} kW PV-Überschuss",
        "cheap": "lädt aus dem Netz zu {price}, {cost} je gespeicherte kWh nach Verlusten und Verschleiß: unter den "
        "{value}, die eine gespeicherte kWh später wert ist",
        "fuse_ahead": "lädt aus dem Netz zu {price}, {cost} je gespeicherte kWh nach Verlusten und Verschleiß: nicht "
        "unter den {value}, die eine gespeicherte kWh später wert ist, aber sie wird später entladen, wenn der Bezug "
        "die Hauptsicherung überschreiten würde",
        "loss": "lädt aus dem Netz zu {price}, {cost} je gespeicherte kWh nach Verlusten und Verschleiß: nicht unter "
        "den {value}, die eine gespeicherte kWh später wert ist, spart also nichts (gleich teure Möglichkeiten oder "
        "eine andere Grenze des Plans)",
        "fuse": "entlädt, damit der Bezug unter der Hauptsicherung von {fuse} kW bleibt",
        "dear": "entlädt zu {price}, {earn} je gespeicherte kWh nach Verlusten und Verschleiß: über den {end}, die "
        "eine am Ende gespeicherte kWh wert ist",
        "spend": "entlädt zu {price}, {earn} je gespeicherte kWh nach Verlusten und Verschleiß: nicht über den {end}, "
        "die eine am Ende gespeicherte kWh wert ist, spart also nichts (gleich teure Möglichkeiten oder eine andere "
        "Grenze des Plans)",
        "floor": "ruht: an der Reserve ({pct} %)",
        "full": "ruht: voll ({pct} %)",
        "spread": "ruht: bei {price} schlägt weder Laden ({cost} je gespeicherte kWh) noch Entladen ({earn}) die "
        "{value}, die eine gespeicherte kWh später wert ist, wenn Verluste und Verschleiß zählen",
        "elsewhere": "ruht bei {price}: der Plan lädt oder entlädt in anderen Slots, oder eine seiner Grenzen greift "
        "(eine gespeicherte kWh ist später {value} wert)",
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
    """Why a battery does what it does in one slot (the figures: see the module docstring).

    Attributes:
        reason: one of ``REASONS``.
        kw: the planned power (+ charging), kW.
        soc_pct: the state of charge at the slot's start, percent of the capacity.
        price: the slot's import price per kWh (fees included).
        value: what a kWh in store after this slot is worth later in the plan, per kWh.
        cost: what a kWh put in store in this slot costs from the grid, per kWh.
        earn: what a kWh taken from store in this slot saves, per kWh.
        end: what a kWh left in store at the end is worth, per kWh.

    """

    reason: str
    kw: float
    soc_pct: float
    price: float
    value: float
    cost: float
    earn: float
    end: float

    def as_dict(self) -> dict[str, float | str]:
        """JSON-safe form (floats rounded: kW to W, percent to 0.1, money to 1e-6)."""
        money = {key: round(getattr(self, key), 6) + 0.0 for key in ("price", "value", "cost", "earn", "end")}
        return {"reason": self.reason, "kw": round(self.kw, 3) + 0.0, "soc_pct": round(self.soc_pct, 1) + 0.0, **money}


def shown(amount: float) -> float:
    """Return ``amount`` (money per kWh) as a sentence shows it: rounded to ``MONEY_DIGITS`` decimals."""
    return float(f"{amount:.{MONEY_DIGITS}f}")


def battery_reasons(
    battery: HomeBattery,
    battery_kw: FloatArray,
    soc_kwh: FloatArray,
    *,
    import_price: FloatArray,
    surplus_kw: FloatArray,
    import_kw: FloatArray,
    fuse_kw: Limit,
    end_value: float | None = None,
) -> list[SlotReason]:
    """Return per slot why ``battery`` does what the plan gives it (see the module docstring).

    ``battery_kw``, ``import_price`` (per kWh, fees included), ``surplus_kw`` (PV after curtailment minus house and
    loads) and ``import_kw`` are (n,); ``soc_kwh`` is (n,) or (n + 1,) at the slots' starts; ``fuse_kw`` is a number or
    (n,) one per slot, kW; ``end_value`` the plan's value of a kWh left in store (default: the median import price
    times the discharge efficiency, as :func:`~.home.plan_home`). The efficiencies and the wear cost are the
    battery's. Raises ValueError when the lengths disagree or ``import_price`` is empty.
    """
    n = battery_kw.size
    if n == 0 or any(a.size != n for a in (import_price, surplus_kw, import_kw)) or soc_kwh.size not in (n, n + 1):
        raise ValueError(f"battery_reasons: arrays of {n} slots expected (soc_kwh {n} or {n + 1})")
    price = np.asarray(import_price, dtype=float)
    end = float(np.median(price)) * battery.discharge_efficiency if end_value is None else float(end_value)
    cost = (price + battery.wear_cost) / battery.charge_efficiency
    earn = battery.discharge_efficiency * (price - battery.wear_cost)
    discharging = battery_kw < -EPS_KW
    at_fuse = discharging & (import_kw >= slot_limits(fuse_kw, n) - TOL_KW)
    value, fuse_later = np.empty(n), np.zeros(n, dtype=bool)
    best, fuse_seen = end, False
    for t in range(n - 1, -1, -1):  # the most a later discharge earns with a kWh, and whether one is at the fuse
        value[t], fuse_later[t] = best, fuse_seen
        if discharging[t]:
            best, fuse_seen = max(best, float(earn[t])), fuse_seen or bool(at_fuse[t])
    floor = max(battery.soc_min_pct, battery.reserve_pct)
    out = []
    for i in range(n):
        kw, pct = float(battery_kw[i]), float(soc_kwh[i]) / battery.capacity_kwh * 100
        buy, sell, later = shown(cost[i]), shown(earn[i]), shown(value[i])
        if kw > EPS_KW:
            if surplus_kw[i] >= kw - EPS_KW:
                reason = "pv"
            else:
                reason = "cheap" if buy < later else "fuse_ahead" if fuse_later[i] else "loss"
        elif kw < -EPS_KW:
            reason = "fuse" if at_fuse[i] else "dear" if sell > shown(end) else "spend"
        elif pct <= floor + SOC_MARGIN_PCT:
            reason = "floor"
        elif pct >= battery.soc_max_pct - SOC_MARGIN_PCT:
            reason = "full"
        else:
            reason = "spread" if buy >= later >= sell else "elsewhere"
        out.append(
            SlotReason(
                reason=reason,
                kw=kw,
                soc_pct=pct,
                price=float(price[i]),
                value=float(value[i]),
                cost=float(cost[i]),
                earn=float(earn[i]),
                end=end,
            )
        )
    return out


def plan_reasons(plan: HomePlan, battery: HomeBattery, import_price: FloatArray, fuse_kw: Limit) -> list[SlotReason]:
    """Return :func:`battery_reasons` for a battery of ``plan`` (its ``name`` is the plan's key).

    ``import_price`` holds at least the plan's n slots (fees included, as the plan priced them); ``fuse_kw`` is a
    number or (n,) per slot, kW (the plan's own is ``plan.fuse_kw``). The PV surplus is the PV after curtailment less
    the base load, the appliances and the heat pumps. Raises KeyError when the plan has no such battery.
    """
    n = plan.import_kw.size
    loads = sum((*plan.load_kw.values(), *plan.heat_kw.values()), np.zeros(n))
    surplus = plan.pv_kw - plan.curtail_kw - plan.base_load_kw - loads
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
    money = {
        key: f"{getattr(reason, key):.{MONEY_DIGITS}f} {currency}/kWh"
        for key in ("price", "value", "cost", "earn", "end")
    }
    return texts[reason.reason].format(kw=f"{reason.kw:.2f}", fuse=f"{fuse_kw:g}", pct=f"{reason.soc_pct:.0f}", **money)
