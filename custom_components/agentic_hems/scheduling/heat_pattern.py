"""A heat pump's run pattern priced alone, by dynamic programming: a plan in hand for the whole-home MILP.

Given the cost of drawing each power level in each slot (``slot_cost``: the grid meeting the heat pump beside the
rest of the home, :func:`~.home_round.slot_cost`) and a value per °C of the store at the horizon's end, a heat
pump's least-cost schedule is a shortest path over the states (running or not, slots held so, store temperature)
under the comfort band and the minimum run and off times. The temperature is continuous: of the states whose
temperatures fall into one bucket (``BUCKETS`` across the band) only the cheapest is kept, with its exact
temperature. The schedule found thus keeps the store in the band exactly, and is least-cost to within the bucketing.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..prices.curve import FloatArray
from .home_model import HomeHeatPump

BUCKETS = 128  # temperature buckets across the (widened) comfort band
LEVELS = 3  # power levels tried while running, from on_floor_kw to max_kw (one for a fixed-speed heat pump)
_BAND_TOL = 1e-9  # °C: a store this far outside the band still counts as in it


def priced_power(
    pump: HomeHeatPump, hours: float, slot_cost: Callable[[FloatArray], FloatArray], end_value: float
) -> FloatArray | None:
    """Return (n,) electrical kW of the heat pump that costs least, or None when no schedule keeps the band.

    Args:
        pump: the heat pump (its initial state, band, minimum run and off times).
        hours: slot length, hours.
        slot_cost: maps (m,) kW to the (n, m) cost of drawing each in each slot (any currency unit, as long as
            ``end_value`` uses it).
        end_value: value per °C of the store's temperature at the horizon's end (same unit).

    The power while running is one of ``LEVELS`` levels from ``on_floor_kw`` to ``max_kw``.

    """
    levels = np.unique(np.linspace(pump.on_floor_kw, pump.max_kw, LEVELS))
    table = slot_cost(np.concatenate([[0.0], levels]))
    n = table.shape[0]
    a, b, k = pump.coefficients(hours, n)
    low, high = pump.band(hours, n)
    width = max(float(np.max(high) - min(float(np.min(low)), pump.initial_temp_c)) / BUCKETS, 1e-9)
    base = min(float(np.min(low)), pump.initial_temp_c)
    running = pump.initial_on_slots > 0
    if running:  # slots held so before the horizon, capped at the minimum time (off: 0 is "long enough")
        held = min(pump.initial_on_slots, pump.min_run_slots)
    else:
        held = min(pump.initial_off_slots or pump.min_off_slots, pump.min_off_slots)
    state = _State(np.array([pump.initial_temp_c]), np.zeros(1), np.array([running]), np.array([held]))
    steps: list[tuple[np.ndarray, FloatArray]] = []
    for t in range(n):
        parent, level, on, kept = _children(pump, state, levels.size)
        power = np.concatenate([[0.0], levels])[level]
        temp = a * state.temp[parent] + b[t] + k[t] * power
        inside = (temp >= low[t] - _BAND_TOL) & (temp <= high[t] + _BAND_TOL)
        if not inside.any():
            return None
        parent, level, on, kept, temp = parent[inside], level[inside], on[inside], kept[inside], temp[inside]
        power = power[inside]
        cost = state.cost[parent] + table[t, level]
        bucket = np.minimum(((temp - base) / width).astype(np.intp), BUCKETS)
        key = (on * (max(pump.min_run_slots, pump.min_off_slots) + 1) + kept) * (BUCKETS + 1) + bucket
        order = np.lexsort((cost, key))
        first = order[np.concatenate([[True], key[order][1:] != key[order][:-1]])]
        steps.append((parent[first], power[first]))
        state = _State(temp[first], cost[first], on[first], kept[first])
    at = int(np.argmin(state.cost - end_value * state.temp))
    out = np.empty(n)
    for t in range(n - 1, -1, -1):
        parents, powers = steps[t]
        out[t], at = powers[at], int(parents[at])
    return out


class _State:
    """The states kept after a slot: store temperature, cost so far, running or not, slots held so (capped)."""

    def __init__(self, temp: FloatArray, cost: FloatArray, on: np.ndarray, held: np.ndarray) -> None:
        self.temp, self.cost, self.on, self.held = temp, cost, on, held


def _children(pump: HomeHeatPump, state: _State, levels: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Return each state's next moves: (parent index, level (0 off), running, slots held so, capped at the minimum).

    A state stays as it is, or switches once it has held its minimum run (running) or off time (not running).
    """
    run, rest = pump.min_run_slots, pump.min_off_slots
    index = np.arange(state.on.size)
    free = state.held >= np.where(state.on, run, rest)
    off = ~state.on | free
    on = state.on | free
    parents = [index[off]] + [index[on]] * levels
    powers = [np.zeros(np.count_nonzero(off), dtype=np.intp)]
    powers += [np.full(np.count_nonzero(on), level) for level in range(1, levels + 1)]
    held_off = np.where(state.on[off], 1, np.minimum(state.held[off] + 1, rest))
    held_on = np.where(state.on[on], np.minimum(state.held[on] + 1, run), 1)
    running = [np.zeros(held_off.size, dtype=bool)] + [np.ones(held_on.size, dtype=bool)] * levels
    return (
        np.concatenate(parents),
        np.concatenate(powers),
        np.concatenate(running),
        np.concatenate([held_off] + [held_on] * levels),
    )
