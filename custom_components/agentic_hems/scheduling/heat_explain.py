"""Why a heat pump runs in each slot of a whole-home plan, from the plan's own numbers (pure: no Home Assistant).

:func:`heat_slot_reasons` gives per slot a :class:`HeatReason` (a code with the figures behind it) and
:func:`heat_reason_text` words it in English or German. With P_t the planned electrical kW, T_t+1 the store's
temperature at the slot's end, off_t the temperature it would end at had the heat pump been off in slot t, low_t the
comfort floor at the slot's end and p_t the import price (network fee included):

- ``off``: P_t <= 1e-6 kW;
- ``comfort_floor``: off_t < low_t: switching off would end the slot below the floor;
- ``min_run``: otherwise, slot t is the 2nd to ``min_run_slots``-th slot of its run (a run begun before the horizon
  counts its ``initial_on_slots``) and P_t is at its floor ``on_floor_kw``: the minimum run time keeps it on;
- ``preheat_before_peak``: otherwise, the slot ends above the floor and a later slot costs more (p_s > p_t for some
  s > t): heat stored now replaces heating in the dearer slot;
- ``cheap_slot``: otherwise: it runs in a slot no dearer than every later one, for heat needed later or valued at the
  horizon's end.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Final

import numpy as np
import numpy.typing as npt

from .home_explain import decimal
from .home_model import TOL_C, TOL_KW
from .windows import IntArray

HEAT_REASONS: Final = ("off", "comfort_floor", "min_run", "preheat_before_peak", "cheap_slot")
HEAT_TEXTS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "off": "off",
        "comfort_floor": "heats: off, it would end the slot at {off}, below the {low} comfort floor",
        "min_run": "stays on for its minimum run time",
        "preheat_before_peak": "pre-heats at {price}, before a dearer slot at {later}",
        "cheap_slot": "runs at {price}, no dearer than any later slot",
    },
    "de": {
        "off": "aus",
        "comfort_floor": "heizt: aus würde es den Slot mit {off} beenden, unter der Komfortgrenze von {low}",
        "min_run": "bleibt für seine Mindestlaufzeit an",
        "preheat_before_peak": "heizt vor zu {price}, vor einem teureren Slot zu {later}",
        "cheap_slot": "läuft zu {price}, nicht teurer als jeder spätere Slot",
    },
}


@dataclass(frozen=True, kw_only=True)
class HeatReason:
    """Why a heat pump does what it does in one slot.

    Attributes:
        reason: one of ``HEAT_REASONS``.
        kw: the planned electrical power, kW.
        temp_c: the store's temperature at the slot's end, °C.
        low_c: the comfort floor at the slot's end, °C.
        off_c: the temperature at the slot's end had the heat pump been off in it, °C.
        price: the slot's import price, per kWh.
        later_price: the highest import price of a later slot (-inf for the last slot), per kWh.

    """

    reason: str
    kw: float
    temp_c: float
    low_c: float
    off_c: float
    price: float
    later_price: float

    def as_dict(self) -> dict[str, float | str]:
        """JSON-safe form, rounded for people (kW to 1 W, °C to 0.01, prices to 1e-6)."""
        return {
            "reason": self.reason,
            "kw": round(self.kw, 3) + 0.0,
            "temp_c": round(self.temp_c, 2),
            "low_c": round(self.low_c, 2),
            "price": round(self.price, 6),
        }


@dataclass(frozen=True)
class HeatRun:
    """What a heat pump's minimum run time needs.

    ``min_run_slots``; its lowest running power ``on_floor_kw`` (kW); how many slots it had run before the horizon,
    ``initial_on_slots``.
    """

    min_run_slots: int
    on_floor_kw: float
    initial_on_slots: int


def heat_slot_reasons(
    power: npt.ArrayLike,
    temp: npt.ArrayLike,
    *,
    low: npt.ArrayLike,
    off: npt.ArrayLike,
    price: npt.ArrayLike,
    run: HeatRun,
) -> list[HeatReason]:
    """Return per slot why the heat pump runs as planned (see the module docstring).

    Args:
        power: (n,) planned electrical kW.
        temp: (n + 1,) store temperature at each slot boundary, °C.
        low: (n,) comfort floor at each slot's end, °C.
        off: (n,) temperature at each slot's end had the heat pump been off in it, °C.
        price: (n,) import price per kWh, fee included.
        run: the minimum run time's figures.

    Raises:
        ValueError: the arrays disagree in length.

    """
    p, t_c, lo, off_c, pr = (np.asarray(a, dtype=np.float64) for a in (power, temp, low, off, price))
    n = p.size
    if t_c.size != n + 1 or not lo.size == off_c.size == pr.size == n:
        raise ValueError(f"heat pump reasons need arrays of {n} slots (temperatures: {n + 1})")
    later = np.concatenate((np.maximum.accumulate(pr[::-1])[::-1][1:], [-math.inf]))
    lengths = _run_lengths(p > TOL_KW, run.initial_on_slots)
    out = []
    for i in range(n):
        if p[i] <= TOL_KW:
            code = "off"
        elif off_c[i] < lo[i] - TOL_C:
            code = "comfort_floor"
        elif 1 < lengths[i] <= run.min_run_slots and p[i] <= run.on_floor_kw + TOL_KW:
            code = "min_run"
        elif t_c[i + 1] > lo[i] + TOL_C and later[i] > pr[i]:
            code = "preheat_before_peak"
        else:
            code = "cheap_slot"
        out.append(
            HeatReason(
                reason=code,
                kw=float(p[i]),
                temp_c=float(t_c[i + 1]),
                low_c=float(lo[i]),
                off_c=float(off_c[i]),
                price=float(pr[i]),
                later_price=float(later[i]),
            )
        )
    return out


def heat_reason_text(reason: HeatReason, *, currency: str, language: str = "en") -> str:
    """Return one slot's reason as a sentence in ``language`` (en or de, with a decimal comma; anything else: en)."""
    texts = HEAT_TEXTS.get(language, HEAT_TEXTS["en"])
    return texts[reason.reason].format(
        low=f"{decimal(f'{reason.low_c:.2f}', language)} °C",
        off=f"{decimal(f'{reason.off_c:.2f}', language)} °C",
        price=f"{decimal(f'{reason.price:.3f}', language)} {currency}/kWh",
        later=f"{decimal(f'{reason.later_price:.3f}', language)} {currency}/kWh",
    )


def _run_lengths(running: npt.NDArray[np.bool_], initial: int) -> IntArray:
    """Return per slot how many slots the current run has lasted by the slot's end (0 when off)."""
    out = np.zeros(running.size, dtype=np.intp)
    length = initial
    for t, on in enumerate(running):
        length = length + 1 if on else 0
        out[t] = length
    return out
