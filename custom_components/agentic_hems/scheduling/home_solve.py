"""The whole-home MILP solved: least cost, then the earliest plan among the ties; the diagnosis when none exists."""

from __future__ import annotations

from dataclasses import dataclass
import math
import time

import numpy as np

from ..prices.curve import FloatArray
from .highs import OPTIMAL, Rows
from .home_build import Columns, build, cost_scale
from .home_diagnose import diagnose
from .home_heat import heat_tie
from .home_inputs import Inputs, Load
from .home_model import TOL_KW, HomePlan, HomePlanError
from .home_round import directed, exclusive, matched, on_columns, rounded_lp
from .home_warm import carried, warm_start
from .milp import MilpModel, whole
from .ties import TIE_REL
from .windows import IntArray

COST_SCALE = 1e4  # the objective is scaled to this size so HiGHS's absolute gap (1e-6) stays negligible
# Reduced-cost pruning keeps a start whose bound exceeds the threshold by less than this (scaled cost units, 1e-7 of
# the cost scale): far above HiGHS's dual tolerance (1e-7) summed over the columns.
PRUNE_MARGIN = 1e-3
# A plan is least-cost to within this (scaled cost units, 1e-6 of the cost scale: 0.014 cents over a home whose scale
# is 140 EUR): HiGHS's absolute gap and the margin under which the dive's plan is taken as the optimum. Closing the
# last part of a gap this size took HiGHS 7 s of CPU on the demo home and ended at the time bound.
PLAN_GAP = 1e-2
# Default bound of one plan's MILP solves together, seconds (wall clock). Past it a MILP stops once it holds a plan
# (one without a plan goes on to its first: ``milp.MilpModel``). Only the benchmark's fixed-speed heat-pump homes reach
# it here: about 1.05 s of CPU, from the leaf's priced plan in hand (``home_round.priced``), within 1.1 % of their
# plans at 10 s and cheaper than EMHASS's; the other homes finish in 0.03-0.25 s (benchmarks/README.md).
PLAN_TIME_LIMIT_S = 1.0
# The tie stage's MILP gets at most this long (wall clock); a least-cost plan is in hand, which stays if it stops.
# On the demo home it never finished (7-10 s) and found no placement in 0.25 s; the benchmark's ToU homes finish it in
# 30-110 ms, depending on the machine; 0.5 s made "days 2-3" stop just short of it.
TIE_LIMIT_S = 0.1
# With more binaries left free than this, the tie stage places the least-cost plan's own pattern and skips its MILP.
# Measured here: the benchmark's ToU homes leave 2-44 free and finish it in 30-100 ms; with 70-90 ("days 2-3", the
# demo home's first plans) it stopped at its cap, found a placement only sometimes, and never proved one; with
# 408-776 (the demo home with its heat pumps, 13 captured states) it never found one. Skipping makes those ties the
# same on every machine.
TIE_BINARIES = 64
# A plan in hand within this of the LP bound (scaled, 1e-5 of the cost scale: 0.14 cents on the demo home) caps the
# least-cost MILP at NEAR_LIMIT_S (wall clock): the demo home's dive once ended 0.0101 above the bound, just over
# PLAN_GAP, and HiGHS took 8 s of CPU to close the last 0.0001.
NEAR_GAP = 10 * PLAN_GAP
NEAR_LIMIT_S = 0.25
DIVE_TRIES = 4  # the dive tries a split run at up to this many starts the LP uses, and as many it leaves
LEX_LIMIT = 1e6  # largest tie-break weight: whole slots stay apart under milp.MIP_REL_GAP
EACH_STARTS = 16  # the tie stage's proof that a run starts earliest tries at most this many earlier starts one by one


@dataclass
class Solution:
    """Cleaned column values and the columns' layout."""

    x: FloatArray
    cols: Columns
    model: MilpModel


def solve(
    inputs: Inputs, *, time_limit_s: float = PLAN_TIME_LIMIT_S, previous: HomePlan | None = None
) -> tuple[Solution, str]:
    """Least cost, then the earliest plan among the ties, its MILP solves within ``time_limit_s`` seconds in all.

    The LP relaxation gives a lower bound L and reduced costs r: a plan that starts run a at j costs at least
    L + r_aj. A dive (:func:`_dive`) gives a plan and its cost U (with no run, the leaf alone rounds the on/off and
    direction binaries; a model without binaries is one LP). When U <= L + ``PLAN_GAP`` the dive's plan is
    taken as the optimum; otherwise starts with L + r_aj > U are fixed to 0 and HiGHS solves the MILP to an absolute
    gap of ``PLAN_GAP`` (scaled: 1e-6 of the cost scale, far below a cent on any home), for at most ``NEAR_LIMIT_S``
    when U <= L + ``NEAR_GAP`` (the plan is then least-cost to within 1e-5 of the cost scale). The tie stage
    (:func:`_earliest`) prunes again with its budget. When the time bound stops a HiGHS call, the best plan found so
    far is used (the MILP's incumbent, else the dive's plan) and the returned note says so
    (``Solution.model.limited``); a MILP with no plan in hand goes on past the bound to its first plan
    (:class:`~.milp.MilpModel`). ``previous`` (the last plan of the same home, a replan's warm start) gives a
    second plan in hand: its binaries carried onto this horizon (:mod:`.home_warm`); the cheaper of it and the
    dive's plan is used as the dive's is, so a replan whose previous plan is still optimal needs no MILP.

    Raises:
        HomePlanError: no plan exists (the conflicting limits named), or none was found within the time bound.

    """
    model, cols = build(inputs)
    model.deadline = time.monotonic() + time_limit_s
    scale = cost_scale(inputs)
    factor = COST_SCALE / scale
    cost = model.objective()
    runs: IntArray = np.concatenate(_run_columns(inputs, cols))
    relaxed = model.reduced_costs(cost * factor) if runs.size or model.integer_columns().size else None
    upper = model.upper_bounds()
    x: FloatArray | None = None
    dived: FloatArray | None = None
    bound = math.inf
    if relaxed is not None:
        dived, bound = _dive(inputs, model, cols, relaxed, cost * factor, defer=previous is not None)
    if previous is not None:
        dived, bound = _warmer(inputs, model, cols, objective=cost * factor, previous=previous, dived=(dived, bound))
    if relaxed is not None:
        upper = _pruned(upper, runs, relaxed, bound)
        if dived is not None and bound <= relaxed[0] + PLAN_GAP:
            x = _clean(model, dived, model.upper_bounds())
    if x is None:
        near = relaxed is not None and bound <= relaxed[0] + NEAR_GAP
        x = _least_cost(inputs, model, cost * factor, upper=upper, dived=dived, near=near)
    budget = float(cost @ x) + TIE_REL * scale
    if relaxed is not None:
        upper = _pruned(upper, runs, relaxed, budget * factor)
        upper[x > 0] = np.maximum(upper[x > 0], x[x > 0])  # the plan in hand stays feasible whatever the rounding
    lower_bound = -math.inf if relaxed is None else relaxed[0]
    x = _earliest(inputs, model, cols, x, budget=budget, scale=scale, upper=upper, lower_bound=lower_bound)
    note = ""
    if model.limited:
        note = f"time bound of {time_limit_s:g} s reached: the best plan found is used, not a proven optimum"
    return Solution(x, cols, model), note


def _warmer(
    inputs: Inputs,
    model: MilpModel,
    cols: Columns,
    *,
    objective: FloatArray,
    previous: HomePlan,
    dived: tuple[FloatArray | None, float],
) -> tuple[FloatArray | None, float]:
    """Return the cheaper of the dive's plan (``dived``: plan and scaled cost) and ``previous`` carried over."""
    decided = carried(inputs, cols, model.size, previous)
    if np.all(np.isnan(decided)):
        return dived
    warm = warm_start(model, objective, decided, dived[0])
    cost = math.inf if warm is None else float(objective @ warm)
    return (warm, cost) if cost < dived[1] else dived


def _least_cost(
    inputs: Inputs,
    model: MilpModel,
    objective: FloatArray,
    *,
    upper: FloatArray,
    dived: FloatArray | None,
    near: bool = False,
) -> FloatArray:
    """Return HiGHS's least-cost plan under ``upper``, or the plan in hand when HiGHS stopped without a cheaper one.

    The plan in hand (the dive's, or the previous plan carried over) is ``dived``; it is HiGHS's MIP start. Without
    it, the solve goes on past the time bound to its first plan (:class:`~.milp.MilpModel`): a spent bound must not
    leave the home without a plan that HiGHS could still find. ``near`` (``dived`` within ``NEAR_GAP`` of the LP
    bound) caps the solve at ``NEAR_LIMIT_S``; a stop there keeps the better plan and is not a time bound reached
    (a stop at the plan's own time bound still is).
    """
    capped = near and dived is not None
    found = model.solve(objective, upper=upper, start=dived, gap=PLAN_GAP, cap_s=NEAR_LIMIT_S if capped else None)
    if capped and found.status != OPTIMAL and model.deadline is not None and time.monotonic() >= model.deadline:
        model.limited = True  # the plan's own time bound stopped it, not the cap
    stopped = model.limited or (capped and found.status != OPTIMAL)
    if stopped and dived is not None and (found.x is None or objective @ found.x > objective @ dived):
        return _clean(model, dived, model.upper_bounds())
    if found.x is not None:
        return _clean(model, found.x, upper)
    if found.status == 2:
        raise diagnose(inputs)
    raise HomePlanError((), f"HiGHS found no plan: {found.message}")


def _dive(
    inputs: Inputs,
    model: MilpModel,
    cols: Columns,
    relaxed: tuple[float, FloatArray, FloatArray],
    objective: FloatArray,
    *,
    defer: bool = False,
) -> tuple[FloatArray | None, float]:
    """Return a plan and its scaled cost found by fixing the runs one by one (:func:`_fix_run`).

    ``relaxed`` is the LP relaxation (optimum, reduced costs, solution). The LP is solved again for a run it had
    split (fixing one it had whole leaves its answer optimal); with every run fixed, :func:`_leaf` turns the LP's
    answer into a plan (``defer``: see there). (None, inf) when no plan is found.
    """
    value, reduced, lp = relaxed
    upper = model.upper_bounds()
    for load, columns in zip(inputs.loads, cols.loads, strict=True):
        if load.slots:
            fixed = _fix_run(model, objective, upper, columns, (value, reduced, lp))
            if fixed is None:
                return None, math.inf
            upper, (value, reduced, lp) = fixed
    milp = any(load.slots for load in inputs.loads)  # without a run, the leaf's MILP would be the least-cost one
    x = _leaf(inputs, model, cols, objective, upper=upper, lp=lp, defer=defer, milp=milp)
    return (None, math.inf) if x is None else (x, float(objective @ x))


def _fix_run(
    model: MilpModel,
    objective: FloatArray,
    upper: FloatArray,
    columns: IntArray,
    relaxed: tuple[float, FloatArray, FloatArray],
) -> tuple[FloatArray, tuple[float, FloatArray, FloatArray]] | None:
    """Fix one run's start; return the new upper bounds and that LP (optimum, reduced costs, answer), None if none.

    ``relaxed`` is the LP so far (optimum, reduced costs, answer). A run the LP holds whole stays (the LP is
    unchanged). A run it splits is tried at the ``DIVE_TRIES`` starts it uses most and at the ``DIVE_TRIES`` starts
    nearest those that it leaves at 0 with a zero reduced cost (with a battery the LP is degenerate: many placements
    cost the same, and the one a plan needs is often unused), earliest first: the first whose LP does not rise above
    ``relaxed``'s optimum (to ``PRUNE_MARGIN``) is kept, else the one whose LP rose least. Earliest first leaves the
    tie stage a plan whose runs it can often prove earliest without a MILP.
    """
    value, reduced, lp = relaxed
    used = columns[np.argsort(-lp[columns], kind="stable")]
    used = used[lp[used] > 1e-9]
    if used.size and lp[used[0]] >= 1 - 1e-9:  # the LP holds the run whole: its answer stands
        return _started(upper, columns, used[0]), relaxed
    idle = columns[(lp[columns] <= 1e-9) & (reduced[columns] <= PRUNE_MARGIN) & (upper[columns] > 0)]
    near = np.min(np.abs(idle[:, None] - used[None, :]), axis=1) if used.size else np.zeros(idle.size)
    best: tuple[FloatArray, tuple[float, FloatArray, FloatArray]] | None = None
    for keep in np.sort(np.concatenate([used[:DIVE_TRIES], idle[np.argsort(near, kind="stable")][:DIVE_TRIES]])):
        trial = _started(upper, columns, keep)
        found = model.solve(objective, upper=trial, relax=True)
        if found.x is None or found.fun is None or found.lower_dual is None:
            continue
        if best is None or found.fun < best[1][0]:
            best = (trial, (found.fun, found.lower_dual, found.x))
        if found.fun <= value + PRUNE_MARGIN:
            break
    return best


def _started(upper: FloatArray, columns: IntArray, start: int) -> FloatArray:
    """Return ``upper`` with the run whose start binaries are ``columns`` allowed only its binary ``start``."""
    out = upper.copy()
    out[columns] = 0.0
    out[start] = 1.0
    return out


def _leaf(
    inputs: Inputs,
    model: MilpModel,
    cols: Columns,
    objective: FloatArray,
    *,
    upper: FloatArray,
    lp: FloatArray,
    defer: bool = False,
    milp: bool = True,
) -> FloatArray | None:
    """With every run fixed and ``lp`` that LP's answer, a plan: ``lp`` itself when it needs no binary.

    Otherwise the LP solved again with each slot that has a charge/discharge or import/export binary kept to the
    direction ``lp`` favours (:func:`~.home_round.directed`): a plan when the heat pumps' and energy loads' on/off
    binaries come out whole. Else the LP with those binaries rounded (:func:`~.home_round.rounded_lp`), kept when it
    costs at most ``PLAN_GAP`` more. Else the MILP with the runs fixed, started from that rounded plan when it is
    feasible; the rounded plan when that MILP ends without a plan (a spent time bound can stop it before it takes
    its start), None when there is neither. With ``defer`` (a replan: the previous plan carried over may reach the
    optimum in one LP) the rounded plan is returned instead of solving that MILP, and :func:`_least_cost` starts
    from the best plan in hand if neither reaches it. Without ``milp`` (no run was fixed: that MILP is
    :func:`_least_cost`'s own) the rounded plan, or None, is returned instead of solving it.
    """
    if exclusive(inputs, cols, lp) and whole(lp, model.integer_columns()):
        return lp
    found = model.solve(objective, upper=directed(inputs, cols, lp, upper), relax=True)
    on = on_columns(cols)
    rounded = None
    if found.x is not None and found.fun is not None and not whole(found.x, on):
        again = rounded_lp(inputs, model, cols, objective, upper=upper, x=np.asarray(found.x, dtype=np.float64))
        if again.x is not None and again.fun is not None and (defer or again.fun <= found.fun + PLAN_GAP):
            found = again
        elif again.x is not None:
            rounded = matched(cols, np.asarray(again.x, dtype=np.float64))
    if found.x is None or not whole(found.x, on):
        if not milp:
            return rounded
        found = model.solve(objective, upper=upper, gap=PLAN_GAP, start=rounded)
        if found.x is None:  # no plan, or the time bound cut it before it took its start
            return rounded
    return matched(cols, np.asarray(found.x, dtype=np.float64))


def _pruned(
    upper: FloatArray, runs: IntArray, relaxed: tuple[float, FloatArray, FloatArray], bound: float
) -> FloatArray:
    """``upper`` with the run starts whose Lagrangian bound exceeds ``bound`` (scaled) fixed to 0."""
    lower_bound, reduced, _ = relaxed
    out = upper.copy()
    out[runs[lower_bound + reduced[runs] > bound + PRUNE_MARGIN]] = 0.0
    return out


def _earliest(
    inputs: Inputs,
    model: MilpModel,
    cols: Columns,
    x: FloatArray,
    *,
    budget: float,
    scale: float,
    upper: FloatArray,
    lower_bound: float,
) -> FloatArray:
    """Among plans costing at most ``budget``, the earliest: runs first, then energy loads, each in caller's order.

    When :func:`_runs_earliest` proves that no such plan starts a run earlier than ``x`` does, the runs stay; ``x``
    is the answer when nothing else (energy loads, heat pumps) counts in the placement objective
    (:func:`_tie_objective`), else the rest is placed with the runs fixed. A HiGHS call minimises the placement
    objective under ``cost <= budget`` for at most ``TIE_LIMIT_S`` (none when more than ``TIE_BINARIES`` binaries are
    left free: then ``x``'s own pattern is placed as below); placements differ there by whole slots, far above
    HiGHS's tolerances. Its pattern (binaries) is then placed by an LP (:func:`_placed`), which also cleans the
    binaries HiGHS leaves within its integrality tolerance (an optimum with every binary within 1e-9 of whole needs
    no LP); when it stopped at its cap, ``x``'s own pattern placed the same way competes. A placement is kept only
    when its recomputed cost stays within ``budget`` plus what HiGHS's feasibility tolerance may add (limits met to
    ``TOL_KW``: ``TOL_KW`` x h x sum of |prices|, plus ``TIE_REL`` of the scale); else ``x`` stays. A stop at the cap
    keeps the least cost and does not mark the plan time-limited.
    ``lower_bound`` is the LP relaxation's scaled optimum (-inf when not known).
    """
    if not inputs.loads and not inputs.heat_pumps:
        return x
    tariff = inputs.tariff
    tie = _tie_objective(inputs, cols, model.size)
    cost = model.objective()
    factor = COST_SCALE / scale
    fixed = _runs_earliest(
        inputs,
        model,
        cols,
        x,
        upper=upper,
        tie=tie,
        factor=factor,
        limit=budget * factor,
        tight=float(cost @ x) * factor <= lower_bound + PLAN_GAP,
    )
    if fixed is not None:
        if not np.delete(tie, np.concatenate(_run_columns(inputs, cols))).any():
            return x
        upper = fixed
    noise = TOL_KW * tariff.hours * float(np.sum(np.abs(tariff.import_price) + np.abs(tariff.export_price)))
    row = [Rows.dense(cost * factor, -np.inf, budget * factor)]
    placements = _placements(inputs, model, cols, tie, row, upper=upper, x=x)
    kept = [p for p in placements if p is not None and float(cost @ p) <= budget + TIE_REL * scale + noise]
    return min(kept, key=lambda p: float(tie @ p), default=x)


def _placements(
    inputs: Inputs,
    model: MilpModel,
    cols: Columns,
    tie: FloatArray,
    row: list[Rows],
    *,
    upper: FloatArray,
    x: FloatArray,
) -> list[FloatArray | None]:
    """Return the tie MILP's placement and, when it was skipped or stopped at its cap, ``x``'s own pattern placed."""
    integers = model.integer_columns()
    free = np.count_nonzero(upper[integers] > np.concatenate(model.lower)[integers])
    found = model.solve(tie, row, upper=upper, cap_s=TIE_LIMIT_S) if free <= TIE_BINARIES else None
    placements = []
    if found is not None and found.x is not None:
        mine = np.asarray(found.x, dtype=np.float64)
        done = found.status == OPTIMAL and whole(mine, integers)
        placements.append(
            _clean(model, mine, upper) if done else _placed(inputs, model, cols, tie, row, upper=upper, x=mine)
        )
    if found is None or found.status != OPTIMAL:  # x's own placement may be earlier
        placements.append(_placed(inputs, model, cols, tie, row, upper=upper, x=x))
    return placements


def _placed(
    inputs: Inputs,
    model: MilpModel,
    cols: Columns,
    tie: FloatArray,
    row: list[Rows],
    *,
    upper: FloatArray,
    x: FloatArray,
) -> FloatArray | None:
    """Return the tie stage's LP answer with ``x``'s run starts, on/off pattern and flow directions kept.

    That is the earliest placement of ``x``'s pattern within the budget ``row``; None when HiGHS finds none.
    """
    decided = np.concatenate([on_columns(cols), *_run_columns(inputs, cols)])
    lower, fixed = model.pinned(decided, np.round(x[decided]), directed(inputs, cols, x, upper))
    found = model.solve(tie, row, upper=fixed, lower=lower, relax=True)
    return None if found.x is None else _clean(model, matched(cols, np.asarray(found.x, dtype=np.float64)), upper)


def _run_columns(inputs: Inputs, cols: Columns) -> list[IntArray]:
    """Return each run's start binaries."""
    return [np.zeros(0, dtype=np.intp), *(c for c, load in zip(cols.loads, inputs.loads, strict=True) if load.slots)]


def _runs_earliest(
    inputs: Inputs,
    model: MilpModel,
    cols: Columns,
    x: FloatArray,
    *,
    upper: FloatArray,
    tie: FloatArray,
    factor: float,
    limit: float,
    tight: bool,
) -> FloatArray | None:
    """Return ``upper`` with every run fixed at its start in ``x`` when no run can start earlier within ``limit``.

    "Earlier within the limit": a plan of cost x ``factor`` <= ``limit`` whose run starts before ``x``'s, the runs
    before it (in tie order) at their starts in ``x``. None when that is not proven.

    Earlier starts already at 0 in ``upper`` (pruned by the budget) need no proof; otherwise the LP relaxation with
    the run forced earlier must exceed ``limit``, by a bound that holds whatever HiGHS's tolerances
    (:meth:`MilpModel.lower_bound`), or failing that, the LP with the run fixed at each earlier start in turn
    (:func:`_each_above`). Those LPs are only tried when ``tight`` (``x`` costs the relaxation's optimum: under a gap
    the first cannot exceed the limit); otherwise HiGHS's tie solve decides.
    """
    objective = model.objective() * factor
    fixed = upper.copy()
    for load, columns in zip(inputs.loads, cols.loads, strict=True):
        if not load.slots:
            continue
        start = int(np.argmax(x[columns]))
        if tie[columns].any() and fixed[columns[:start]].any():
            if not tight:
                return None
            trial = fixed.copy()
            trial[columns[start:]] = 0.0
            proved = model.lower_bound(objective, trial) > limit
            if not (proved or _each_above(model, objective, fixed, columns=columns, start=start, limit=limit)):
                return None
        fixed[columns] = 0.0
        fixed[columns[start]] = 1.0
    return fixed


def _each_above(
    model: MilpModel, objective: FloatArray, upper: FloatArray, *, columns: IntArray, start: int, limit: float
) -> bool:
    """Return True when each start before ``start`` still allowed by ``upper`` has an LP bound above ``limit``.

    The run (start binaries ``columns``) is fixed at each such start in turn (:meth:`MilpModel.lower_bound`, exact
    whatever HiGHS's tolerances); False past ``EACH_STARTS`` of them. The run forced to start earlier may have a
    bound under the limit only as a mixture of starts, while each start alone exceeds it.
    """
    earlier = columns[:start][upper[columns[:start]] > 0]
    if earlier.size > EACH_STARTS:
        return False
    for column in earlier:
        trial = upper.copy()
        trial[columns] = 0.0
        trial[column] = 1.0
        if model.lower_bound(objective, trial) <= limit:
            return False
    return True


def _tie_objective(inputs: Inputs, cols: Columns, size: int) -> FloatArray:
    """Lexicographic placement objective: the runs' start offsets, the energy loads' mean slots, then heat pumps.

    Each term lies in [0, span): a run's start offset, an energy load's mean slot, a heat pump's
    :func:`~.home_heat.heat_tie` (span n; smallest when it runs as late as possible). Weighted so that one slot of
    a term outweighs every later term; terms whose weight would pass ``LEX_LIMIT`` are left out (HiGHS's gap must
    still tell one slot apart).
    """
    pairs = list(zip(inputs.loads, cols.loads, strict=True))
    terms = [(float(load.keys[-1] - load.keys[0]) + 1, _load_tie(inputs, load, c, size)) for load, c in pairs]
    terms = [term for term, (load, _) in zip(terms, pairs, strict=True) if load.slots] + [
        term for term, (load, _) in zip(terms, pairs, strict=True) if not load.slots
    ]
    terms += [(float(inputs.n), heat_tie(p, c, size)) for p, c in zip(inputs.heat_pumps, cols.heat, strict=True)]
    spans: list[float] = []
    weight = 1.0
    for span, _ in terms:
        if weight * span > LEX_LIMIT:
            break
        spans.append(span)
        weight *= span
    tie = np.zeros(size)
    for (_, term), span in zip(terms, spans, strict=False):
        weight /= span
        tie += weight * term
    return tie


def _load_tie(inputs: Inputs, load: Load, columns: IntArray, size: int) -> FloatArray:
    """Return a load's placement term: its start offset (runs) or its energy's mean slot offset (energy loads)."""
    tie = np.zeros(size)
    offsets = (load.keys - load.keys[0]).astype(np.float64)
    per_slot = 1.0 if load.slots else inputs.tariff.hours / load.energy_kwh  # x is kW: mean slot = sum(t x h) / E
    tie[columns] = offsets * per_slot
    return tie


def _clean(model: MilpModel, x: FloatArray, upper: FloatArray) -> FloatArray:
    """Binaries rounded, values clipped to their bounds, solver noise below TOL_KW / 100 zeroed."""
    lower = np.concatenate(model.lower)
    x = np.clip(x, lower, upper)
    integer = model.integer_columns()
    x[integer] = np.round(x[integer])
    x[(np.abs(x) < TOL_KW / 100) & (lower <= 0)] = 0.0
    return x
