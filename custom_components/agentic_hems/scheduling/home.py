"""The whole home in one MILP: appliances, EV, batteries, PV, base load and the grid, solved by HiGHS.

Per slot t of the horizon (h hours), with import price p_t and export price q_t:

    min  sum_t h (p_t imp_t - q_t exp_t) + sum_b w_b h sum_t (c_bt + d_bt) - sum_b v_b s_b,end
    s.t. imp_t - exp_t = base_t - (pv_t - cur_t) + sum_b (c_bt - d_bt) + sum_a P_a run_at(a, t) + sum_e x_et
         s_bt = s_b,t-1 + eta_c h c_bt - h d_bt / eta_d,   floor_b <= s_bt <= ceiling_b
         sum_j y_aj = 1 (a start binary per admissible start j),   sum_t h x_et = E_e,  0 <= x_et <= P_e
         0 <= imp_t <= fuse,  0 <= exp_t <= export limit,  0 <= cur_t <= pv_t (0 when curtailment is off)
         0 <= c_bt <= Pc_b,  0 <= d_bt <= Pd_b

An energy load with a least power m_e > 0 (an EV charger's minimum current) is semi-continuous: an on/off binary
o_et per usable slot with m_e o_et <= x_et <= P_e o_et, and E_e <= sum_t h x_et <= E_e + h m_e (one slot at m_e
more, so any E_e fits; at prices >= 0 the least cost delivers exactly E_e wherever that is possible).

Heat pumps (:mod:`.home_heat`) add their power to the balance's right-hand side, their store temperatures, comfort
bands, on/off binaries and minimum run / off times, and the value of their heat at the end to the objective. Grid
fees (:mod:`.home_grid`) are part of p_t; the capacity charge adds each billing month's peak above its floor, and
phase limits bound each phase's net power. base_t holds the house's base load and the fixed loads (running, pinned
appliances); on the phases each fixed load counts on its own phase, the base load on that of "base" (both spread
over the three when not named).

Cost ties (1e-9 of the cost scale) go to the earliest starts (:func:`~.home_solve._earliest`).

Horizon: the plan covers the curve's slots from its first up to (not including) the first slot whose import or
export price is unknown (NaN); a NaN is never read as zero and no slot after it is used, even when later prices
are known, because the batteries' state of charge cannot be carried across an unpriced slot.

Simultaneous charge and discharge (or import and export) only pays where it dissipates energy at a profit. A binary
forbids it in the slots where it could: charge/discharge where an import or export price is negative or where PV
cannot be curtailed, import/export where q_t > p_t. Elsewhere no binary is needed: a solution that does both can be
changed into one that does not and costs no more (see :func:`~.home_result._unmix`), and the plan is changed so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import math

import numpy.typing as npt

from ..prices.curve import PriceCurve
from .home_inputs import Extras, prepare
from .home_model import GridFees, HomeBattery, HomeHeatPump, HomePlan, PhaseLimits
from .home_result import assemble
from .home_solve import PLAN_TIME_LIMIT_S, solve
from .plan import LoadSpec


def plan_home(
    curve: PriceCurve,
    loads: Sequence[LoadSpec] = (),
    *,
    batteries: Sequence[HomeBattery] = (),
    pv_kw: float | npt.ArrayLike = 0.0,
    base_load_kw: float | npt.ArrayLike = 0.0,
    export_price: float | npt.ArrayLike = 0.0,
    fuse_kw: float | npt.ArrayLike = math.inf,
    export_limit_kw: float = math.inf,
    curtailment: bool = True,
    terminal_price: float | None = None,
    heat_pumps: Sequence[HomeHeatPump] = (),
    fees: GridFees | None = None,
    phases: PhaseLimits | None = None,
    fixed_kw: Mapping[str, float | npt.ArrayLike] | None = None,
    time_limit_s: float = PLAN_TIME_LIMIT_S,
    previous: HomePlan | None = None,
) -> HomePlan:
    """Plan every flexible load, battery and grid flow of the home at least cost (model in the module docstring).

    Args:
        curve: import prices per kWh (NaN = unknown); the horizon: its leading slots with known import and export prices.
        loads: appliances (``contiguous=True``: one run of ``duration_min`` at ``power_kw``) and energy loads
            (``contiguous=False``: ``energy_kwh`` at up to ``power_kw``, the EV); windows: :func:`~.joint.plan_joint`.
        batteries: the stationary batteries.
        pv_kw: PV forecast in kW, a number or an array (len(curve),), finite and >= 0 over the horizon.
        base_load_kw: house base load forecast in kW, the same way.
        export_price: per kWh exported, a number or an array (len(curve),) (a spot formula or a fixed feed-in).
        fuse_kw: most import per slot, kW, > 0 (math.inf for none): a number, or an array (len(curve),) per slot.
        export_limit_kw: most export per slot, >= 0 (0 for zero-export, math.inf for none).
        curtailment: True when PV may be curtailed (by any amount up to its forecast).
        terminal_price: value per kWh left in a battery at the end; default median import price x discharge efficiency.
        heat_pumps: heat pumps with their stores (a house, a hot-water tank); model and end value in :mod:`.home_heat`.
        fees: the network fee per kWh (part of the import price) and the capacity charge (:mod:`.home_grid`).
        phases: per-phase limits and the devices' phases (loads, fixed loads, batteries, heat pumps, "pv", "base").
        fixed_kw: kW by name of loads it cannot move (running, pinned appliances), as ``pv_kw``, on their own phase.
        time_limit_s: wall-clock seconds for the MILP solves; past it, each stops once it has a plan (``time_limited``).
        previous: the home's last plan, as a replan's warm start (:mod:`.home_warm`): same cost, less time.

    Returns:
        A :class:`HomePlan`; a load that does not fit before the first unknown price is left out (``unplanned``).

    Raises:
        HomePlanError: no plan exists; ``constraints`` names the conflicting :class:`~.home_model.Infeasibility`.
        ValueError, TypeError: malformed inputs (shapes, non-finite forecasts, non-positive limits, bad loads).

    """
    inputs, unplanned, notes = prepare(
        curve,
        loads,
        batteries=batteries,
        pv_kw=pv_kw,
        base_load_kw=base_load_kw,
        export_price=export_price,
        fuse_kw=fuse_kw,
        extras=Extras(tuple(heat_pumps), fees, phases, terminal_price, fixed_kw or {}, export_limit_kw, curtailment),
    )
    solution, note = solve(inputs, time_limit_s=time_limit_s, previous=previous)
    return assemble(curve, inputs, solution, unplanned, [*notes, note] if note else notes)
