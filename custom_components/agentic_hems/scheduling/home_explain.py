"""What a home battery does in each slot of a whole-home plan, and why (pure: no Home Assistant).

:func:`battery_mode` names a slot's planned power (charge, discharge, idle): the mode a select-driven battery is set
to, the mode the automation triggers and conditions follow.

:func:`battery_reasons` says per slot why the battery does it, as a reason code with the figures behind it, and
:func:`reason_text` words it in English or German. The figures are the plan's own, per kWh in store, with the
battery's efficiencies eta_c, eta_d and its wear cost w per kWh of throughput, as the optimizer counts them. With p_t
the import price (fees included) and q_t the export price:

- ``cost``: what a kWh put in store from the grid costs, (p_t + w) / eta_c;
- ``earn``: what a kWh taken from store saves, eta_d (p_t - w); eta_d (q_t - w) for a discharge while the home
  exports (the battery's last kW goes out to the grid);
- ``end``: what a kWh left in store at the end is worth (the plan's terminal value: the median import price x eta_d);
- ``value``: what one more kWh kept in store after the slot would be worth later: the best of charging less,
  (m_u + w) / eta_c, or discharging more where the battery has power to spare, eta_d (m_u - w), in a later slot u it
  can reach without passing the highest SoC (m_u: p_u while the home imports, else q_u), and ``end`` if it reaches
  the end; ``end`` when none can be reached;
- ``need``: what a stored kWh saves later: the least of the later discharges it can feed before the SoC would pass
  the floor, eta_d (M_u - w) (M_u: q_u while the home exports, else p_u; at the fuse any price), and ``end`` if it
  reaches the end; ``end`` when that least is not finite.

At an optimum of the plan's model, with the rest of the plan as it is, a charge's ``cost`` is at most ``need`` and a
discharge's ``earn`` at least ``value`` (both bound the dual value of stored energy); an idle slot costs at least
``value`` to charge and earns at most ``need`` to discharge. A comparison word is chosen from the figures as a
sentence shows them (rounded), so it always holds:

- ``pv``: charging from a PV surplus (the surplus after curtailment, house, loads and heat pumps covers the charge);
- ``cheap``: charging from the grid with ``cost`` below ``need``;
- ``fuse_ahead``: charging from the grid, not cheaper, ahead of a later discharge at the fuse;
- ``loss``: charging from the grid with ``cost`` not below ``need`` otherwise (the sentence says it saves nothing: a
  tie between equal costs, or another limit of the plan such as phases or heat pumps);
- ``fuse``: discharging while the import is at the fuse (the slot's own: a fuse may be raised per slot);
- ``dear``: discharging (the home does not export), with ``earn`` above ``value``;
- ``export``: discharging while the home exports, with ``earn`` above ``value``;
- ``spend``: discharging with ``earn`` not above ``value`` (saves nothing: a tie or another limit);
- ``floor``: idle at the reserve floor (max of the lowest SoC and the reserve; within 0.1 %);
- ``full``: idle at the highest SoC (within 0.1 %);
- ``spread``: idle while importing under the fuse, with ``cost`` not below ``value`` and ``earn`` not above ``need``:
  neither pays;
- ``elsewhere``: idle otherwise: the plan charges or discharges in other slots, or a limit binds.

The export price is taken as it is: an export limit or curtailment the plan met is not known here.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
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
REASONS: Final = (
    "pv", "cheap", "fuse_ahead", "loss", "fuse", "dear", "export", "spend", "floor", "full", "spread", "elsewhere"
)  # fmt: skip
MONEY_DIGITS: Final = 3  # money per kWh is shown, and compared, with this many decimals
_AFTER: Final = "after losses and wear"
_NOTHING: Final = "so it saves nothing (a tie between equal costs, or another limit of the plan)"
_DE_AFTER: Final = "nach Verlusten und Verschleiß"
_DE_NOTHING: Final = "spart also nichts (gleich teure Möglichkeiten oder eine andere Grenze des Plans)"
TEXTS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "pv": "stores {kw} kW of PV surplus",
        "cheap": f"charges from the grid at {{price}}, {{cost}} per stored kWh {_AFTER}: below the {{need}} a stored "
        "kWh saves later",
        "fuse_ahead": "charges from the grid at {price} for a later discharge that keeps the import under the fuse",
        "loss": f"charges from the grid at {{price}}, {{cost}} per stored kWh {_AFTER}: not below the {{need}} a "
        f"stored kWh saves later, {_NOTHING}",
        "fuse": "discharges to keep the import under the {fuse} kW fuse",
        "dear": f"discharges at {{price}}, {{earn}} per stored kWh {_AFTER}: above the {{value}} a kWh kept in store "
        "is worth later",
        "export": f"discharges into the grid at the {{export}} export price, {{earn}} per stored kWh {_AFTER}: above "
        "the {value} a kWh kept in store is worth later",
        "spend": f"discharges for {{earn}} per stored kWh {_AFTER}: not above the {{value}} a kWh kept in store is "
        f"worth later, {_NOTHING}",
        "floor": "idles: at its reserve floor ({pct} %)",
        "full": "idles: full ({pct} %)",
        "spread": "idles: at {price} charging ({cost} per stored kWh) would not beat the {value} a kWh kept in store "
        "is worth later, nor discharging ({earn}) the {need} a stored kWh saves later",
        "elsewhere": "idles at {price}: the plan charges or discharges it in other slots, or one of its limits binds",
    },
    "de": {
        "pv": "speichert {kw} kW PV-Überschuss",
        "cheap": f"lädt aus dem Netz zu {{price}}, {{cost}} je gespeicherte kWh {_DE_AFTER}: unter den {{need}}, die "
        "eine gespeicherte kWh später spart",
        "fuse_ahead": "lädt aus dem Netz zu {price} für eine spätere Entladung, die den Bezug unter der Hauptsicherung "
        "hält",
        "loss": f"lädt aus dem Netz zu {{price}}, {{cost}} je gespeicherte kWh {_DE_AFTER}: nicht unter den {{need}}, "
        f"die eine gespeicherte kWh später spart, {_DE_NOTHING}",
        "fuse": "entlädt, damit der Bezug unter der Hauptsicherung von {fuse} kW bleibt",
        "dear": f"entlädt zu {{price}}, {{earn}} je gespeicherte kWh {_DE_AFTER}: über den {{value}}, die eine "
        "behaltene kWh später wert ist",
        "export": f"entlädt ins Netz zum Einspeisepreis von {{export}}, {{earn}} je gespeicherte kWh {_DE_AFTER}: über "
        "den {value}, die eine behaltene kWh später wert ist",
        "spend": f"entlädt für {{earn}} je gespeicherte kWh {_DE_AFTER}: nicht über den {{value}}, die eine behaltene "
        f"kWh später wert ist, {_DE_NOTHING}",
        "floor": "ruht: an der Reserve ({pct} %)",
        "full": "ruht: voll ({pct} %)",
        "spread": "ruht: bei {price} schlägt Laden ({cost} je gespeicherte kWh) nicht die {value}, die eine behaltene "
        "kWh später wert ist, und Entladen ({earn}) nicht die {need}, die eine gespeicherte kWh später spart",
        "elsewhere": "ruht bei {price}: der Plan lädt oder entlädt in anderen Slots, oder eine seiner Grenzen greift",
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
    """Why a battery does what it does in one slot (the money figures, per kWh: see the module docstring).

    Attributes:
        reason: one of ``REASONS``.
        kw: the planned power (+ charging), kW.
        soc_pct: the state of charge at the slot's start, percent of the capacity.
        price: the slot's import price (fees included).
        export: the slot's export price.
        value: what one more kWh kept in store after the slot is worth later.
        need: what a stored kWh saves later.
        cost: what a kWh put in store from the grid costs.
        earn: what a kWh taken from store saves.
        end: what a kWh left in store at the end is worth.

    """

    reason: str
    kw: float
    soc_pct: float
    price: float
    export: float
    value: float
    need: float
    cost: float
    earn: float
    end: float

    def as_dict(self) -> dict[str, float | str]:
        """JSON-safe form (floats rounded: kW to W, percent to 0.1, money to 1e-6)."""
        money = {key: round(getattr(self, key), 6) + 0.0 for key in _MONEY}
        return {"reason": self.reason, "kw": round(self.kw, 3) + 0.0, "soc_pct": round(self.soc_pct, 1) + 0.0, **money}


_MONEY: Final = ("price", "export", "value", "need", "cost", "earn", "end")


def shown(amount: float) -> float:
    """Return ``amount`` (money per kWh) as a sentence shows it: rounded to ``MONEY_DIGITS`` decimals."""
    return float(f"{amount:.{MONEY_DIGITS}f}")


@dataclass(frozen=True)
class _Slots:
    """The plan's per-slot figures a battery's reasons are read from (n slots)."""

    kw: FloatArray  # the battery, + charging
    after: FloatArray  # SoC after each slot, kWh (NaN: not known)
    price: FloatArray
    export: FloatArray
    more: FloatArray  # what one more kW drawn from the grid side costs per kWh: q exporting, p below the fuse, else inf
    less: FloatArray  # what one kW less drawn saves per kWh: p importing, else q


def _kept_value(battery: HomeBattery, slots: _Slots, end: float) -> FloatArray:
    """``value`` per slot: what one more kWh in store after the slot is worth later (see the module docstring)."""
    eta_c, eta_d, wear = battery.charge_efficiency, battery.discharge_efficiency, battery.wear_cost
    ceiling = battery.capacity_kwh * (battery.soc_max_pct - SOC_MARGIN_PCT) / 100
    out, best = np.empty(slots.kw.size), end
    for t in range(slots.kw.size - 1, -1, -1):
        out[t] = best
        options = [best] if not slots.after[t] >= ceiling else []  # kept through slot t (unknown SoC: kept)
        if slots.kw[t] > EPS_KW:  # charge less
            options.append((float(slots.less[t]) + wear) / eta_c)
        if -slots.kw[t] < battery.discharge_kw - EPS_KW:  # discharge more
            options.append(eta_d * (float(slots.less[t]) - wear))
        best = max(options, default=-math.inf)
    return np.where(np.isfinite(out), out, end)


def _needed_value(battery: HomeBattery, slots: _Slots, end: float) -> FloatArray:
    """``need`` per slot: what a stored kWh after the slot saves later (see the module docstring)."""
    eta_d, wear = battery.discharge_efficiency, battery.wear_cost
    floor = battery.capacity_kwh * (max(battery.soc_min_pct, battery.reserve_pct) + SOC_MARGIN_PCT) / 100
    out, least = np.empty(slots.kw.size), end
    for t in range(slots.kw.size - 1, -1, -1):
        out[t] = least
        options = [least] if not slots.after[t] <= floor else []  # one kWh less through slot t
        if slots.kw[t] < -EPS_KW:  # discharge less: draw more from the grid side
            options.append(eta_d * (float(slots.more[t]) - wear))
        least = min(options, default=math.inf)
    return np.where(np.isfinite(out), out, end)


def battery_reasons(
    battery: HomeBattery,
    battery_kw: FloatArray,
    soc_kwh: FloatArray,
    *,
    import_price: FloatArray,
    surplus_kw: FloatArray,
    import_kw: FloatArray,
    fuse_kw: Limit,
    export_price: float | FloatArray = 0.0,
    export_kw: FloatArray | None = None,
    end_value: float | None = None,
) -> list[SlotReason]:
    """Return per slot why ``battery`` does what the plan gives it (see the module docstring).

    ``battery_kw``, ``import_price`` (per kWh, fees included), ``surplus_kw`` (PV after curtailment minus house,
    loads and heat pumps), ``import_kw`` and ``export_kw`` (default zeros) are (n,); ``soc_kwh`` is (n,) or (n + 1,)
    at the slots' starts; ``fuse_kw`` is a number or (n,) one per slot, kW; ``export_price`` a number or (n,) per
    kWh; ``end_value`` the plan's value of a kWh left in store (default: the median import price times the discharge
    efficiency, as :func:`~.home.plan_home`). The efficiencies, power limits and wear cost are the battery's. Raises
    ValueError when the lengths disagree or ``import_price`` is empty.
    """
    n = battery_kw.size
    exported = np.zeros(n) if export_kw is None else np.asarray(export_kw, dtype=float)
    arrays = (import_price, surplus_kw, import_kw, exported, np.broadcast_to(export_price, (n,)))
    if n == 0 or any(np.size(a) != n for a in arrays) or soc_kwh.size not in (n, n + 1):
        raise ValueError(f"battery_reasons: arrays of {n} slots expected (soc_kwh {n} or {n + 1})")
    price, export = np.asarray(import_price, dtype=float), np.broadcast_to(np.asarray(export_price, float), (n,))
    end = float(np.median(price)) * battery.discharge_efficiency if end_value is None else float(end_value)
    importing = import_kw > EPS_KW
    below_fuse = import_kw < slot_limits(fuse_kw, n) - TOL_KW
    slots = _Slots(
        kw=battery_kw,
        after=np.append(soc_kwh[1:], np.nan) if soc_kwh.size == n else soc_kwh[1:],
        price=price,
        export=export,
        more=np.where(exported > EPS_KW, export, np.where(below_fuse, price, math.inf)),
        less=np.where(importing, price, export),
    )
    figures = {"value": _kept_value(battery, slots, end), "need": _needed_value(battery, slots, end)}
    figures["cost"] = (price + battery.wear_cost) / battery.charge_efficiency
    exporting = exported > EPS_KW
    into_grid = np.where((battery_kw < -EPS_KW) & exporting, export, price)  # a discharge's last kW went there
    figures["earn"] = battery.discharge_efficiency * (into_grid - battery.wear_cost)
    at_fuse = (battery_kw < -EPS_KW) & ~below_fuse
    fuse_later = np.append(np.cumsum(at_fuse[::-1])[::-1][1:], 0) > 0
    out = []
    for t in range(n):
        kw, pct = float(battery_kw[t]), float(soc_kwh[t]) / battery.capacity_kwh * 100
        money = {key: float(array[t]) for key, array in figures.items()}
        reason = _reason(
            battery,
            kw,
            pct,
            money,
            covered=bool(surplus_kw[t] >= kw - EPS_KW),
            importing=bool(importing[t]),
            exporting=bool(exporting[t]),
            at_fuse=bool(at_fuse[t]),
            fuse_later=bool(fuse_later[t]),
            below_fuse=bool(below_fuse[t]),
        )
        out.append(
            SlotReason(
                reason=reason, kw=kw, soc_pct=pct, price=float(price[t]), export=float(export[t]), end=end, **money
            )
        )
    return out


def _reason(
    battery: HomeBattery,
    kw: float,
    pct: float,
    money: dict[str, float],
    *,
    covered: bool,
    importing: bool,
    exporting: bool,
    at_fuse: bool,
    fuse_later: bool,
    below_fuse: bool,
) -> str:
    """Return one slot's reason code from its figures as shown (see the module docstring)."""
    cost, earn, value, need = (shown(money[key]) for key in ("cost", "earn", "value", "need"))
    if kw > EPS_KW:
        if covered:
            return "pv"
        return "cheap" if cost < need else "fuse_ahead" if fuse_later else "loss"
    if kw < -EPS_KW:
        if at_fuse:
            return "fuse"
        if earn > value:
            return "export" if exporting else "dear"
        return "spend"
    if pct <= max(battery.soc_min_pct, battery.reserve_pct) + SOC_MARGIN_PCT:
        return "floor"
    if pct >= battery.soc_max_pct - SOC_MARGIN_PCT:
        return "full"
    priced = importing and not exporting and below_fuse  # charging more or discharging more both meet p
    return "spread" if priced and cost >= value and earn <= need else "elsewhere"


def plan_reasons(
    plan: HomePlan,
    battery: HomeBattery,
    import_price: FloatArray,
    fuse_kw: Limit,
    export_price: float | FloatArray = 0.0,
) -> list[SlotReason]:
    """Return :func:`battery_reasons` for a battery of ``plan`` (its ``name`` is the plan's key).

    ``import_price`` (fees included, as the plan priced them) and ``export_price`` (a number or an array) hold at
    least the plan's n slots; ``fuse_kw`` is a number or (n,) per slot, kW (the plan's own is ``plan.fuse_kw``). The
    PV surplus is the PV after curtailment less the base load, the appliances and the heat pumps. Raises KeyError
    when the plan has no such battery.
    """
    n = plan.import_kw.size
    loads = sum((*plan.load_kw.values(), *plan.heat_kw.values()), np.zeros(n))
    return battery_reasons(
        battery,
        plan.battery_kw[battery.name],
        plan.soc_kwh[battery.name],
        import_price=np.asarray(import_price[:n], dtype=float),
        surplus_kw=plan.pv_kw - plan.curtail_kw - plan.base_load_kw - loads,
        import_kw=plan.import_kw,
        fuse_kw=fuse_kw,
        export_price=float(export_price) if np.ndim(export_price) == 0 else np.asarray(export_price, dtype=float)[:n],
        export_kw=plan.export_kw,
    )


def reason_text(reason: SlotReason, *, currency: str, fuse_kw: float, language: str = "en") -> str:
    """Return one slot's reason as a sentence in ``language`` (en or de; anything else: en); ``fuse_kw``: the slot's."""
    texts = TEXTS.get(language, TEXTS["en"])
    money = {key: f"{getattr(reason, key):.{MONEY_DIGITS}f} {currency}/kWh" for key in _MONEY}
    return texts[reason.reason].format(kw=f"{reason.kw:.2f}", fuse=f"{fuse_kw:g}", pct=f"{reason.soc_pct:.0f}", **money)
