"""The joint planner's fast paths against brute force and against its plain MILP path, on random instances.

The LP-dual pruning (joint_model.LpBound) may drop a start only when no schedule that uses it costs at most the
budget: the oracle computes, for every start of every run, the least cost of a schedule using it (runs by brute
force, one energy load filled by price). The branch and bound over the runs' starts (joint_search) must give the
MILP path's plans.
"""

from __future__ import annotations

import itertools
import math
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from custom_components.agentic_hems.prices.curve import PriceCurve
from custom_components.agentic_hems.scheduling import LoadSpec, Plan, Reason, joint, joint_search, plan_joint
from custom_components.agentic_hems.scheduling.joint import _option
from custom_components.agentic_hems.scheduling.joint_model import LpBound, RunLoad, build_model
from custom_components.agentic_hems.scheduling.joint_place import rounded
from custom_components.agentic_hems.scheduling.ties import tie_tolerance
from custom_components.agentic_hems.scheduling.windows import REL_EPS

from .conftest import SLOT, T0, curves, dyadic_price, noisy
from .oracles import _fill, brute_joint, hours_per_slot, run_cost, run_slots, run_starts
from .test_scheduling_joint import wide_windows


def _least_with(
    curve: PriceCurve, loads: list[LoadSpec], limit: float, base: np.ndarray
) -> dict[tuple[int, int], float]:
    """(run number, start) -> least cost of a schedule within the limit that starts that run there (inf: none)."""
    h = hours_per_slot(curve)
    prices = [float(p) for p in curve.prices]
    runs = [spec for spec in loads if spec.contiguous]
    options = [
        run_starts(curve, run_slots(int(spec.duration_min)), spec.earliest_start, spec.deadline) for spec in runs
    ]
    charge = [spec for spec in loads if not spec.contiguous]
    least: dict[tuple[int, int], float] = {
        (number, start): math.inf for number, starts in enumerate(options) for start in starts
    }
    for combo in itertools.product(*options):
        load = base.copy()
        cost = 0.0
        for spec, start in zip(runs, combo, strict=True):
            slots = run_slots(int(spec.duration_min))
            load[start : start + slots] += spec.power_kw
            cost += run_cost(curve, start, slots, spec.power_kw)
        if np.any(load > limit * (1 + REL_EPS)):
            continue
        if charge:
            (spec,) = charge
            slots = [i for i in range(len(curve)) if i in _usable(curve, spec)]
            power = _fill(prices, spec, slots, np.maximum(limit - load, 0.0), h)
            if power is None:
                continue
            cost += math.fsum(prices[i] * power[i] * h for i in range(len(curve)) if power[i] > 0)
        for number, start in enumerate(combo):
            least[number, start] = min(least[number, start], cost)
    return least


def _usable(curve: PriceCurve, spec: LoadSpec) -> set[int]:
    return {
        i
        for i in range(len(curve))
        if curve.slot_start(i) >= spec.earliest_start
        and curve.slot_start(i) + SLOT <= spec.deadline
        and not math.isnan(curve.prices[i])
    }


@settings(derandomize=True, max_examples=200, deadline=None)
@given(data=st.data())
def test_pruning_keeps_every_start_a_schedule_within_the_budget_uses(data: st.DataObject) -> None:
    """No start that some schedule within the budget uses is dropped; and the bound does drop starts.

    The LP relaxation rounded (joint_place.rounded, an upper bound for the search) never costs less than the brute-force
    least cost.
    """
    curve = data.draw(
        curves(
            min_slots=8,
            max_slots=20,
            price=st.sampled_from([dyadic_price, st.floats(-0.2, 0.8)]).flatmap(lambda s: s),
            nan=False,
        )
    )
    loads = [
        LoadSpec(
            f"run{number}",
            power_kw=data.draw(st.sampled_from([1.0, 1.5, 2.0, 3.0])),
            duration_min=data.draw(st.integers(15, 75)),
            earliest_start=curve.start,
            deadline=curve.end,
        )
        for number in range(data.draw(st.integers(2, 3)))
    ]
    if data.draw(st.booleans()):
        loads.append(
            LoadSpec(
                "ev",
                power_kw=data.draw(st.floats(1.0, 5.0)),
                energy_kwh=data.draw(st.floats(0.5, 4.0)),
                earliest_start=curve.start,
                deadline=curve.end,
                contiguous=False,
            )
        )
    base = np.full(len(curve), data.draw(st.sampled_from([0.0, 0.5])))
    limit = float(base[0]) + max(spec.power_kw for spec in loads) + data.draw(st.sampled_from([0.5, 1.0, 2.0, 3.0]))
    least = _least_with(curve, loads, limit, base)
    optimum = min(least.values(), default=math.inf)
    if not math.isfinite(optimum):
        return
    headroom = limit * (1 + REL_EPS) - base
    amounts = [spec.duration_min if spec.contiguous else spec.energy_kwh for spec in loads]
    fitting = [
        _option(curve, number, spec, amount, headroom)
        for number, (spec, amount) in enumerate(zip(loads, amounts, strict=True))
    ]
    assert all(not hasattr(load, "feasible") for load in fitting)  # every load fits alone (no Plan returned)
    keep = [np.ones(load.starts.size if isinstance(load, RunLoad) else load.slots.size, dtype=bool) for load in fitting]
    model = build_model(curve, fitting, keep, headroom)
    bound = LpBound.of(model, 1e4 / max(abs(optimum), 1.0), len(curve))
    # the relaxation of a feasible instance solves, and its dual bound lies at or below the MILP's optimum
    assert bound is not None and bound.base <= optimum + 1e-9 * max(abs(optimum), 1.0)
    # the relaxation rounded is a schedule within the limit: it costs no less than the least (inf when it breaks it)
    cost = rounded(curve, fitting, model, bound.solution, headroom)
    energy = sum(spec.energy_kwh or 0.0 for spec in loads)  # a fill counts energy within REL_EPS as placed:
    noise = REL_EPS * float(np.max(np.abs(curve.prices))) * energy + 1e-9 * max(abs(optimum), 1.0)
    assert cost >= optimum - noise
    event("rounded: the least cost" if math.isclose(cost, optimum, abs_tol=1e-9) else "rounded: dearer or none")
    budget = optimum + data.draw(st.sampled_from([0.0, 1e-9, 0.01, 0.1]))
    pruned = bound.prune(fitting, keep, budget)
    dropped = 0
    for number, load in enumerate(fitting):
        if not isinstance(load, RunLoad):
            assert pruned[number].all()
            continue
        for start, kept in zip(load.starts, pruned[number], strict=True):
            if not kept:
                dropped += 1
                assert least[number, int(start)] > budget, (number, int(start))
    event("some starts dropped" if dropped else "none dropped")


@settings(derandomize=True, max_examples=200, deadline=None)
@given(data=st.data())
def test_a_childs_fill_bound_never_exceeds_its_fill(data: st.DataObject) -> None:
    """The search's bound on the energy load's fill beside a run at each start (joint_search._Fill.costs) stays at
    or below the fill's exact cost with the run drawn there, to the fill's tie tolerance; inf only where the load
    cannot fit even without the run."""
    price = st.sampled_from([dyadic_price, st.floats(-0.2, 0.8)]).flatmap(lambda s: s)
    curve = data.draw(curves(min_slots=8, max_slots=32, price=price, nan=False))
    spec = LoadSpec(
        "ev",
        power_kw=data.draw(st.sampled_from([1.0, 2.0, 3.5])),
        energy_kwh=data.draw(st.sampled_from([0.25, 0.5, 1.0, 2.0, 4.0])),
        earliest_start=curve.start,
        deadline=curve.end,
        contiguous=False,
    )
    n = len(curve)
    headroom = np.array(data.draw(st.lists(st.sampled_from([0.5, 1.5, 3.0, 4.0]), min_size=n, max_size=n)))
    charge = _option(curve, 0, spec, float(spec.energy_kwh), headroom)
    if isinstance(charge, Plan):
        return
    hours = hours_per_slot(curve)
    fill = joint_search._Fill.of(charge, headroom, charge.order, curve.prices[charge.slots], hours)
    drawn = np.array(data.draw(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=n, max_size=n)))
    power, slots = data.draw(st.sampled_from([0.5, 1.0, 2.0])), data.draw(st.integers(1, 6))
    starts = np.arange(n - slots + 1)
    bounds = fill.costs(drawn, starts, slots, power)
    alone = fill.cost(drawn)
    tolerance = tie_tolerance(curve.prices[charge.slots], float(spec.energy_kwh)) + 1e-12
    tight = 0
    for start, bound in zip(starts, bounds, strict=True):
        child = drawn.copy()
        child[start : start + slots] += power
        exact = fill.cost(child)
        if alone is None:
            assert exact is None and bound == math.inf
        elif exact is not None:
            assert alone <= bound + tolerance and bound <= exact + tolerance, (int(start), bound, exact)
            tight += bool(math.isclose(bound, exact, abs_tol=tolerance))
    event("some bounds exact" if tight else "no bound exact")


@settings(derandomize=True, max_examples=150, deadline=None)
@given(data=st.data())
def test_the_search_gives_the_milp_paths_plans(data: st.DataObject) -> None:
    """The branch and bound over the runs' starts (joint_search) returns the plans of the MILP path and its tie
    stages, and the brute-force canonical schedule, on random instances with float-noisy prices."""
    exact = data.draw(curves(min_slots=8, max_slots=32, nan=data.draw(st.booleans())))
    curve = exact.replace(prices=noisy(exact.prices, data))
    loads = []
    for number in range(data.draw(st.integers(2, 3))):
        earliest, deadline = data.draw(wide_windows(curve))
        loads.append(
            LoadSpec(
                f"run{number}",
                power_kw=data.draw(st.sampled_from([1.0, 1.5, 2.0, 3.0])),
                duration_min=data.draw(st.integers(10, 90)),
                earliest_start=earliest,
                deadline=deadline,
            )
        )
    if data.draw(st.booleans()):
        earliest, deadline = data.draw(wide_windows(curve))
        loads.append(
            LoadSpec(
                "ev",
                power_kw=data.draw(st.sampled_from([1.0, 2.0, 3.5])),
                energy_kwh=data.draw(st.sampled_from([0.25, 0.5, 1.0, 2.0])),
                earliest_start=earliest,
                deadline=deadline,
                contiguous=False,
            )
        )
    base = np.array(data.draw(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=len(curve), max_size=len(curve))))
    limit = max(spec.power_kw for spec in loads) + data.draw(st.sampled_from([0.5, 1.0, 2.0]))
    with patch.object(joint, "search_schedule", wraps=joint.search_schedule) as tried:
        fast = plan_joint(curve, loads, power_limit_kw=limit, base_load_kw=base)
    event("searched" if tried.called else "not searched (the loads' own optima fit)")
    with patch.object(joint, "SEARCH", False):
        plain = plan_joint(curve, loads, power_limit_kw=limit, base_load_kw=base)
    for ours, theirs in zip(fast, plain, strict=True):
        assert (ours.feasible, ours.reason, ours.start) == (theirs.feasible, theirs.reason, theirs.start)
        np.testing.assert_allclose(ours.power_kw, theirs.power_kw, atol=1e-6)
    expected = brute_joint(curve, loads, power_limit_kw=limit, base_load_kw=base, prices=exact.prices)
    placed = [plan for plan in fast if plan.reason not in (Reason.WINDOW_TOO_SHORT, Reason.NO_PRICES)]
    event("no schedule" if expected is None else f"{len(placed)} loads placed")
    if expected is not None:
        assert all(plan.feasible for plan in placed)
        assert sum(plan.cost for plan in placed) == pytest.approx(expected.cost, rel=1e-6, abs=1e-7)  # noisy prices
        starts = tuple(curve.index_of(plan.start) for plan in placed if plan.name.startswith("run"))
        assert starts == expected.starts


def _two_day_instance(seed: int) -> tuple[PriceCurve, list[LoadSpec], float]:
    """A 192-slot curve with a daily shape and noise, two to four runs and mostly an EV, under a fuse that binds."""
    rng = np.random.default_rng(seed)
    hours = np.arange(192) / 4
    daily = 0.18 + 0.06 * np.sin((hours % 24 - 9) / 24 * 2 * math.pi) + 0.08 * np.exp(-(((hours % 24) - 19) ** 2) / 4)
    curve = PriceCurve(start=T0, resolution=SLOT, prices=np.round(daily + rng.normal(0, 0.015, 192), 5), source="t")
    loads = []
    for number in range(int(rng.integers(2, 5))):
        first = int(rng.integers(0, 120))
        loads.append(
            LoadSpec(
                f"run{number}",
                power_kw=float(rng.choice([1.0, 1.5, 2.0, 2.2, 3.0, 3.5])),
                duration_min=int(rng.choice([45, 60, 90, 120, 150, 180, 240])),
                earliest_start=T0 + SLOT * first,
                deadline=T0 + SLOT * int(rng.integers(first + 24, 193)),
            )
        )
    if rng.random() < 0.8:
        first = int(rng.integers(0, 96))
        loads.append(
            LoadSpec(
                "ev",
                power_kw=float(rng.choice([7.4, 11.0])),
                energy_kwh=float(rng.integers(10, 41)),
                earliest_start=T0 + SLOT * first,
                deadline=T0 + SLOT * int(rng.integers(first + 48, 193)),
                contiguous=False,
            )
        )
    return curve, loads, max(spec.power_kw for spec in loads) + 0.5 + float(rng.choice([1.0, 2.0, 3.0, 4.0]))


def test_the_search_on_two_day_homes_gives_the_milp_paths_plans() -> None:
    """Benchmark-sized instances: the search's plans (and those after it gives up at once) are the MILP path's.

    The search must also finish on most of them (a search that always gave up would pass the first check).
    """
    finished = 0

    def counted(*args: object, **kwargs: object) -> object:
        nonlocal finished
        found = search(*args, **kwargs)
        finished += 1
        return found

    search = joint.search_schedule
    for seed in range(24):
        curve, loads, limit = _two_day_instance(seed)
        with patch.object(joint, "search_schedule", counted):
            fast = plan_joint(curve, loads, power_limit_kw=limit, base_load_kw=0.5)
        before = finished
        with (
            patch.object(joint, "search_schedule", counted),
            patch.object(joint_search, "MAX_WORK", 1),
            patch.object(joint, "QUICK_WORK", 1),
        ):
            given_up = plan_joint(curve, loads, power_limit_kw=limit, base_load_kw=0.5)
        assert finished == before
        with patch.object(joint, "SEARCH", False):
            plain = plan_joint(curve, loads, power_limit_kw=limit, base_load_kw=0.5)
        for ours in (fast, given_up):
            assert [p.start for p in ours] == [p.start for p in plain], seed
            assert [p.cost for p in ours] == pytest.approx([p.cost for p in plain], rel=1e-9, abs=1e-12)
            for mine, theirs in zip(ours, plain, strict=True):
                np.testing.assert_allclose(mine.power_kw, theirs.power_kw, atol=1e-6)
    assert finished >= 12, finished


def test_an_energy_load_with_no_room_in_its_window_is_refused_not_raised() -> None:
    """Every slot of the EV's window is full of base load: POWER_LIMIT, not a ValueError from an empty fill order."""
    curve = PriceCurve(start=T0, resolution=SLOT, prices=np.array([0.1, 0.2, 0.3, 0.4]), source="t")
    ev = LoadSpec("ev", power_kw=1.0, energy_kwh=0.25, earliest_start=T0, deadline=T0 + 2 * SLOT, contiguous=False)
    (plan,) = plan_joint(curve, [ev], power_limit_kw=3.0, base_load_kw=[5.0, 5.0, 0.0, 0.0])
    assert not plan.feasible and plan.reason is Reason.POWER_LIMIT and "'ev'" in plan.detail


def test_the_tie_stages_keep_the_milps_own_starts() -> None:
    """HiGHS leaves the EV a little short, so its plan costs less than the LP bound allows: its starts must stay
    candidates of the tie stages (they were pruned, and the stages raised on an empty set). Both paths agree."""
    curve = PriceCurve(start=T0, resolution=SLOT, prices=np.full(7, 0.3), source="t")
    end = T0 + 7 * SLOT
    loads = [
        LoadSpec("run0", power_kw=1.5, duration_min=45, earliest_start=T0, deadline=end),
        LoadSpec("run1", power_kw=0.5, duration_min=45, earliest_start=T0, deadline=end),
        LoadSpec("ev", power_kw=3.5, energy_kwh=2.0, earliest_start=T0 + SLOT, deadline=end, contiguous=False),
    ]
    base = [0.5, 1.0, 4.75, 0.0, 0.0, 0.0, 4.75]
    fast = plan_joint(curve, loads, power_limit_kw=3.75, base_load_kw=base)
    with patch.object(joint, "SEARCH", False):
        plain = plan_joint(curve, loads, power_limit_kw=3.75, base_load_kw=base)
    assert all(plan.feasible for plan in fast)
    assert [p.start for p in plain] == [p.start for p in fast]


def test_the_tie_stages_take_the_earliest_of_equal_schedules() -> None:
    """HiGHS's stage answer had a start at 0.99999993; rounded, it cost more than the tie tolerance allows and the
    stage was refused, leaving a later schedule. The MILP path now places the runs as early as brute force does."""
    curve = PriceCurve(
        start=T0,
        resolution=SLOT,
        prices=np.array([0.125, 0.3125, 0.1875, -0.015625, -0.140625, 0.328125, 0.40625]),
        source="t",
    )
    end = T0 + 7 * SLOT
    loads = [
        LoadSpec("run0", power_kw=1.5, duration_min=60, earliest_start=T0, deadline=end),
        LoadSpec("run1", power_kw=3.0, duration_min=45, earliest_start=T0, deadline=end),
        LoadSpec("run2", power_kw=1.5, duration_min=30, earliest_start=T0 + 2 * SLOT, deadline=end),
        LoadSpec("run3", power_kw=1.5, duration_min=15, earliest_start=T0 + SLOT, deadline=end),
        LoadSpec("ev", power_kw=3.5, energy_kwh=1.0, earliest_start=T0, deadline=end, contiguous=False),
    ]
    expected = brute_joint(curve, loads, power_limit_kw=4.0, base_load_kw=np.zeros(7))
    assert expected is not None and expected.starts == (3, 0, 3, 5)
    for search in (True, False):
        with patch.object(joint, "SEARCH", search):
            plans = plan_joint(curve, loads, power_limit_kw=4.0)
        assert tuple(curve.index_of(plan.start) for plan in plans[:4]) == expected.starts, search
