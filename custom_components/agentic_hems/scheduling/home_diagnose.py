"""Why a home has no plan: the limits a re-solve with slacks on every relaxable limit has to pass."""

from __future__ import annotations

import numpy as np

from ..prices.curve import FloatArray
from .home_build import Columns, build
from .home_inputs import Inputs
from .home_model import PHASES, TOL_KW, HomePlanError, Infeasibility, PhaseOver, slot_limits


def diagnose(inputs: Inputs) -> HomePlanError:
    """Re-solve with slacks on every relaxable limit; name those the slacks use.

    The limits: fuse, export limit, energy targets, reserves, comfort bands and phase limits (a phase's conflict
    names the phase and its devices, :func:`phase_over`). The LP relaxation is tried first; when it needs no slack
    (the conflict lies in the runs or the heat pumps' on/off and minimum times), the MILP with slacks is solved.
    """
    model, cols = build(inputs, relax=True)
    objective = np.zeros(model.size)
    for slacks in cols.slack.values():
        for slack in slacks:
            objective[slack] = 1.0
    found = model.solve(objective, relax=True)
    used = slacks_used(cols, found.x)
    if found.x is not None and not used:
        found = model.solve(objective)
        used = slacks_used(cols, found.x)
    if found.x is None:
        return HomePlanError((), f"no plan exists and HiGHS could not say why: {found.message}")
    short = tuple(
        load.spec.name
        for load, slack in zip(
            (ld for ld in inputs.loads if not ld.slots), cols.slack[Infeasibility.ENERGY], strict=True
        )
        if float(found.x[slack][0]) > TOL_KW
    )
    names = ", ".join(str(kind) for kind in used) or "unknown"
    over = phase_over(inputs, cols, found.x) if Infeasibility.PHASE in used else None
    return HomePlanError(used, f"no plan satisfies every constraint; conflicting: {names}", short, over)


def phase_over(inputs: Inputs, cols: Columns, x: FloatArray) -> PhaseOver:
    """Return the phase and slot where ``x`` (the plan with slacks) passes a phase limit most, and what is on it.

    The devices are those whose kW on that phase (their share of their planned or fixed power) pushes it the way it
    passes the limit: drawing above it, or feeding in below minus it.
    """
    phases, n = inputs.tariff.phases, inputs.n
    assert phases is not None
    slacks = cols.slack[Infeasibility.PHASE]  # per phase: up, down
    worst = int(np.argmax([float(np.max(x[s])) for s in slacks]))
    t, phase = int(np.argmax(x[slacks[worst]])), PHASES[worst // 2]
    drawn = {name: kw.copy() for name, kw in inputs.constant().items()}
    for name, entries in cols.devices.items():
        power = drawn.setdefault(name, np.zeros(n))
        for rows, columns, vals in entries:
            r, c, v = np.broadcast_arrays(rows, columns, vals)
            np.add.at(power, r, -v * x[c])
    on = {name: phases.shares(name)[phase] * float(kw[t]) for name, kw in drawn.items()}
    sign = 1.0 if worst % 2 == 0 else -1.0
    pushing = sorted(((name, sign * kw) for name, kw in on.items() if sign * kw > TOL_KW), key=lambda d: -d[1])
    start, limit = inputs.start + t * inputs.resolution, float(slot_limits(phases.limit(phase), n)[t])
    return PhaseOver(phase=phase, start=start, limit_kw=limit, power_kw=sum(on.values()), devices=tuple(pushing))


def slacks_used(cols: Columns, x: FloatArray | None) -> tuple[Infeasibility, ...]:
    """Return the kinds whose slacks ``x`` uses (none when ``x`` is None)."""
    if x is None:
        return ()
    return tuple(kind for kind, slacks in cols.slack.items() if any(float(np.max(x[s])) > TOL_KW for s in slacks))
