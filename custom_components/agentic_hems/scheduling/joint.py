"""Several loads at once under the household power limit: a MILP solved by HiGHS (highspy, :mod:`.highs`).

The model and its parts are in :mod:`.joint_model`; this module plans: each load's options, the shortcut when the
loads' own optima fit together, the MILP's least cost, and the tie stages that place loads as early as they can be.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
import math
from typing import Final

import numpy as np
import numpy.typing as npt

from ..prices.curve import FloatArray, PriceCurve
from .contiguous import run_options, run_power
from .energy import charge_options, cheapest_fill, fill_positions
from .highs import INFEASIBLE, OPTIMAL, Rows, solve, stack
from .joint_model import (
    MILP_OPTIONS,
    ChargeLoad,
    JointLoad,
    JointModel,
    LpBound,
    RunLoad,
    build_model,
    clean_solution,
    clear_starts,
    load_energy,
    model_constraints,
)
from .joint_place import heuristic, place, rounded
from .joint_search import SearchLimit, search_applies, search_schedule
from .plan import LoadSpec, Plan, Reason
from .ties import TIE_REL, tie_tolerance
from .windows import (
    REL_EPS,
    BoolArray,
    build_plan,
    check_positive,
    resolve_window,
    slot_hours,
    slots_for_duration,
    unplanned,
)

METHOD = "milp"
# HiGHS's absolute gap stays at its default 1e-6, so the cost objective is scaled to COST_SCALE:
# 1e-6 is then 1e-10 of the cost scale.
COST_SCALE = 1e4
# The tie-break may spend this fraction of the cost scale (max |price| x total energy) to move loads earlier.
TIE_SLACK = TIE_REL
# Later tie stages keep an energy load's mean slot index within this of its least value (absorbs HiGHS's noise).
PIN_SLOTS = 1e-6
# Largest weighted objective of a stage of runs: integers this large stay apart under MIP_REL_GAP (1e-3 here).
LEX_LIMIT = 1e6
# The tie stages' binaries integral to 1e-9 (HiGHS's default 1e-6): rounding a start at 0.99999993 to 1 can cost more
# than the tie tolerance (1e-9 of the cost scale), and the stage's schedule was then refused.
STAGE_OPTIONS: Final[dict[str, float | str]] = {**MILP_OPTIONS, "mip_feasibility_tolerance": 1e-9}
# Search the start combinations without a solver (:mod:`.joint_search`); tests turn it off to check the MILP path.
SEARCH = True
# The search's work (:mod:`.joint_search`) before the LP relaxation, whose duals then tighten its bounds, is solved.
QUICK_WORK = 60
# That first search runs only up to this many combinations of the runs' starts: on the benchmark's 30 instances
# (bench_scheduling.py) it finished on every one with at most 60 and on none with 80 or more, where it only cost time.
QUICK_COMBINATIONS = 64


def _validate(spec: LoadSpec) -> float:
    """Check the load and return its duration (contiguous) or energy; raise ValueError or TypeError when malformed."""
    label = spec.name or "load"
    check_positive(**{f"{label}.power_kw": spec.power_kw})
    if (spec.duration_min is None) == (spec.energy_kwh is None):
        raise ValueError(f"load {label!r}: give exactly one of duration_min and energy_kwh")
    if spec.contiguous:
        if spec.duration_min is None:
            raise ValueError(
                f"load {label!r}: a contiguous load needs duration_min (energy_kwh needs contiguous=False)"
            )
        check_positive(**{f"{label}.duration_min": spec.duration_min})
        return spec.duration_min
    if spec.energy_kwh is None:
        raise ValueError(f"load {label!r}: a non-contiguous load needs energy_kwh (duration_min needs contiguous=True)")
    check_positive(**{f"{label}.energy_kwh": spec.energy_kwh})
    return spec.energy_kwh


def _base_load(base_load_kw: float | npt.ArrayLike, n: int) -> FloatArray:
    base = np.asarray(base_load_kw, dtype=np.float64)
    if base.ndim == 0:
        base = np.full(n, float(base))
    if base.shape != (n,):
        raise ValueError(f"base_load_kw must be a number or an array of {n} values, got shape {base.shape}")
    if not np.isfinite(base).all():
        raise ValueError("base_load_kw must be finite in every slot")
    return base


def plan_joint(
    curve: PriceCurve,
    loads: Sequence[LoadSpec],
    *,
    power_limit_kw: float,
    base_load_kw: float | npt.ArrayLike = 0.0,
) -> list[Plan]:
    """Schedule several loads together at least total cost without exceeding the household power limit.

    Args:
        curve: prices per kWh (NaN = unknown); every plan's ``power_kw`` array is aligned with it.
        loads: the loads; ``contiguous=True`` needs ``duration_min`` (one uninterrupted run at ``power_kw``),
            ``contiguous=False`` needs ``energy_kwh`` (any slots, 0 to ``power_kw`` kW each, exactly that energy).
            Windows round as in :func:`plan_contiguous` and :func:`plan_energy`; unknown prices are never used.
        power_limit_kw: the main fuse in kW, > 0 (``math.inf`` for none); base load plus planned loads stay at or
            below it in every slot (to 1e-9 relative, which absorbs float noise such as 2.8 - 0.8 < 2.0).
        base_load_kw: kW drawn by the rest of the house, a number or a finite array (n,) aligned with the curve
            (negative where solar exports).

    Returns:
        One :class:`Plan` per load, in order, method ``milp``. A load whose window cannot hold it on its own gets
        feasible=False with WINDOW_TOO_SHORT or NO_PRICES and the others are still planned. When the limit leaves
        no common schedule (or HiGHS finds none within ``TIME_LIMIT_S``), every other plan is feasible=False with
        POWER_LIMIT and nothing is scheduled; the ``detail`` names the loads that cannot run under the limit even
        alone. ``baseline_cost`` is each load's own
        baseline (earliest start, limit ignored). Cost is optimal to a relative gap of 1e-9.

    Raises:
        ValueError: a malformed load (non-positive or non-finite numbers, both or neither of ``duration_min`` and
            ``energy_kwh``, or one that contradicts ``contiguous``), a limit that is not > 0, a base load of the
            wrong shape or not finite, or a naive datetime.
        TypeError: a power, duration, energy or limit that is not a real number (bool included).

    The model is in :mod:`.joint_model`. Starts whose run meets a slot with ``base + P > limit`` are dropped first.
    The limit is the only coupling, so when the loads' own optima (:func:`plan_contiguous`, :func:`plan_energy` under
    the limit) fit together they are the optimum and HiGHS is not called. Otherwise starts that no schedule within a
    known cost can use are pruned, and a branch and bound of its own searches the start combinations
    (:mod:`.joint_search`, runs followed by at most one energy load); when it gives up, or for other loads, HiGHS
    solves the MILP with explicit ``mip_rel_gap`` and ``time_limit`` (see :func:`_solve`). Ties (costs within the
    tolerance of :mod:`.ties`) are broken lexicographically in the order of ``loads``: the first load as early as it
    can be, then the second, and so on (see :func:`_solve`), whatever HiGHS's rounding; the same inputs give the
    same plans. A plan that uses doubtful slots has reason
    DOUBTFUL_PRICES.

    """
    _check_limit(power_limit_kw)
    amounts = [_validate(spec) for spec in loads]
    base = _base_load(base_load_kw, len(curve))
    headroom = power_limit_kw * (1 + REL_EPS) - base  # kW left for the loads per slot; REL_EPS absorbs float noise
    plans: list[Plan | None] = [None] * len(loads)
    fitting: list[JointLoad] = []
    for index, (spec, amount) in enumerate(zip(loads, amounts, strict=True)):
        option = _option(curve, index, spec, amount, headroom)
        if isinstance(option, Plan):
            plans[index] = option
        else:
            fitting.append(option)
    return _schedule(curve, plans, fitting, headroom, power_limit_kw)


def _check_limit(power_limit_kw: float) -> None:
    """Raise TypeError unless the limit is a real number (bool excluded), ValueError unless it is > 0."""
    if isinstance(power_limit_kw, bool) or not isinstance(power_limit_kw, (int, float, np.integer, np.floating)):
        raise TypeError(f"power_limit_kw must be a number, got {power_limit_kw!r}")
    if not power_limit_kw > 0:  # also NaN; +inf means no limit
        raise ValueError(f"power_limit_kw must be > 0, got {power_limit_kw!r}")


def _option(curve: PriceCurve, index: int, spec: LoadSpec, amount: float, headroom: FloatArray) -> JointLoad | Plan:
    """Return the load's variables (starts or slots with room for it alone), or its unplanned Plan when none fit."""
    window = resolve_window(curve, spec.earliest_start, spec.deadline)
    if spec.contiguous:
        slots = slots_for_duration(amount, curve.resolution)
        run = run_options(curve, window, power_kw=spec.power_kw, slots=slots)
        if run.feasible:
            ok = clear_starts(run.starts, slots, spec.power_kw > headroom)  # room for this load alone
            starts = run.starts[ok]
            energy = spec.power_kw * slot_hours(curve) * slots
            tolerance = tie_tolerance(curve.prices[starts[0] : starts[-1] + slots], energy) if starts.size else 0.0
            return RunLoad(index, spec, run, starts, spec.power_kw * slot_hours(curve) * run.sums[ok], tolerance)
        reason, detail = run.reason, run.detail
    else:
        charge = charge_options(curve, window, max_power_kw=spec.power_kw, energy_kwh=amount)
        if charge.feasible:
            caps = np.minimum(spec.power_kw, headroom[charge.slots])
            keep = caps > 0
            usable = charge.slots[keep]
            order = fill_positions(curve.prices[usable], amount)
            return ChargeLoad(index, spec, charge, usable, caps[keep], amount, order)
        reason, detail = charge.reason, charge.detail
    return unplanned(curve, spec.name, method=METHOD, reason=reason, detail=detail)


def _schedule(
    curve: PriceCurve, plans: list[Plan | None], fitting: list[JointLoad], headroom: FloatArray, power_limit_kw: float
) -> list[Plan]:
    """Plan the fitting loads into ``plans``: their own optima when these fit together, else the MILP's schedule."""
    # Each load's own optimum under the limit: the same choice plan_contiguous / plan_energy make.
    alone = [place(curve, load, headroom) for load in fitting]
    blocked_names = [repr(load.spec.name) for load, best in zip(fitting, alone, strict=True) if best is None]
    if blocked_names:
        detail = (
            f"{', '.join(blocked_names)} cannot run within its window: the {power_limit_kw:g} kW limit leaves too "
            "little room beside the base load (the other appliances' plans); nothing scheduled"
        )
        return _blocked(curve, plans, fitting, detail)

    powers = [best[0] for best in alone if best is not None]
    note = ""
    if fitting and np.any(np.sum(powers, axis=0) > headroom):
        costs = [best[1] for best in alone if best is not None]
        solved, note = _solve(curve, fitting, headroom, costs)
        if solved is None:
            detail = f"the loads do not fit together under the {power_limit_kw:g} kW limit and the base load{note}"
            return _blocked(curve, plans, fitting, detail + "; nothing scheduled")
        powers = solved
    for load, power in zip(fitting, powers, strict=True):
        plans[load.index] = build_plan(
            curve,
            load.spec.name,
            power,
            baseline_cost=load.options.baseline_cost,
            method=METHOD,
            reason=load.options.reason,
            detail="; ".join(part for part in (load.options.detail, note) if part),
        )
    return [plan for plan in plans if plan is not None]


def _blocked(curve: PriceCurve, plans: list[Plan | None], fitting: list[JointLoad], detail: str) -> list[Plan]:
    for load in fitting:
        plans[load.index] = unplanned(
            curve,
            load.spec.name,
            method=METHOD,
            reason=Reason.POWER_LIMIT,
            detail=detail,
            baseline_cost=load.options.baseline_cost,
        )
    return [plan for plan in plans if plan is not None]


def _solve(
    curve: PriceCurve, fitting: list[JointLoad], headroom: FloatArray, own_costs: list[float]
) -> tuple[list[FloatArray] | None, str]:
    """Solve the MILP; per-load kW arrays (None when no schedule exists) and a note for ``detail``.

    Where the loads are runs followed by at most one energy load, :mod:`.joint_search` solves it: first with
    ``QUICK_WORK`` of work when the runs' starts give at most ``QUICK_COMBINATIONS`` combinations, then (after the LP
    relaxation, whose duals tighten its bounds) with ``MAX_WORK``, and for the ties after HiGHS's stage 0. Otherwise,
    and whenever it gives up, HiGHS does, in stages: stage 0 minimises cost alone, giving C0; every later stage
    (:class:`_TieStages`) keeps ``cost <= B`` with B = C0 + TIE_SLACK x S (S = max|price| x total energy, the tie
    tolerance of :mod:`.ties`) and moves loads earlier, lexicographically in the caller's order.

    Pruning (:func:`_within`, then :meth:`~.joint_model.LpBound.prune` with the LP's duals) drops the starts that no
    schedule costing at most B can use: B is first the least of a quick schedule (:func:`~.joint_place.heuristic`)
    and the LP relaxation rounded (:func:`~.joint_place.rounded`), then C0. On the benchmark's instances the tie
    stages keep a few binaries, or none (no stage runs).
    """
    scale = _cost_scale(curve, fitting)
    slack = TIE_SLACK * scale
    factor = COST_SCALE / scale
    upper = heuristic(curve, fitting, headroom)
    keep = _within(fitting, own_costs, upper, slack)
    if _combinations(fitting, keep) <= QUICK_COMBINATIONS:  # few: no solver is loaded when the search settles it
        searched = _search(curve, fitting, keep, headroom, slack=slack, upper=upper, max_work=QUICK_WORK)
        if searched is not None:
            return searched[0], ""
    model = build_model(curve, fitting, keep, headroom)
    bound = LpBound.of(model, factor, len(curve))
    if bound is not None:
        upper = min(upper, rounded(curve, fitting, model, bound.solution, headroom))
    tie_work = None  # the search for the ties after HiGHS: MAX_WORK, or QUICK_WORK once a full search gave up
    if bound is not None and math.isfinite(upper):
        keep = bound.prune(fitting, _within(fitting, own_costs, upper, slack), upper + slack)
        searched = _search(curve, fitting, keep, headroom, slack=slack, upper=upper, limit_price=bound.limit_price)
        if searched is not None:
            return searched[0], ""
        tie_work = QUICK_WORK
        model = build_model(curve, fitting, keep, headroom)
    first = solve(
        model.cost * factor,
        np.zeros(model.cost.size),
        model.upper,
        stack(model_constraints(model)),
        integer=model.integrality,
        options=MILP_OPTIONS,
    )
    if first.x is None:
        return None, "" if first.status == INFEASIBLE else f" (no schedule found: {first.message})"
    note = "" if first.status == OPTIMAL else f"solver stopped early ({first.message}); best schedule found"
    x = clean_solution(model, first.x)
    cost = float(model.cost @ x)
    keep = _tie_candidates(fitting, own_costs, cost=cost, slack=slack, bound=bound, solved=(model, x))
    prices = bound.limit_price if bound is not None else None  # the ties, without the stages:
    searched = _search(curve, fitting, keep, headroom, slack=slack, upper=cost, limit_price=prices, max_work=tie_work)
    if searched is not None and searched[0] is not None:
        return searched[0], note
    stages = _TieStages(curve, fitting, headroom, keep, cost + slack, scale, model, x)
    stages.run()
    powers = _powers(curve, fitting, stages.model, stages.x, headroom)
    return _canonical(curve, fitting, powers, headroom, stages.budget) or powers, note


def _search(
    curve: PriceCurve,
    fitting: list[JointLoad],
    keep: list[BoolArray],
    headroom: FloatArray,
    *,
    slack: float,
    upper: float,
    limit_price: FloatArray | None = None,
    max_work: int | None = None,
) -> tuple[list[FloatArray] | None] | None:
    """Return the search's answer (:mod:`.joint_search`) in a 1-tuple, or None when it does not apply or gives up."""
    if not (SEARCH and search_applies(fitting)):
        return None
    try:
        return (
            search_schedule(
                curve, fitting, keep, headroom, slack=slack, upper=upper, limit_price=limit_price, max_work=max_work
            ),
        )
    except SearchLimit:
        return None


def _combinations(fitting: list[JointLoad], keep: list[BoolArray]) -> int:
    """Return how many combinations of the runs' kept starts there are."""
    return math.prod(int(mask.sum()) for load, mask in zip(fitting, keep, strict=True) if isinstance(load, RunLoad))


def _tie_candidates(
    fitting: list[JointLoad],
    own_costs: list[float],
    *,
    cost: float,
    slack: float,
    bound: LpBound | None,
    solved: tuple[JointModel, FloatArray],
) -> list[BoolArray]:
    """Return the columns a schedule within ``cost + slack`` can use, and each run's start in ``solved``'s schedule.

    The starts of the schedule in hand stay: HiGHS's tolerances can put its cost below the LP bound of its starts.
    """
    keep = _within(fitting, own_costs, cost, slack)
    if bound is not None:
        keep = bound.prune(fitting, keep, cost + slack)
    model, x = solved
    for number, load in enumerate(fitting):
        if isinstance(load, RunLoad):
            chosen = model.keys[number][int(np.argmax(x[model.columns[number]]))]
            keep[number] = keep[number] | (load.starts == chosen)
    return keep


def _cost_scale(curve: PriceCurve, fitting: list[JointLoad]) -> float:
    """Return the cost scale S (currency): max |price| the loads can meet x their total energy (energy if 0)."""
    energy = sum(load_energy(load, slot_hours(curve)) for load in fitting)
    spans = [
        curve.prices[load.starts[0] : load.starts[-1] + load.options.slots]
        if isinstance(load, RunLoad)
        else curve.prices[load.slots]
        for load in fitting
    ]
    return max(float(np.nanmax(np.abs(span))) for span in spans) * energy or energy


def _within(fitting: list[JointLoad], own_costs: list[float], budget: float, slack: float) -> list[BoolArray]:
    """Return the columns that can be part of a schedule costing at most ``budget`` (+ ``slack``).

    Every other load costs at least its own optimum, so a run dearer than its own optimum + (budget - sum of own
    optima) cannot.
    """
    extra = max(budget - sum(own_costs), 0.0) + slack  # >= 0 exactly; HiGHS's rounding can end a bit below
    return [
        load.cost - own <= extra if isinstance(load, RunLoad) else np.ones(load.slots.size, dtype=bool)
        for load, own in zip(fitting, own_costs, strict=True)
    ]


@dataclass
class _TieStages:
    """Among schedules costing at most ``budget``: the first load as early as it can be, then the second, and so on.

    Each stage minimises an objective in slots, where different placements differ by far more than HiGHS's
    tolerances (absolute gap 1e-6; feasibility 1e-7), which a penalty folded into the
    cost objective (below 1e-9 of the cost scale) could never be; so HiGHS's rounding decides nothing. Consecutive
    runs share a stage: their starts (offsets from their earliest candidate) weighted so that one slot of a run
    outweighs every later run of the stage, while the weighted objective stays below ``LEX_LIMIT``. An energy load
    minimises its energy-weighted mean slot. A stage pins what it placed: a run to its start, an energy load to its
    mean slot (+ PIN_SLOTS). The first run of a stage only considers starts up to its current one, and a run whose
    candidates leave one start needs no stage; the only energy load needs none once every run is pinned, as
    :func:`_canonical` then places it exactly. A stage's schedule is kept only when its recomputed cost stays within
    ``budget + TIE_SLACK x scale`` (HiGHS may end on the budget row); otherwise the stages stop there.
    """

    curve: PriceCurve
    fitting: list[JointLoad]
    headroom: FloatArray
    keep: list[BoolArray]  # each load's usable columns (runs: a mask over its starts)
    budget: float
    scale: float
    model: JointModel
    x: FloatArray
    pins: list[tuple[int, float]] = field(default_factory=list)  # (energy load, its least mean slot)

    def run(self) -> None:
        """All stages, in the order of the loads."""
        group: list[int] = []
        weight = 1
        for number, load in enumerate(self.fitting):
            if isinstance(load, ChargeLoad):
                if not self._flush(group):
                    return
                group, weight = [], 1
                if not self._last_energy_load(number) and not self._stage([number]):
                    return
                continue
            span = self._span(number, first=not group)
            if group and weight * span > LEX_LIMIT:
                if not self._flush(group):
                    return
                group, weight = [], 1
                span = self._span(number, first=True)
            if span > 1:  # else it is as early as it can be
                group.append(number)
                weight *= span
        self._flush(group)

    def _span(self, number: int, *, first: bool) -> int:
        """Return how many slots the candidate starts of run ``number`` span.

        The first run of a stage keeps only starts up to its current one: the schedule in hand is feasible, so only
        those can improve on it.
        """
        load = self.fitting[number]
        assert isinstance(load, RunLoad)
        if first:
            current = self.model.keys[number][int(np.argmax(self.x[self.model.columns[number]]))]
            self.keep[number] &= load.starts <= current
        return int(np.ptp(load.starts[self.keep[number]])) + 1

    def _flush(self, group: list[int]) -> bool:
        """Run the stage of a group of runs (nothing to do for none); return False when the stages must stop."""
        return not group or self._stage(group)

    def _last_energy_load(self, number: int) -> bool:
        """Return True when load ``number`` is the only energy load and no run follows it."""
        return all(isinstance(load, RunLoad) for i, load in enumerate(self.fitting) if i != number) and not any(
            isinstance(load, RunLoad) for load in self.fitting[number + 1 :]
        )

    def _stage(self, numbers: list[int]) -> bool:
        """Place the loads ``numbers`` as early as they can be and pin them.

        Return False when HiGHS found nothing better within the budget (the schedule in hand stays).
        """
        model = build_model(self.curve, self.fitting, self.keep, self.headroom)
        rows = [Rows.dense(model.cost * (COST_SCALE / self.scale), -np.inf, self.budget * COST_SCALE / self.scale)]
        rows += [Rows.dense(_mean_slot(model, j), -np.inf, mean + PIN_SLOTS) for j, mean in self.pins]
        found = solve(
            self._objective(model, numbers),
            np.zeros(model.cost.size),
            model.upper,
            stack([*model_constraints(model), *rows]),
            integer=model.integrality,
            options=STAGE_OPTIONS,
        )
        if found.x is None or float(model.cost @ clean_solution(model, found.x)) > self.budget + TIE_SLACK * self.scale:
            return False
        self.model, self.x = model, clean_solution(model, found.x)
        for number in numbers:
            load = self.fitting[number]
            if isinstance(load, RunLoad):
                self.keep[number] = load.starts == model.keys[number][int(np.argmax(self.x[model.columns[number]]))]
            else:
                self.pins.append((number, float(_mean_slot(model, number) @ self.x)))
        return True

    def _objective(self, model: JointModel, numbers: list[int]) -> FloatArray:
        """Return an energy load's mean slot, or the runs' start offsets weighted lexicographically (first heaviest)."""
        if isinstance(self.fitting[numbers[0]], ChargeLoad):
            return _mean_slot(model, numbers[0])
        row = np.zeros(model.cost.size)
        weight = 1.0
        for number in reversed(numbers):
            keys = model.keys[number]
            row[model.columns[number]] = weight * (keys - keys[0])
            weight *= int(keys[-1] - keys[0]) + 1
        return row


def _mean_slot(model: JointModel, number: int) -> FloatArray:
    """Objective row (over all variables) of load ``number``'s energy-weighted mean slot index, from its first."""
    columns = model.columns[number]
    row = np.zeros(model.cost.size)
    tie = model.tie[columns]
    row[columns] = (tie - (tie.min() if tie.size else 0.0)) / model.energy[number]
    return row


def _canonical(
    curve: PriceCurve, fitting: list[JointLoad], powers: list[FloatArray], headroom: FloatArray, budget: float
) -> list[FloatArray] | None:
    """Keep the runs of ``powers`` and place each energy load again, in order, at its cheapest in the room left.

    Energy loads go earliest on ties (:func:`~.energy.cheapest_fill`). Return None when that does not fit or costs
    more than ``budget``.
    """
    runs = [power for power, load in zip(powers, fitting, strict=True) if isinstance(load, RunLoad)]
    room = headroom - sum(runs, np.zeros(len(curve)))
    placed = list(powers)
    for number, load in enumerate(fitting):
        if isinstance(load, ChargeLoad):
            caps = np.minimum(load.caps_kw, np.maximum(room[load.slots], 0.0))
            power = cheapest_fill(curve, load.slots, caps, load.energy_kwh, load.order)
            if power is None:
                return None
            placed[number] = power
            room = room - power
    cost = sum(float(np.dot(curve.prices[p > 0], p[p > 0])) for p in placed) * slot_hours(curve)
    return placed if cost <= budget else None


def _powers(
    curve: PriceCurve, fitting: list[JointLoad], model: JointModel, x: FloatArray, headroom: FloatArray
) -> list[FloatArray]:
    """Per-slot kW of each load from a cleaned solution, kept exactly within the limit."""
    n = len(curve)
    powers: list[FloatArray] = []
    for load, columns, keys in zip(fitting, model.columns, model.keys, strict=True):
        power: FloatArray = np.zeros(n)
        if isinstance(load, RunLoad):
            power = run_power(n, int(keys[int(np.argmax(x[columns]))]), load.options.slots, load.spec.power_kw)
        else:
            power[keys] = x[columns]
        powers.append(power)
    runs = sum((p for p, load in zip(powers, fitting, strict=True) if isinstance(load, RunLoad)), np.zeros(n))
    flexible = sum((p for p, load in zip(powers, fitting, strict=True) if isinstance(load, ChargeLoad)), np.zeros(n))
    # Feasibility tolerances (~1e-7 kW) may overshoot the limit; scale energy loads back into the headroom exactly.
    room = np.maximum(headroom - runs, 0.0)
    factor = np.where(flexible > room, room / np.where(flexible > 0, flexible, 1.0), 1.0)
    return [p * factor if isinstance(load, ChargeLoad) else p for p, load in zip(powers, fitting, strict=True)]
