"""What a home battery does in each slot of a whole-home plan, and why (pure: no Home Assistant).

:func:`battery_mode` names a slot's planned power (charge, discharge, idle): the mode a select-driven battery is set
to, the mode the automation triggers and conditions follow.

:func:`battery_reasons` says per slot why the battery does it, as a reason code with the figures behind it, and
:func:`reason_text` words it in English or German. The figures are the plan's own, per kWh in store, with the
battery's efficiencies eta_c, eta_d and its wear cost w per kWh of throughput, as the optimizer counts them. With p_t
the import price (fees included) and q_t the export price:

- ``cost``: what a kWh put in store from the grid costs, (p_t + w) / eta_c; (q_t + w) / eta_c in an idle slot
  where the home exports freely (no curtailment, under the export limit: charging would take exported PV);
- ``earn``: what a kWh taken from store saves, eta_d (p_t - w); eta_d (q_t - w) for a discharge while the home
  exports (the battery's last kW goes out to the grid) and in an idle slot where the home exports freely;
- ``end``: what a kWh left in store at the end is worth (the plan's terminal value: the median import price x eta_d);
- ``value``: what one more kWh kept in store after the slot would be worth later: the best of charging less,
  (m_u + w) / eta_c, or discharging more where the battery has power to spare, eta_d (m_u - w), in a later slot u it
  can reach without passing the highest SoC (m_u: p_u while the home imports, else 0 while PV is curtailed or the
  export is at its limit, else q_u), and ``end`` if it reaches the end; ``end`` when none can be reached;
- ``need``: what a stored kWh saves later: the least of the later discharges it can feed before the SoC would pass
  the floor, eta_d (M_u - w) (M_u: 0 while PV is curtailed, else q_u while the home exports, else p_u; at the fuse
  any price), and ``end`` if it reaches the end; ``end`` when that least is not finite. The highest SoC and the
  floor give way to a first SoC beyond them, as in the plan.

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
- ``spread_export``: the same at the export price, idle while the home exports freely;
- ``elsewhere``: idle otherwise: the plan charges or discharges in other slots, or a limit binds.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Final

import numpy as np
import numpy.typing as npt

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
    "pv", "cheap", "fuse_ahead", "loss", "fuse", "dear", "export", "spend", "floor", "full", "spread",
    "spread_export", "elsewhere",
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
        "spread_export": "idles: at the {export} export price charging from PV ({cost} per stored kWh) would not beat "
        "the {value} a kWh kept in store is worth later, nor discharging ({earn}) the {need} a stored kWh saves later",
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
        "spread_export": "ruht: beim Einspeisepreis von {export} schlägt Laden aus PV ({cost} je gespeicherte kWh) "
        "nicht die {value}, die eine behaltene kWh später wert ist, und Entladen ({earn}) nicht die {need}, die eine "
        "gespeicherte kWh später spart",
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
    first: float  # SoC at the start, kWh: the plan's floor and ceiling give way to it (HomeBattery.floor_kwh)
    price: FloatArray
    export: FloatArray
    more: FloatArray  # one more kW drawn costs per kWh: 0 curtailing, q exporting, p below the fuse, else inf
    less: FloatArray  # one kW less drawn saves per kWh: p importing, 0 curtailing or at the export limit, else q
    flags: dict[str, npt.NDArray[np.bool_]]  # covered, importing, exporting, below_fuse, at_fuse, at_export, ...


def _slots(
    battery_kw: FloatArray,
    soc_kwh: FloatArray,
    grid: dict[str, FloatArray],
    fuse_kw: Limit,
) -> _Slots:
    """Return the slots' figures from the plan's arrays.

    ``grid``: price, export (prices), surplus, import, export_kw, curtail, export_limit (kW).
    """
    n = battery_kw.size
    price, export = grid["price"], grid["export"]
    importing, exporting, curtailing = (grid[key] > EPS_KW for key in ("import", "export_kw", "curtail"))
    at_limit = grid["export_kw"] >= grid["export_limit"] - TOL_KW
    below_fuse = grid["import"] < slot_limits(fuse_kw, n) - TOL_KW
    at_fuse = (battery_kw < -EPS_KW) & ~below_fuse
    flags = {
        "covered": grid["surplus"] >= battery_kw - EPS_KW,
        "importing": importing,
        "exporting": exporting,
        "below_fuse": below_fuse,
        "at_fuse": at_fuse,
        "at_export": (np.abs(battery_kw) <= EPS_KW) & exporting & ~curtailing & ~at_limit,
        "fuse_later": np.append(np.cumsum(at_fuse[::-1])[::-1][1:], 0) > 0,
    }
    return _Slots(
        kw=battery_kw,
        after=np.append(soc_kwh[1:], np.nan) if soc_kwh.size == n else soc_kwh[1:],
        first=float(soc_kwh[0]),
        price=price,
        export=export,
        more=np.where(curtailing, 0.0, np.where(exporting, export, np.where(below_fuse, price, math.inf))),
        less=np.where(importing, price, np.where(curtailing | at_limit, 0.0, export)),
        flags=flags,
    )


def _margin_kwh(battery: HomeBattery) -> float:
    """Return ``SOC_MARGIN_PCT`` of the capacity, kWh: within it of a limit, the SoC is at the limit."""
    return battery.capacity_kwh * SOC_MARGIN_PCT / 100


def _kept_value(battery: HomeBattery, slots: _Slots, end: float) -> FloatArray:
    """``value`` per slot: what one more kWh in store after the slot is worth later (see the module docstring)."""
    eta_c, eta_d, wear = battery.charge_efficiency, battery.discharge_efficiency, battery.wear_cost
    ceiling = max(battery.capacity_kwh * battery.soc_max_pct / 100, slots.first) - _margin_kwh(battery)
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
    floor = min(battery.capacity_kwh * max(battery.soc_min_pct, battery.reserve_pct) / 100, slots.first)
    floor += _margin_kwh(battery)
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
    curtail_kw: FloatArray | None = None,
    export_limit_kw: float = math.inf,
    end_value: float | None = None,
) -> list[SlotReason]:
    """Return per slot why ``battery`` does what the plan gives it (see the module docstring).

    ``battery_kw``, ``surplus_kw`` (PV after curtailment minus house, loads and heat pumps), ``import_kw``,
    ``export_kw`` and ``curtail_kw`` (default zeros) are (n,), kW; ``import_price`` (fees included) is (n,) and
    ``export_price`` a number or (n,), per kWh; ``soc_kwh`` is (n,) or (n + 1,), kWh at the slots' starts;
    ``fuse_kw`` is a number or (n,) per slot and ``export_limit_kw`` a number (math.inf: none), kW; ``end_value`` is
    the plan's value of a kWh left in store (default: the median import price times the discharge efficiency, as
    :func:`~.home.plan_home`). The efficiencies, power limits and wear cost are the battery's. Raises ValueError when
    the lengths disagree or ``import_price`` is empty.
    """
    n = battery_kw.size
    exported, curtailed = (np.zeros(n) if a is None else np.asarray(a, dtype=float) for a in (export_kw, curtail_kw))
    arrays = (import_price, surplus_kw, import_kw, exported, curtailed, np.broadcast_to(export_price, (n,)))
    if n == 0 or any(np.size(a) != n for a in arrays) or soc_kwh.size not in (n, n + 1):
        raise ValueError(f"battery_reasons: arrays of {n} slots expected (soc_kwh {n} or {n + 1})")
    price, export = np.asarray(import_price, dtype=float), np.broadcast_to(np.asarray(export_price, float), (n,))
    grid = {"price": price, "export": export, "surplus": surplus_kw, "import": import_kw, "export_kw": exported}
    grid |= {"curtail": curtailed, "export_limit": np.full(n, export_limit_kw)}
    slots = _slots(battery_kw, soc_kwh, grid, fuse_kw)
    end = float(np.median(price)) * battery.discharge_efficiency if end_value is None else float(end_value)
    at_export = slots.flags["at_export"]
    into_grid = np.where(((battery_kw < -EPS_KW) & slots.flags["exporting"]) | at_export, export, price)
    figures = {
        "value": _kept_value(battery, slots, end),
        "need": _needed_value(battery, slots, end),
        "cost": (np.where(at_export, export, price) + battery.wear_cost) / battery.charge_efficiency,
        "earn": battery.discharge_efficiency * (into_grid - battery.wear_cost),
    }
    out = []
    for t in range(n):
        kw, pct = float(battery_kw[t]), float(soc_kwh[t]) / battery.capacity_kwh * 100
        money = {key: float(array[t]) for key, array in figures.items()}
        flags = {key: bool(array[t]) for key, array in slots.flags.items()}
        out.append(
            SlotReason(
                reason=_reason(battery, kw, pct, money, flags),
                kw=kw,
                soc_pct=pct,
                price=float(price[t]),
                export=float(export[t]),
                end=end,
                **money,
            )
        )
    return out


def _reason(battery: HomeBattery, kw: float, pct: float, money: dict[str, float], flags: dict[str, bool]) -> str:
    """Return one slot's reason code from its figures as shown and its flags (see the module docstring)."""
    cost, earn, value, need = (shown(money[key]) for key in ("cost", "earn", "value", "need"))
    if kw > EPS_KW:
        if flags["covered"]:
            return "pv"
        return "cheap" if cost < need else "fuse_ahead" if flags["fuse_later"] else "loss"
    if kw < -EPS_KW:
        if flags["at_fuse"]:
            return "fuse"
        if earn > value:
            return "export" if flags["exporting"] else "dear"
        return "spend"
    if pct <= max(battery.soc_min_pct, battery.reserve_pct) + SOC_MARGIN_PCT:
        return "floor"
    if pct >= battery.soc_max_pct - SOC_MARGIN_PCT:
        return "full"
    if not (cost >= value and earn <= need):
        return "elsewhere"
    if flags["at_export"]:
        return "spread_export"
    priced = flags["importing"] and not flags["exporting"] and flags["below_fuse"]  # more or less both meet p
    return "spread" if priced else "elsewhere"


def plan_reasons(
    plan: HomePlan,
    battery: HomeBattery,
    import_price: FloatArray,
    fuse_kw: Limit,
    *,
    export_price: float | FloatArray = 0.0,
    export_limit_kw: float = math.inf,
) -> list[SlotReason]:
    """Return :func:`battery_reasons` for a battery of ``plan`` (its ``name`` is the plan's key).

    ``import_price`` (fees included, as the plan priced them) and ``export_price`` (a number or an array) hold at
    least the plan's n slots; ``fuse_kw`` is a number or (n,) per slot, kW (the plan's own is ``plan.fuse_kw``), and
    ``export_limit_kw`` the plan's export limit (math.inf: none). The
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
        curtail_kw=plan.curtail_kw,
        export_limit_kw=export_limit_kw,
    )


def reason_text(reason: SlotReason, *, currency: str, fuse_kw: float, language: str = "en") -> str:
    """Return one slot's reason as a sentence in ``language`` (en or de; anything else: en); ``fuse_kw``: the slot's.

    Money shows ``MONEY_DIGITS`` decimals (as :func:`shown`, never "-0.000"), the SoC whole percent; German numbers
    have a decimal comma.
    """
    texts = TEXTS.get(language, TEXTS["en"])
    money = {
        key: f"{decimal(f'{shown(getattr(reason, key)) + 0.0:.{MONEY_DIGITS}f}', language)} {currency}/kWh"
        for key in _MONEY
    }
    pct = round(reason.soc_pct)  # an int: never "-0" for a SoC a hair below zero
    kw, fuse = decimal(f"{reason.kw:.2f}", language), decimal(f"{fuse_kw:g}", language)
    return texts[reason.reason].format(kw=kw, fuse=fuse, pct=pct, **money)


def decimal(number: str, language: str) -> str:
    """Return a formatted ``number`` with the decimal mark of ``language``: a comma in German ("0,095"), else a point."""
    return number.replace(".", ",") if language == "de" else number
