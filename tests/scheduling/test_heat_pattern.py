"""A heat pump's run pattern priced alone (``heat_pattern.priced_power``) and the whole home's plan in hand built on it
(``home_round.priced``): against brute force over every pattern, a per-slot LP, and the plain MILP."""

from __future__ import annotations

from dataclasses import replace
import itertools
import math
from types import SimpleNamespace

from hypothesis import HealthCheck, example, given, settings, strategies as st
import numpy as np
import pytest
from scipy.optimize import linprog

from custom_components.agentic_hems.scheduling import heat_pattern, home_round
from custom_components.agentic_hems.scheduling.heat_pattern import priced_power
from custom_components.agentic_hems.scheduling.home_build import Columns, build, cost_scale
from custom_components.agentic_hems.scheduling.home_heat import HeatColumns
from custom_components.agentic_hems.scheduling.highs import LIMITED, Result
from custom_components.agentic_hems.scheduling.home_solve import COST_SCALE, PLAN_GAP, solve
from custom_components.agentic_hems.scheduling.milp import MilpModel

from .conftest import EXACT_S, home_inputs
from .test_home_fast import _demo_like
from .test_home_heat import H, pump, runs_ok, simulate
from .test_home_warm import _home

dyadic = st.integers(-16, 40).map(lambda k: k / 64)
_PRICED = home_round.priced  # the spy below wraps it
_SOLVE = MilpModel.solve


def eighths(low: int, high: int) -> st.SearchStrategy[int]:
    """Integers from ``low`` to ``high``: eighths of the test's units (the test divides them by 8)."""
    return st.integers(low, high)


def _brute_force(hp, price: np.ndarray, end_value: float, levels: list[float]) -> tuple[float, np.ndarray | None]:
    """Least cost (price . P - end_value x T_n) over every power sequence of ``levels``; the widened band and the
    minimum run and off times checked directly. (inf, None) when none fits."""
    n = price.size
    low, high = hp.band(H, n)
    best, arg = math.inf, None
    for power in itertools.product([0.0, *levels], repeat=n):
        power = np.array(power)
        temp = simulate(hp, power)
        if np.any(temp[1:] < low - 1e-9) or np.any(temp[1:] > high + 1e-9) or not runs_ok(tuple(power > 0), hp):
            continue
        cost = float(price @ power) - end_value * temp[-1]
        if cost < best:
            best, arg = cost, power
    return best, arg


@pytest.mark.parametrize("min_kw", [2.0, 0.5])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), n=st.integers(3, 6))
def test_priced_power_with_fine_buckets_finds_the_brute_force_least_cost(data, n, min_kw: float) -> None:
    """With buckets far finer than any two temperatures apart, the dynamic programme is exact: its schedule keeps the
    band and the minimum times, and costs the least any schedule of its levels costs (fixed speed: on = 2 kW; variable:
    0.5, 1.25 or 2 kW); None exactly when no schedule fits."""
    price = np.array(data.draw(st.lists(dyadic, min_size=n, max_size=n)))
    end_value = data.draw(st.integers(0, 32)) / 64
    on_slots = data.draw(st.sampled_from([0, 1, 3]))
    hp = pump(
        n,
        min_kw=min_kw,
        cop=np.full(n, 4.0),
        capacity_kwh_per_k=4.0,
        initial_temp_c=data.draw(st.sampled_from([19.7, 20.0, 20.5])),
        min_run_slots=data.draw(st.integers(1, 3)),
        min_off_slots=data.draw(st.integers(1, 3)),
        initial_on_slots=on_slots,
        initial_off_slots=0 if on_slots else data.draw(st.integers(0, 2)),
        comfort_low_c=np.full(n, 19.6),
        comfort_high_c=np.full(n, 20.6),
    )
    levels = sorted({min_kw, (min_kw + 2.0) / 2, 2.0})
    expected, _ = _brute_force(hp, price, end_value, levels)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(heat_pattern, "BUCKETS", 10**9)
        power = priced_power(hp, H, lambda kw: price[:, None] * kw[None, :], end_value)
    assert (power is None) == math.isinf(expected)  # None exactly when brute force finds no schedule
    if power is None:
        return
    assert set(np.round(power, 9)) <= {0.0, *levels}
    temp = simulate(hp, power)
    low, high = hp.band(H, n)
    assert np.all(temp[1:] >= low - 1e-9) and np.all(temp[1:] <= high + 1e-9)
    assert runs_ok(tuple(power > 0), hp)
    assert float(price @ power) - end_value * temp[-1] == pytest.approx(expected, abs=1e-9)


def test_priced_power_at_its_own_buckets_keeps_the_band_and_the_minimum_times_over_two_days() -> None:
    """The benchmark's kind of fixed-speed heat pump (2 kW, runs and pauses >= 4 slots) over 192 slots of random
    prices: the schedule keeps the band and the minimum times, costs no more than a fixed 4-on, 5-off cycle that
    keeps the band too, and runs in the cheaper slots (its mean price is below the mean price of the slots it
    leaves)."""
    n = 192
    rng = np.random.default_rng(7)
    price = rng.uniform(0.0, 0.4, n)
    hp = pump(n, min_kw=2.0, ua_kw_per_k=0.15, capacity_kwh_per_k=8.0, cop=np.full(n, 3.0), initial_temp_c=20.5,
              ambient_c=np.full(n, 3.0), comfort_low_c=np.full(n, 19.5), comfort_high_c=np.full(n, 22.0),
              min_run_slots=4, min_off_slots=4)
    witness = np.array([t % 9 < 4 for t in range(n)]) * 2.0  # runs of 4 slots, pauses of 5: 20.5-21.0 °C
    assert 19.5 <= simulate(hp, witness)[1:].min() and simulate(hp, witness)[1:].max() <= 22.0
    power = priced_power(hp, H, lambda kw: price[:, None] * kw[None, :], 0.0)
    assert power is not None and float(price @ power) <= float(price @ witness)
    temp = simulate(hp, power)
    assert np.all(temp[1:] >= 19.5 - 1e-9) and np.all(temp[1:] <= 22.0 + 1e-9)
    assert runs_ok(tuple(power > 0), hp)
    assert set(np.round(power, 9)) == {0.0, 2.0}
    assert price[power > 0].mean() < price[power == 0].mean()


@settings(max_examples=200, deadline=None)
@given(
    rest=eighths(-64, 64), curtail=eighths(0, 48), fuse=eighths(0, 80), export=eighths(0, 48),
    price_in=eighths(-3, 5), price_out=eighths(-2, 4), kw=eighths(0, 24), movable=st.tuples(*[eighths(0, 24)] * 3),
)
@example(rest=-8, curtail=24, fuse=80, export=48, price_in=2, price_out=-1, kw=0, movable=(0, 0, 0))  # least at no flow
def test_slot_cost_is_the_least_cost_of_the_grid_and_curtailment_that_meet_the_fixed_demand(
    rest, curtail, fuse, export, price_in, price_out, kw, movable
) -> None:
    """One slot: the home's fixed demand is ``rest`` kW (negative: a surplus), PV can be curtailed by up to
    ``curtail``; the battery and the EV (``movable``: charge, discharge, EV kW in the LP's answer) do not count.
    The cost of the heat pump drawing ``kw`` is the least of two LPs (import only, export only: a binary keeps them
    apart where exporting pays more than importing costs), each solved by scipy; inf when neither is feasible.
    (Multiples of 1/8: no case lies within the cost's feasibility tolerance, ``TOL_KW``.)"""
    rest, curtail, fuse, export, price_in, price_out, kw = (v / 8 for v in (rest, curtail, fuse, export, price_in,
                                                                            price_out, kw))
    charge, discharge, ev = (v / 8 for v in movable)
    one = [np.array([k]) for k in range(8)]
    cols = Columns(one[0], one[1], one[2], [one[5]], [one[6]], [], [one[7]], {})
    heat = HeatColumns(np.array([3]), np.array([4]), None)
    inputs = SimpleNamespace(loads=[SimpleNamespace(slots=0, keys=np.array([0]))])
    objective = np.array([price_in, -price_out, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    upper = np.array([fuse, export, curtail, 3.0, 30.0, 3.0, 3.0, 3.0])
    grid = rest + charge - discharge + ev  # what the LP's answer imports (negative: exports), the pump off
    x = np.array([max(grid, 0.0), max(-grid, 0.0), 0.0, 0.0, 0.0, charge, discharge, ev])
    cost = home_round.slot_cost(inputs, cols, objective, upper, x=x, heat=heat, movable=False)
    got = float(cost(np.array([kw]))[0, 0])
    best = math.inf
    for side in ("import", "export"):
        bounds = [(0, fuse if side == "import" else 0), (0, export if side == "export" else 0), (0, curtail)]
        found = linprog([price_in, -price_out, 0.0], A_eq=[[1.0, -1.0, -1.0]], b_eq=[rest + kw], bounds=bounds)
        if found.status == 0:
            best = min(best, found.fun)
    if math.isinf(best):
        assert math.isinf(got)
    else:
        assert got == pytest.approx(best, abs=1e-7)


def _fixed_speed(seed: int) -> dict:
    """``_home(seed)`` with the benchmark's kind of heat pump: 2 kW, runs and pauses >= 4 slots, 19.5-22 °C."""
    home = _home(seed)
    hp = replace(home["heat_pumps"][0], min_run_slots=4, min_off_slots=4, ua_kw_per_k=0.15,
                 comfort_high_c=np.full(home["heat_pumps"][0].cop.size, 22.0))
    return {**home, "heat_pumps": [hp]}


@pytest.mark.parametrize(("kind", "seed", "within"), [(_fixed_speed, 3, 0.01), (_fixed_speed, 7, 0.01),
                                                      (_fixed_speed, 17, 0.01), (_demo_like, 5, 0.01)])
def test_the_priced_plan_in_hand_is_a_plan_of_the_model_near_the_least_cost(kind, seed: int, within: float) -> None:
    """Homes where the runs made long enough overheat the store, so the leaf takes the priced path: its LP's answer,
    with the direction binaries set to its flows, meets every row and bound with every binary whole, and costs at
    least the plain MILP's least cost and at most ``within`` of it more (measured: 0.06-0.5 %); the plan then
    costs the least cost."""
    inputs = home_inputs(kind(seed))
    taken = []

    def spy(*args, **kwargs):
        found = _PRICED(*args, **kwargs)
        taken.append(found)
        return found

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(home_round, "priced", spy)
        solution, note = solve(inputs, time_limit_s=EXACT_S)
    assert len(taken) == 1 and taken[0] is not None and taken[0].x is not None
    model, _ = build(inputs)
    objective = model.objective() * COST_SCALE / cost_scale(inputs)
    plain = model.solve(objective)
    assert plain.status == 0 and plain.fun is not None
    x = home_round.matched(solution.cols, np.asarray(taken[0].x))
    rows = model.constraints()
    assert np.all(rows.dot(x) >= rows.lo - 1e-6) and np.all(rows.dot(x) <= rows.hi + 1e-6)
    assert np.all(x >= np.concatenate(model.lower) - 1e-9) and np.all(x <= model.upper_bounds() + 1e-9)
    integers = model.integer_columns()
    assert np.allclose(x[integers], np.round(x[integers]), atol=1e-9)
    assert plain.fun - 1e-6 <= float(objective @ x) <= plain.fun + within * abs(plain.fun)
    assert not note
    assert float(objective @ solution.x) == pytest.approx(plain.fun, abs=PLAN_GAP + 1e-6)



def test_a_leaf_milp_cut_before_it_takes_its_start_leaves_the_priced_plan() -> None:
    """On a slow machine the bound can be spent before the leaf's MILP takes its start, and HiGHS then ends with no
    plan (simulated: every MILP given a start ends at its limit with none). The plan is then the priced plan in hand,
    marked time-limited, and no MILP runs without a plan in hand (one would go on to its first plan, for seconds)."""
    inputs = home_inputs(_fixed_speed(3))
    started = []

    def cut(self, objective, extra=None, **kwargs):
        if kwargs.get("relax") or extra:  # LPs and the tie stage's MILP (its own rows) run as they are
            return _SOLVE(self, objective, extra, **kwargs)
        started.append(kwargs.get("start") is not None)
        self.limited = True
        return Result(LIMITED, "time limit")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(MilpModel, "solve", cut)
        solution, note = solve(inputs, time_limit_s=EXACT_S)
    assert started and all(started)
    assert note.startswith("time bound of 10 s reached")
    model, _ = build(inputs)
    objective = model.objective() * COST_SCALE / cost_scale(inputs)
    plain = model.solve(objective)
    assert plain.fun is not None
    assert plain.fun - 1e-6 <= float(objective @ solution.x) <= plain.fun + 0.01 * abs(plain.fun)
