"""A replan's warm start: the previous plan of the same home, carried onto the new horizon's binaries.

A home is re-planned every slot (model predictive control), and most of the new plan is the previous one moved on by
a slot. :func:`carried` reads the previous plan's decisions at the new slots' times: each run's start, each energy
load's and heat pump's on/off per slot. :func:`warm_start` completes them with a plan in hand (the dive's) for the
binaries the previous plan does not decide, fixes every binary and solves the LP: the result is a whole plan of the
new model, or None when the previous decisions no longer fit (new prices, a new state, a changed window).
"""

from __future__ import annotations

import numpy as np

from ..prices.curve import FloatArray
from .home_build import Columns
from .home_inputs import Inputs
from .home_model import TOL_KW, HomePlan
from .milp import MilpModel, whole
from .windows import IntArray


def carried(inputs: Inputs, cols: Columns, size: int, previous: HomePlan) -> FloatArray:
    """Return (size,) values of the binaries ``previous`` decides at the new slots' times, NaN elsewhere.

    Decided: a run's start binaries when its planned start is one of the run's admissible starts (a run the
    previous plan did not place, or placed outside them, stays NaN); per slot the previous plan covers, an energy
    load's on/off (kW above its least power less ``TOL_KW``) and a heat pump's on/off (kW above ``TOL_KW``).
    Plans at another resolution decide nothing.
    """
    out = np.full(size, np.nan)
    if previous.resolution != inputs.resolution:
        return out
    shift = int(round((inputs.start - previous.start) / inputs.resolution))
    for load, columns in zip(inputs.loads, cols.loads, strict=True):
        name = load.spec.name
        if load.slots:
            start = previous.starts.get(name)
            if start is not None:
                at = int(round((start - inputs.start) / inputs.resolution))
                if at in load.keys:
                    out[columns] = (load.keys == at).astype(np.float64)
        elif name in cols.on and name in previous.load_kw:
            _per_slot(out, cols.on[name], load.keys + shift, previous.load_kw[name], load.spec.min_power_kw - TOL_KW)
    for pump, heat in zip(inputs.heat_pumps, cols.heat, strict=True):
        if heat.on is not None and pump.name in previous.heat_kw:
            _per_slot(out, heat.on, np.arange(inputs.n) + shift, previous.heat_kw[pump.name], TOL_KW)
    return out


def _per_slot(out: FloatArray, columns: IntArray, at: IntArray, kw: FloatArray, above: float) -> None:
    """Set ``out[columns]`` to 1.0 where ``kw[at]`` exceeds ``above``, 0.0 where not, for ``at`` inside ``kw``."""
    inside = (at >= 0) & (at < kw.size)
    out[columns[inside]] = (kw[at[inside]] > above).astype(np.float64)


def warm_start(
    model: MilpModel, objective: FloatArray, decided: FloatArray, fill: FloatArray | None
) -> FloatArray | None:
    """Return the least-``objective`` plan with the binaries at ``decided`` (else ``fill``), or None.

    ``decided`` is :func:`carried`'s answer; ``fill`` a whole plan of the same model (None: the undecided binaries
    are left to the LP, and a fractional answer there is None). The binaries are fixed (a value outside the
    model's bounds, such as a heat pump off where it must still run, is None) and the LP is solved; None when it is
    infeasible.
    """
    integer = model.integer_columns()
    values = decided[integer]
    if fill is not None:
        values = np.where(np.isnan(values), np.round(fill[integer]), values)
    known = ~np.isnan(values)
    at, values = integer[known], values[known]
    upper = model.upper_bounds()
    if np.any(values > upper[at]) or np.any(values < np.concatenate(model.lower)[at]):
        return None
    lower, upper = model.pinned(at, values, upper)
    found = model.solve(objective, upper=upper, lower=lower, relax=True)
    if found.x is None or not whole(found.x, integer):
        return None
    return np.asarray(found.x, dtype=np.float64)
